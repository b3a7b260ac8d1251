"""Context windows and token prices per model, for a report read from a store.

The prices are flower's one cost model (`flower._cost.prices`), re-exported here.

A store holds each reply's token usage but not its cost: the CLI reports the cost in its
`ResultMessage`, which is not a transcript line. The report therefore estimates the cost from the usage
with `flower._cost`, and always says so ("estimated").

Prices are US dollars per million tokens (see `flower._cost.prices` for where each row comes from). A model
that matches no row is priced like the CLI's default model and named in `Cost.unpriced`.

Windows: what the bundled CLI 2.1.332 reports (`rawMaxTokens` of `get_context_usage()`): 200,000 tokens for
Opus 4.5 and 4.6, the Sonnet and Haiku 4.x models (real sessions of Opus 4.5/4.6, Sonnet 4.5 and Haiku 4.5 ran
with 200K: one compacted at about 155K), and 1,000,000 for Opus 4.7 and 5.5, for any unknown name, and for a
name with the `[1m]` suffix. The report asks the CLI itself first (`flower.report._windows`).
"""

from __future__ import annotations

from .._cost.prices import PRICES, Price, price_for

__all__ = ["DEFAULT_WINDOW", "PRICES", "WINDOWS", "Price", "price_for", "window_for"]

DEFAULT_WINDOW = 1_000_000
"""The window the CLI reports for an unknown model name (measured with CLI 2.1.332)."""

WINDOWS: dict[str, int] = {
    # prefix of the model name -> window; the longest matching prefix wins
    "claude-opus-5": 1_000_000,
    "claude-opus-4-7": 1_000_000,
    "claude-opus-4": 200_000,  # Opus 4, 4.1, 4.5, 4.6
    "claude-sonnet-4": 200_000,
    "claude-haiku-4": 200_000,
    "claude-3": 200_000,
}
"""The context window by model-name prefix, when the CLI cannot be asked."""


def window_for(model: str) -> int:
    """The context window the CLI reports for `model`, from `WINDOWS` (a `[1m]` suffix means 1,000,000)."""
    if "[1m]" in model.lower():
        return 1_000_000
    base = model.split("[", 1)[0].strip().lower()
    matches = [prefix for prefix in WINDOWS if base.startswith(prefix)]
    return WINDOWS[max(matches, key=len)] if matches else DEFAULT_WINDOW
