"""Prices and prompt-cache rules per model: dollars per million tokens, the smallest cacheable prefix.

The rows marked *measured* are what the bundled CLI itself charges (read back from
`ResultMessage.total_cost_usd` for one million tokens of each kind: opus-5-5 $4 in, $20 out, $0.20 cache
read, $5 cache write; sonnet-4-5/4-6 $3, $15, $0.30, $3.75). The others are their family's list prices.
A write to the 5-minute cache costs 1.25x the input price, to the 1-hour cache 2x. A model that matches
no row is priced like the CLI's default model, and `price_for` says so.

The smallest cacheable prefix (tokens) is the API's per model: below it a breakpoint caches nothing and
the request is billed as plain input (Opus 5 512; Opus 4.8, Sonnet 4.x and 5, Opus 4/4.1 1,024; Opus 4.7
2,048; Opus 4.5/4.6 and Haiku 4.5 4,096; Haiku 3/3.5 2,048).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_MODEL", "PRICES", "TTL_1H", "TTL_5M", "Price", "price_for"]

TTL_5M = 300.0
"""Seconds a 5-minute cache entry lives after its last write or read (the CLI's `ephemeral` marks)."""
TTL_1H = 3_600.0
"""Seconds a 1-hour cache entry lives (`cache_control: {"ttl": "1h"}`)."""
DEFAULT_MODEL = "claude-opus-5-5"
"""The CLI's default model, whose price stands in for an unknown one."""


@dataclass(frozen=True, kw_only=True)
class Price:
    """Dollars per million tokens of each kind of usage, and the model's smallest cacheable prefix."""

    input: float
    """Uncached input."""
    output: float
    """Output (text, thinking and tool calls the model writes)."""
    cache_read: float
    """Input read from the prompt cache."""
    cache_creation: float
    """Input written to the 5-minute cache (1.25x `input`)."""
    cache_creation_1h: float = 0.0
    """Input written to the 1-hour cache (2x `input`)."""
    min_cacheable: int = 1_024
    """The smallest prefix (tokens) a cache breakpoint caches."""
    measured: bool = False
    """True when the bundled CLI was measured charging exactly this."""

    def cost(
        self, *, input: int, output: int, cache_read: int, cache_creation: int, cache_creation_1h: int = 0
    ) -> float:
        """The dollars for these token counts."""
        total = (
            input * self.input
            + output * self.output
            + cache_read * self.cache_read
            + cache_creation * self.cache_creation
            + cache_creation_1h * self.cache_creation_1h
        )
        return total / 1_000_000


def _family(
    input: float, output: float, *, min_cacheable: int, read: float = 0.1, measured: bool = False
) -> Price:
    return Price(
        input=input,
        output=output,
        cache_read=input * read,
        cache_creation=input * 1.25,
        cache_creation_1h=input * 2.0,
        min_cacheable=min_cacheable,
        measured=measured,
    )


PRICES: dict[str, Price] = {
    # prefix of the model name -> price; the longest matching prefix wins
    "claude-opus-5": _family(4.0, 20.0, read=0.05, min_cacheable=512, measured=True),  # the CLI's default
    "claude-opus-4-8": _family(5.0, 25.0, min_cacheable=1_024),
    "claude-opus-4-7": _family(5.0, 25.0, min_cacheable=2_048, measured=True),
    "claude-opus-4-6": _family(5.0, 25.0, min_cacheable=4_096),
    "claude-opus-4-5": _family(5.0, 25.0, min_cacheable=4_096),
    "claude-opus-4": _family(15.0, 75.0, min_cacheable=1_024),  # Opus 4 and 4.1
    "claude-sonnet-5": _family(3.0, 15.0, min_cacheable=1_024),
    "claude-sonnet-4-6": _family(3.0, 15.0, min_cacheable=1_024, measured=True),
    "claude-sonnet-4-5": _family(3.0, 15.0, min_cacheable=1_024, measured=True),
    "claude-sonnet-4": _family(3.0, 15.0, min_cacheable=1_024),
    "claude-3-7-sonnet": _family(3.0, 15.0, min_cacheable=1_024),
    "claude-haiku-4-5": _family(1.0, 5.0, min_cacheable=4_096, measured=True),
    "claude-3-5-haiku": _family(0.8, 4.0, min_cacheable=2_048),
}
"""The price table, by model-name prefix."""


def _base(model: str) -> str:
    return model.split("[", 1)[0].strip().lower()


def price_for(model: str) -> tuple[Price, bool]:
    """The price of `model` and whether the table knows it (else: the CLI's default model's price)."""
    base = _base(model)
    matches = [prefix for prefix in PRICES if base.startswith(prefix)]
    if not matches:
        return PRICES["claude-opus-5"], False
    return PRICES[max(matches, key=len)], True
