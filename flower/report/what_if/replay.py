"""A replay of recorded requests with parts of their context removed (or added), priced by the cache marks
the requests were recorded with.

A transcript holds, for every request of a thread (the main thread, or one subagent), the usage its reply
reported: uncached input, cache reads, 5-minute and 1-hour cache writes, output. A replay keeps every
request and its output, and removes `Saving`s from its context: a tool output made shorter from the
request that first carried it, a history rewritten at a resume. What a removed part would have cost
depends on where it sat: a request reads its prefix from the cache up to `cache_read` tokens and writes (or
sends uncached) the rest. So each saving has a place in the context (`at`, `span`, in the recorded
request's own tokens): the share of it that lay within the read prefix comes off the reads, the rest off
the writes (5-minute and 1-hour in their recorded proportion), then off the uncached input. Where the cache
was cold, the recorded read prefix is short and the saving comes off the writes, as it would have. The
requests' model prices them, with `flower.cost`.

Characters become tokens at the session's own rate (`tokens_per_char`): the median, over the requests that
added at least `CALIBRATION_CHARS` characters of tool output to their thread, of the context tokens they
added per character, within `RATE_BOUNDS`, else `flower.cost.tokens_of`'s 1/4.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..._util.content import text_of, tool_results
from ...usage import TokenUsage
from .. import metrics as m

__all__ = [
    "CALIBRATION_CHARS",
    "DEFAULT_RATE",
    "RATE_BOUNDS",
    "Request",
    "Saving",
    "Thread",
    "rate_samples",
    "replayed",
    "thread_of",
    "tokens_per_char",
]

DEFAULT_RATE: Final = 0.25
"""Tokens per character when a session shows too few requests to measure its own (flower's `tokens_of`)."""
RATE_BOUNDS: Final = (0.15, 0.5)
"""The rates a session's own measurement is taken within; outside, `DEFAULT_RATE` is used."""
CALIBRATION_CHARS: Final = 2_000
"""Tool-output characters a request must add to its thread to measure the rate on it."""
_SAMPLES: Final = 3


@dataclass(frozen=True)
class Request:
    """One recorded request of a thread: the reply it got, where that reply starts, what it cost."""

    entry: int
    """Index of the reply's first entry in the thread's transcript."""
    usage: TokenUsage
    model: str
    blocks: tuple[Mapping[str, Any], ...]
    mid_stream: bool = False
    """The output was recorded mid-stream and counted from the content (`metrics.Message.mid_stream`)."""


@dataclass(frozen=True)
class Thread:
    """A transcript's requests, in order."""

    name: str
    """`main`, or the subagent's subpath."""
    entries: Sequence[Mapping[str, Any]]
    requests: tuple[Request, ...]

    def first_after(self, index: int) -> int:
        """The first request whose reply comes after entry `index` (`len(requests)` when none)."""
        for number, request in enumerate(self.requests):
            if request.entry > index:
                return number
        return len(self.requests)

    def end_of(self, request: int) -> int:
        """The token position at which what follows request `request`'s reply starts: its context and its
        output (0 before the first request)."""
        if request < 0 or not self.requests:
            return 0
        usage = self.requests[min(request, len(self.requests) - 1)].usage
        return usage.context + usage.output


@dataclass(frozen=True)
class Saving:
    """Tokens taken out of the context of requests `start` to `end - 1`: spread over `span` tokens from
    position `at` (a negative `tokens` adds them)."""

    start: int
    end: int
    at: float
    span: float
    tokens: float


def thread_of(name: str, entries: Sequence[Mapping[str, Any]]) -> Thread:
    """The requests of one transcript: its model replies (`metrics.turns`), each with where it starts."""
    firsts: dict[str, int] = {}
    for index, entry in enumerate(entries):
        if entry.get("type") != "assistant" or not isinstance(entry.get("message"), Mapping):
            continue
        message = entry["message"]
        key = str(message.get("id") or entry.get("uuid") or f"#{index}")
        firsts.setdefault(key, index)
    requests = tuple(
        Request(firsts[reply.id], reply.usage, reply.model, reply.blocks, reply.mid_stream)
        for reply in m.turns(entries)
    )
    return Thread(name, entries, requests)


def _added_output(entries: Sequence[Mapping[str, Any]], start: int, end: int) -> int:
    return sum(
        len(text_of(block.get("content"))) for entry in entries[start:end] for block in tool_results(entry)
    )


def _reply_chars(blocks: Sequence[Mapping[str, Any]]) -> int:
    return sum(m.block_chars(block) for block in blocks if block.get("type") != "thinking")


def rate_samples(threads: Sequence[Thread]) -> list[float]:
    """Each measurable request's context tokens added per character: over the requests that added at
    least `CALIBRATION_CHARS` characters of tool output to their thread, the tokens their context grew by
    (their `usage`) over the characters added (the tool output and the previous reply, thinking left out)."""
    rates = []
    for thread in threads:
        for number in range(1, len(thread.requests)):
            before, after = thread.requests[number - 1], thread.requests[number]
            added = _added_output(thread.entries, before.entry, after.entry)
            if added < CALIBRATION_CHARS:
                continue
            grew = after.usage.context - before.usage.context
            chars = added + _reply_chars(before.blocks)
            if grew > 0:
                rates.append(grew / chars)
    return rates


def tokens_per_char(threads: Sequence[Thread]) -> float:
    """The session's tokens per character of tool output (see the module's docstring)."""
    rates = rate_samples(threads)
    if len(rates) < _SAMPLES:
        return DEFAULT_RATE
    rate = statistics.median(rates)
    return rate if RATE_BOUNDS[0] <= rate <= RATE_BOUNDS[1] else DEFAULT_RATE


def _shrunk(usage: TokenUsage, read: float, rest: float) -> TokenUsage:
    """`usage` with `read` tokens fewer cache reads and `rest` fewer writes (then uncached input); negative
    amounts add them."""
    cache_read = max(0, round(usage.cache_read - read))
    five, hour, plain = usage.cache_creation, usage.cache_creation_1h, usage.input
    writes = five + hour
    if rest >= 0:
        from_writes = min(rest, writes)
        share = five / writes if writes else 1.0
        five = max(0, round(five - from_writes * share))
        hour = max(0, round(hour - from_writes * (1 - share)))
        plain = max(0, round(plain - (rest - from_writes)))
    elif writes:
        share = five / writes
        five, hour = round(five - rest * share), round(hour - rest * (1 - share))
    else:
        plain = round(plain - rest)
    return TokenUsage(
        input=plain, cache_read=cache_read, cache_creation=five, cache_creation_1h=hour, output=usage.output
    )


def replayed(thread: Thread, savings: Sequence[Saving]) -> list[TokenUsage]:
    """Each request's usage with `savings` taken out of its context, by the recorded cache marks."""
    out = []
    for number, request in enumerate(thread.requests):
        prefix = request.usage.cache_read
        read = rest = 0.0
        for saving in savings:
            if not saving.start <= number < saving.end:
                continue
            if saving.span > 0:
                inside = max(0.0, min(saving.at + saving.span, prefix) - saving.at) / saving.span
            else:
                inside = 1.0 if saving.at < prefix else 0.0
            read += saving.tokens * inside
            rest += saving.tokens * (1 - inside)
        out.append(_shrunk(request.usage, read, rest) if read or rest else request.usage)
    return out
