"""Context windows and token prices per model, for a report read from a store.

The prices are flower's one cost model (`flower.cost.prices`), re-exported here.

A store holds each reply's token usage but not its cost: the CLI reports the cost in its
`ResultMessage`, which is not a transcript line. The report therefore estimates the cost from the usage
with `flower.cost`, and always says so ("estimated").

Prices are US dollars per million tokens (see `flower.cost.prices` for where each row comes from). A model
that matches no row is priced like the CLI's default model and named in `Cost.unpriced`.

Windows (facts §5): the CLI reports 200,000 tokens for the Sonnet and Haiku 4.x models and 1,000,000 for
Opus 4.7 and 5.5, for any unknown name, and for a name with the `[1m]` suffix.
"""

from __future__ import annotations

from ..cost.prices import PRICES, Price, price_for

__all__ = ["DEFAULT_WINDOW", "PRICES", "Price", "price_for", "window_for"]

DEFAULT_WINDOW = 1_000_000
"""The window the CLI reports for an unknown model name (facts §5)."""

_WINDOWS_200K = ("claude-sonnet-4", "claude-haiku-4", "claude-3")


def window_for(model: str) -> int:
    """The context window the CLI reports for `model` (a `[1m]` suffix means 1,000,000)."""
    if "[1m]" in model.lower():
        return 1_000_000
    base = model.split("[", 1)[0].strip().lower()
    return 200_000 if base.startswith(_WINDOWS_200K) else DEFAULT_WINDOW
