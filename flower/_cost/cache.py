"""The API's prompt cache, simulated: what each request of a run reads, writes and pays as plain input.

The rules it follows (the Messages API's prompt caching, and what the CLI sends):
- a request is a sequence of blocks in the order the API reads them: **tools, system, messages** (each
  tool definition, each system block, each content block of each message is one block);
- the cache is keyed by the prefix: a block's key is its content (its `cache_control` mark removed),
  a prefix's key is the chain of its blocks' keys, and the model's name;
- entries are written only at **breakpoints**, the blocks that carry `cache_control` (the CLI marks its
  last system block and the last block of the last message; a subagent's request also its prompt
  block), when the prefix up to there has at least the model's `min_cacheable` tokens;
- a breakpoint reads the longest prefix still alive that ends at most `lookback` (20) blocks before it;
- an entry lives `ttl` seconds (5 minutes; 1 hour for a `"ttl": "1h"` mark) after its last write or read;
- an entry can be read only once the response of the request that wrote it has begun (the API's rule for
  concurrent requests): requests sent together, such as parallel workers' first requests, each write the
  prefix they share. `ready_at` says when that is; by default at once, as when each request is sent after
  the previous one's reply;
- usage: `cache_read` = the prefix read, `cache_creation` = from there to the last breakpoint, `input`
  = what follows the last breakpoint (and everything when nothing could be cached); a request whose marks
  ask for different lifetimes (the CLI's 1-hour main thread with `CLAUDE_CODE_MESSAGES_PROMPT_CACHE_TTL=5m`)
  has each written segment, from one mark to the next, billed at its own mark's TTL
  (`cache_creation_1h` for the 1-hour ones).

The CLI's billing block (`system[0]`, `x-anthropic-billing-header: cc_version=…; cc_entrypoint=…;`) sits
before the system breakpoint and its three hex digits follow the conversation's first prompt, so two
conversations that start differently never share the tools+system prefix *if* the API keys the cache on
it. Whether it does is not documented: `billing="ignored"` drops the block, `"as_sent"` keeps it.

Tokens are estimated as characters / 4 (rounded up) of each block's JSON: no tokenizer runs offline.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .._usage import TokenUsage
from .prices import TTL_1H, TTL_5M, price_for

__all__ = [
    "BILLING_PREFIX",
    "LOOKBACK",
    "Block",
    "PromptCache",
    "blocks_of",
    "simulate",
    "tokens_of",
    "without_marks",
]

BILLING_PREFIX = "x-anthropic-billing-header:"
"""How the CLI's per-conversation billing block starts."""
LOOKBACK = 20
"""Blocks before a breakpoint at which the API still looks for a cached prefix."""

Billing = Literal["as_sent", "ignored"]
_NONE = (-1.0, 0.0, float("inf"))
"""An entry never written: expired, and readable by no one."""


def tokens_of(chars: int) -> int:
    """The token estimate used throughout: characters / 4, rounded up."""
    return (chars + 3) // 4


@dataclass(frozen=True)
class Block:
    """One block of a request: a content key (equal keys, equal content), its tokens, its cache mark."""

    key: int
    tokens: int
    breakpoint: float | None = None
    """The TTL (seconds) of its `cache_control` mark, or None when it carries none."""
    role: str = ""
    """`tools`, `system`, or the role of the message it belongs to."""
    message: int = -1
    """Index of its message in `messages` (-1 for tools and system)."""


def without_marks(value: Any) -> Any:
    """A copy of a JSON value without its `cache_control` marks: the CLI moves them from one request to
    the next, and they are not content (the cache keys on the content)."""
    if isinstance(value, dict):
        return {k: without_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_marks(v) for v in value]
    return value


def _mark(value: Any) -> float | None:
    mark = value.get("cache_control") if isinstance(value, dict) else None
    if not isinstance(mark, dict):
        return None
    return TTL_1H if mark.get("ttl") == "1h" else TTL_5M


def _block(value: Any, role: str, message: int = -1) -> Block:
    text = json.dumps(without_marks(value), sort_keys=True, ensure_ascii=False)
    return Block(hash((role, text)), tokens_of(len(text)), _mark(value), role, message)


def blocks_of(body: Mapping[str, Any], *, billing: Billing = "as_sent") -> list[Block]:
    """The blocks of a Messages API request body, in the API's order: tools, system, messages."""
    out = [_block(tool, "tools") for tool in body.get("tools") or [] if isinstance(tool, dict)]
    system = body.get("system") or []
    for item in [{"type": "text", "text": system}] if isinstance(system, str) else system:
        if billing == "ignored" and str(item.get("text", "")).startswith(BILLING_PREFIX):
            continue
        out.append(_block(item, "system"))
    for index, message in enumerate(body.get("messages") or []):
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        items = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        role = str(message.get("role"))
        out += [_block(item, role, index) for item in items if isinstance(item, dict)]
    return out


