"""One cost model for every number flower prints in dollars: the benchmarks, the demo and `flower report`.

- `prices`: dollars per million tokens per model (input, output, cache read, 5-minute and 1-hour cache
  writes) and each model's smallest cacheable prefix;
- `cache`: the API's prompt cache, simulated over request bodies (tools, system, messages in that order;
  the CLI's own cache breakpoints; a 20-block lookback; the TTL; the billing block kept or ignored);
- `breakdown`: dollars from usage records, split into input, output, cache reads and writes.

Example::

    from flower._cost import PromptCache, price

    cache = PromptCache()
    usages = [cache.send(body, at=seconds, output=out) for body, seconds, out in requests]
    cost = price(usages, model="claude-sonnet-4-6")
    print(f"${cost.total:.2f} (output ${cost.output:.2f}, cache writes ${cost.cache_write:.2f})")

Usage records are `TokenUsage`, the type a step's `StepResult.usage` and the economy report use too.

Light on purpose (the standard library and that one type): the report, the runtime and the test harness
import it.
"""

from __future__ import annotations

from .._usage import TokenUsage
from .breakdown import CostBreakdown, UsageLike, estimate, price
from .cache import (
    BILLING_PREFIX,
    LOOKBACK,
    Block,
    PromptCache,
    blocks_of,
    simulate,
    tokens_of,
    without_marks,
)
from .prices import DEFAULT_MODEL, PRICES, TTL_1H, TTL_5M, Price, price_for

__all__ = [
    "BILLING_PREFIX",
    "DEFAULT_MODEL",
    "LOOKBACK",
    "PRICES",
    "TTL_1H",
    "TTL_5M",
    "Block",
    "CostBreakdown",
    "Price",
    "PromptCache",
    "TokenUsage",
    "UsageLike",
    "blocks_of",
    "estimate",
    "price",
    "price_for",
    "simulate",
    "tokens_of",
    "without_marks",
]
