"""An Anthropic-style prompt-cache cost model (peers.md §4.1), pure.

Each request is a sequence of blocks (system blocks, the tool list, every content block of every
message). Its cached prefix is the longest run of leading blocks that an earlier request, still alive in
the cache, also started with (block granularity; the cache is shared by every caller, keyed by content).
A prefix shorter than `min_tokens` is not cached. The rest of the request is written to the cache (the
CLI marks the end of each request for caching), or billed uncached when the request is too small to
cache at all. An entry lives `ttl` seconds after it was last written or read.

Cost units = uncached x 1.0 + written x `write` (1.25 for the 5-minute cache, 2.0 for the 1-hour one)
+ read x 0.1, following Anthropic's price ratios. Tokens are chars / 4 throughout.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MIN_TOKENS = 1_024
TTL_5M = 300.0
TTL_1H = 3_600.0


@dataclass(frozen=True)
class Block:
    """One block of a request: a content key (any hashable; equal keys = equal content) and its tokens."""

    key: int
    tokens: int


@dataclass(frozen=True)
class Cost:
    """What one request costs under the model."""

    tokens: int
    cached: int
    written: int
    uncached: int
    units: float


def tokens_of(chars: int) -> int:
    """The token estimate used everywhere in the suite: chars / 4, rounded up."""
    return (chars + 3) // 4


def costs(
    requests: Sequence[tuple[float, Sequence[Block]]],
    *,
    ttl: float = TTL_5M,
    write: float = 1.25,
    read: float = 0.1,
    min_tokens: int = MIN_TOKENS,
) -> list[Cost]:
    """The cost of each request, given as (time in seconds, blocks), in the order they were sent."""
    alive: dict[int, float] = {}  # prefix key -> expiry time
    out: list[Cost] = []
    for when, blocks in requests:
        prefix_keys: list[int] = []
        running = 0
        for block in blocks:
            running = hash((running, block.key))
            prefix_keys.append(running)
        total = sum(b.tokens for b in blocks)
        hit = 0
        cumulative = 0
        for block, key in zip(blocks, prefix_keys, strict=True):
            cumulative += block.tokens
            if alive.get(key, -1.0) >= when:
                hit = cumulative
        cached = hit if hit >= min_tokens else 0
        if total < min_tokens:
            written, uncached = 0, total - cached
        else:
            written, uncached = total - cached, 0
        for key in prefix_keys:
            alive[key] = when + ttl
        out.append(Cost(total, cached, written, uncached, uncached + written * write + cached * read))
    return out


def breaks(
    sizes: Sequence[int], cached: Sequence[int], times: Sequence[float], *, ttl: float = TTL_5M
) -> list[int]:
    """Cache-breaking rewrites of one caller's stream: (previous request tokens - cached prefix) for each
    request that did not reuse the whole previous request although it was still in the cache."""
    out: list[int] = []
    for i in range(1, len(sizes)):
        if times[i] - times[i - 1] <= ttl and cached[i] < sizes[i - 1]:
            out.append(sizes[i - 1] - cached[i])
    return out
