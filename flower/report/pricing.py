"""Context windows and token prices per model, for a report read from a store.

A store holds each reply's token usage but not its cost: the CLI reports the cost in its
`ResultMessage`, which is not a transcript line. The report therefore estimates the cost from the usage
with the table below, and always says so ("estimated").

Prices are US dollars per million tokens. The rows marked *measured* are what the bundled CLI 2.1.327
itself charges (read back from `ResultMessage.total_cost_usd` for one million tokens of each kind); the
others are the public list prices of their family. A model that matches no row is priced like the CLI's
default model and named in `Cost.unpriced`.

Windows: what the bundled CLI 2.1.332 reports (`rawMaxTokens` of `get_context_usage()`): 200,000 tokens for
Opus 4.5 and 4.6, the Sonnet and Haiku 4.x models (real sessions of Opus 4.5/4.6, Sonnet 4.5 and Haiku 4.5 ran
with 200K: one compacted at about 155K), and 1,000,000 for Opus 4.7 and 5.5, for any unknown name, and for a
name with the `[1m]` suffix. The report asks the CLI itself first (`flower.report.windows`).
"""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True, kw_only=True)
class Price:
    """Dollars per million tokens of each kind of usage."""

    input: float
    output: float
    cache_read: float
    cache_creation: float
    measured: bool = False
    """True when the bundled CLI was measured charging exactly this."""

    def cost(self, *, input: int, output: int, cache_read: int, cache_creation: int) -> float:
        """The dollars for these token counts."""
        total = (
            input * self.input
            + output * self.output
            + cache_read * self.cache_read
            + cache_creation * self.cache_creation
        )
        return total / 1_000_000


def _family(input: float, output: float, *, read: float = 0.1, measured: bool = False) -> Price:
    return Price(
        input=input, output=output, cache_read=input * read, cache_creation=input * 1.25, measured=measured
    )


PRICES: dict[str, Price] = {
    # prefix of the model name -> price; the longest matching prefix wins
    "claude-opus-5": _family(4.0, 20.0, read=0.05, measured=True),  # claude-opus-5-5, the CLI's default
    "claude-opus-4-7": _family(5.0, 25.0, measured=True),
    "claude-opus-4-6": _family(5.0, 25.0),
    "claude-opus-4-5": _family(5.0, 25.0),
    "claude-opus-4": _family(15.0, 75.0),  # Opus 4 and 4.1
    "claude-sonnet-4-6": _family(3.0, 15.0, measured=True),
    "claude-sonnet-4-5": _family(3.0, 15.0, measured=True),
    "claude-sonnet-4": _family(3.0, 15.0),
    "claude-3-7-sonnet": _family(3.0, 15.0),
    "claude-haiku-4-5": _family(1.0, 5.0, measured=True),
    "claude-3-5-haiku": _family(0.8, 4.0),
}
"""The price table, by model-name prefix."""

_DEFAULT_PRICE = PRICES["claude-opus-5"]


def _base(model: str) -> str:
    return model.split("[", 1)[0].strip().lower()


def price_for(model: str) -> tuple[Price, bool]:
    """The price of `model` and whether the table knows it (else: the CLI's default model's price)."""
    base = _base(model)
    matches = [prefix for prefix in PRICES if base.startswith(prefix)]
    if not matches:
        return _DEFAULT_PRICE, False
    return PRICES[max(matches, key=len)], True


def window_for(model: str) -> int:
    """The context window the CLI reports for `model`, from `WINDOWS` (a `[1m]` suffix means 1,000,000)."""
    if "[1m]" in model.lower():
        return 1_000_000
    base = _base(model)
    matches = [prefix for prefix in WINDOWS if base.startswith(prefix)]
    return WINDOWS[max(matches, key=len)] if matches else DEFAULT_WINDOW
