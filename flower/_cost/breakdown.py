"""Dollars from token usage: one breakdown (input, output, cache reads, cache writes, total) per run.

`price()` takes usage records with the API's counts as attributes (`input`, `cache_read`,
`cache_creation`, `output`; `cache_creation_1h` when present): a `TokenUsage`, whether from `PromptCache`,
the report reading a store or a `StepResult`, or any record of your own with those attributes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from .cache import Billing, PromptCache
from .prices import price_for

__all__ = ["CostBreakdown", "UsageLike", "estimate", "price"]


class UsageLike(Protocol):
    """Token counts of one reply (or a sum of replies), as the API reports them."""

    @property
    def input(self) -> int: ...
    @property
    def cache_read(self) -> int: ...
    @property
    def cache_creation(self) -> int: ...
    @property
    def output(self) -> int: ...


@dataclass(frozen=True, kw_only=True)
class CostBreakdown:
    """Tokens and dollars of each kind of usage, over some requests.

    Example::

        cost = price(usages, model="claude-sonnet-4-6")
        cost.total, cost.output, cost.cache_write_tokens
    """

    requests: int = 0
    """Usage records priced (one per API request)."""
    input_tokens: int = 0
    """Uncached input tokens."""
    cache_read_tokens: int = 0
    """Input tokens read from the cache."""
    cache_write_tokens: int = 0
    """Input tokens written to the cache (5-minute and 1-hour)."""
    output_tokens: int = 0
    """Output tokens."""
    input: float = 0.0
    """Dollars of uncached input."""
    cache_read: float = 0.0
    """Dollars of cache reads."""
    cache_write: float = 0.0
    """Dollars of cache writes."""
    output: float = 0.0
    """Dollars of output."""
    unpriced: tuple[str, ...] = ()
    """Models the price table does not know (priced like the CLI's default model)."""

    @property
    def total(self) -> float:
        """Every kind together, in dollars."""
        return self.input + self.cache_read + self.cache_write + self.output

    @property
    def input_total(self) -> float:
        """Input of every kind (uncached, cache reads and writes), in dollars."""
        return self.input + self.cache_read + self.cache_write

    def __add__(self, other: CostBreakdown) -> CostBreakdown:
        return CostBreakdown(
            requests=self.requests + other.requests,
            input_tokens=self.input_tokens + other.input_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            input=self.input + other.input,
            cache_read=self.cache_read + other.cache_read,
            cache_write=self.cache_write + other.cache_write,
            output=self.output + other.output,
            unpriced=tuple(dict.fromkeys((*self.unpriced, *other.unpriced))),
        )


def price(usages: Iterable[UsageLike], *, model: str) -> CostBreakdown:
    """The cost of these usage records of `model` (the price table's row, or the CLI default's)."""
    row, known = price_for(model)
    out = CostBreakdown(unpriced=() if known else (model,))
    for usage in usages:
        one_hour = int(getattr(usage, "cache_creation_1h", 0) or 0)
        out += CostBreakdown(
            requests=1,
            input_tokens=usage.input,
            cache_read_tokens=usage.cache_read,
            cache_write_tokens=usage.cache_creation + one_hour,
            output_tokens=usage.output,
            input=usage.input * row.input / 1e6,
            cache_read=usage.cache_read * row.cache_read / 1e6,
            cache_write=(usage.cache_creation * row.cache_creation + one_hour * row.cache_creation_1h) / 1e6,
            output=usage.output * row.output / 1e6,
        )
    return out


def estimate(
    requests: Iterable[tuple[Mapping[str, Any], float, int]],
    *,
    model: str | None = None,
    ttl: float | None = None,
    billing: Billing = "as_sent",
) -> CostBreakdown:
    """The cost of a run from its requests: `(body, sent at in seconds, output tokens)`, in order.

    The bodies go through one `PromptCache` (every agent of a run shares it, as they share the API's
    cache); each request is priced at its own model's row (`model` overrides them).
    """
    cache = PromptCache(model=model, ttl=ttl, billing=billing)
    out = CostBreakdown()
    for body, at, output in requests:
        name = model or str(body.get("model") or "")
        out += price([cache.send(body, at=at, output=output)], model=name)
    return out