class PromptCache:
    """A prompt cache shared by every request sent to it, in the order they are sent.

    Example::

        cache = PromptCache()
        first = cache.send(body_1, at=0.0)        # TokenUsage(cache_creation=..., ...)
        second = cache.send(body_2, at=20.0)      # reads what body_1 wrote, writes the rest

    `ttl` overrides every mark's lifetime (e.g. `TTL_1H` to price a 1-hour cache); `model` overrides each
    body's `model` (whose `min_cacheable` applies); `billing` says whether the CLI's billing block is
    part of the cache key.
    """

    def __init__(
        self,
        *,
        model: str | None = None,
        ttl: float | None = None,
        billing: Billing = "as_sent",
        lookback: int = LOOKBACK,
    ) -> None:
        self.model = model
        self.ttl = ttl
        self.billing: Billing = billing
        self.lookback = lookback
        self._alive: dict[int, tuple[float, float, float]] = {}  # prefix key -> (expiry, ttl, readable from)

    def send(
        self, body: Mapping[str, Any], *, at: float, output: int = 0, ready_at: float | None = None
    ) -> TokenUsage:
        """The usage of one request body sent at `at` seconds (any clock that only moves forward).

        `ready_at`: when its response begins, from which on other requests can read what it writes
        (None: at once). A request sent before then reads none of it and writes its own."""
        model = self.model or str(body.get("model") or "")
        blocks = blocks_of(body, billing=self.billing)
        return self.send_blocks(blocks, at=at, model=model, output=output, ready_at=ready_at)

    def send_blocks(
        self,
        blocks: Sequence[Block],
        *,
        at: float,
        model: str,
        output: int = 0,
        ready_at: float | None = None,
    ) -> TokenUsage:
        """`send()` for blocks already cut (a caller may add its own, e.g. a simulated residue)."""
        ready = at if ready_at is None else max(at, ready_at)
        minimum = price_for(model)[0].min_cacheable
        keys: list[int] = []
        cumulative: list[int] = []
        running, total = hash(model), 0
        for block in blocks:
            running = hash((running, block.key))
            total += block.tokens
            keys.append(running)
            cumulative.append(total)
        marks = [i for i, block in enumerate(blocks) if block.breakpoint is not None]
        hit, hit_at = 0, -1
        for mark in marks:
            for position in range(mark, max(-1, mark - self.lookback), -1):
                expiry, _, readable = self._alive.get(keys[position], _NONE)
                if expiry >= at and readable <= at:
                    if cumulative[position] > hit:
                        hit, hit_at = cumulative[position], position
                    break
        if hit_at >= 0:  # a read refreshes the entry
            _, ttl, readable = self._alive[keys[hit_at]]
            self._alive[keys[hit_at]] = (at + ttl, ttl, readable)
        five = hour = 0
        done = hit
        for mark in marks:  # each segment is billed at its own mark's TTL, as the API bills it
            if cumulative[mark] >= minimum:
                ttl = self._ttl(blocks[mark].breakpoint or TTL_5M)
                expiry, _, readable = self._alive.get(keys[mark], _NONE)
                readable = min(readable, ready) if expiry >= at else ready  # the first writer's, if alive
                self._alive[keys[mark]] = (max(expiry, at + ttl), ttl, readable)
                segment = max(0, cumulative[mark] - done)
                done = max(done, cumulative[mark])
                if ttl > TTL_5M:
                    hour += segment
                else:
                    five += segment
        plain = total - hit - five - hour
        return TokenUsage(
            input=plain, cache_read=hit, cache_creation=five, cache_creation_1h=hour, output=output
        )

    def _ttl(self, marked: float) -> float:
        return self.ttl if self.ttl is not None else marked


def simulate(
    requests: Iterable[tuple[Mapping[str, Any], float, int]],
    *,
    model: str | None = None,
    ttl: float | None = None,
    billing: Billing = "as_sent",
) -> list[TokenUsage]:
    """The usage of each `(body, sent at, output tokens)` in order, through one fresh `PromptCache`."""
    cache = PromptCache(model=model, ttl=ttl, billing=billing)
    return [cache.send(body, at=at, output=output) for body, at, output in requests]
