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
requests' model prices them, with `flower._cost`.

Characters become tokens at the session's own rate (`session_rate`, `tokens_per_char`): the median, over
the requests that added at least `CALIBRATION_CHARS` characters of tool output to their thread, of the
context tokens they added per character, within `RATE_BOUNDS`. A session with no such request, or whose
median falls outside the bounds, takes its model's typical rate (`MODEL_RATES`, measured the same way on
real transcripts); one measured on fewer than three keeps its own; each says so (`Rate.fallback`).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..._usage import TokenUsage
from ..._util.content import text_of, tool_results
from .. import _metrics as m

__all__ = [
    "CALIBRATION_CHARS",
    "DEFAULT_RATE",
    "MODEL_RATES",
    "RATE_BOUNDS",
    "THINKING_SHARE",
    "Rate",
    "Request",
    "Saving",
    "Thread",
    "family",
    "family_rates",
    "model_rate",
    "rate_samples",
    "replayed",
    "session_rate",
    "thread_of",
    "tokens_per_char",
]

DEFAULT_RATE: Final = 0.25
"""flower's `tokens_of` rule (4 characters a token): real sessions measure more (`MODEL_RATES`)."""
RATE_BOUNDS: Final = (0.15, 0.65)
"""The rates a session's own measurement is taken within (current models measure 0.45-0.55); outside,
its model's typical rate is used (`model_rate`)."""
MODEL_RATES: Final[dict[str, float]] = {
    # prefix of the model name -> tokens per character; the longest matching prefix wins. The first four
    # are `family_rates` over real sessions of CLI 2.0.74-2.1.42 (requests, sessions): Opus 4.5 0.360
    # (50, 4), Opus 4.6 0.349 (56, 5), Sonnet 4.5 0.330 (15, 2), Haiku 4.5 0.420 (14, 2).
    "claude-opus-4-5": 0.36,
    "claude-opus-4-6": 0.35,
    "claude-sonnet-4-5": 0.33,
    "claude-haiku-4-5": 0.42,
    "claude-opus-4": 0.36,  # Opus 4 and 4.1: as Opus 4.5
    "claude-sonnet-4": 0.33,
    "claude-opus-4-7": 0.5,  # the newest models, Opus 4.7 and later, Sonnet 4.6, claude-fable-5: 0.45-0.55
    "claude-opus-4-8": 0.5,
    "claude-sonnet-4-6": 0.5,
    "claude-": 0.5,
}
"""Each model family's typical tokens per character, measured as `session_rate` measures a session's
(`family_rates`); a model no row matches takes the newest models' rate (0.5)."""
CALIBRATION_CHARS: Final = 2_000
"""Tool-output characters a request must add to its thread to measure the rate on it."""
THINKING_SHARE: Final = 0.05
"""A request whose previous reply was more than this share thinking is not measured on: the thinking
stays in the context the usage counts, but what a transcript keeps of it need not be what was counted, so
neither leaving it out of the characters (which reads high) nor counting it is exact."""
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


def _thinking_chars(blocks: Sequence[Mapping[str, Any]]) -> int:
    return sum(m.block_chars(block) for block in blocks if block.get("type") == "thinking")


@dataclass(frozen=True)
class Rate:
    """A session's tokens per character of tool output, and where it came from."""

    value: float
    """The rate used."""
    model: str
    """The model most of the session's requests ran on ('' when none)."""
    samples: int
    """Requests it was measured on."""
    measured: float | None
    """The session's own median (None: no request to measure on)."""
    fallback: str = ""
    """'' when measured and used; else why the model's typical rate was used instead, in words."""


def model_rate(model: str) -> float:
    """The typical tokens per character of `model`'s family (`MODEL_RATES`)."""
    base = model.split("[", 1)[0].strip().lower()
    matches = [prefix for prefix in MODEL_RATES if base.startswith(prefix)]
    return MODEL_RATES[max(matches, key=len)] if matches else MODEL_RATES["claude-"]


def rate_samples(threads: Sequence[Thread]) -> list[float]:
    """Each measurable request's context tokens added per character: over the requests that added at
    least `CALIBRATION_CHARS` characters of tool output to their thread and whose previous reply was at
    most `THINKING_SHARE` thinking, the tokens their context grew by (their `usage`) over the characters
    added (the tool output and the previous reply)."""
    rates = []
    for thread in threads:
        for number in range(1, len(thread.requests)):
            before, after = thread.requests[number - 1], thread.requests[number]
            added = _added_output(thread.entries, before.entry, after.entry)
            if added < CALIBRATION_CHARS:
                continue
            grew = after.usage.context - before.usage.context
            chars = added + _reply_chars(before.blocks)
            if _thinking_chars(before.blocks) > THINKING_SHARE * chars:
                continue
            if grew > 0:
                rates.append(grew / chars)
    return rates


def family(model: str) -> str:
    """`claude-opus-4-5-20251101` -> `claude-opus-4-5`: a model's name without its date."""
    return "-".join(p for p in model.split("-") if not (p.isdigit() and len(p) == 8))


def family_rates(
    sessions: Iterable[Sequence[Thread]], *, share: float = 0.9
) -> dict[str, tuple[float, int, int]]:
    """Per model family: (median tokens per character, requests measured, sessions), over the
    `rate_samples` of every session whose requests are at least `share` one family's (a session that
    switched models is left out): how `MODEL_RATES` is measured on real transcripts."""
    found: dict[str, list[float]] = {}
    counted: dict[str, int] = {}
    for threads in sessions:
        models = Counter(family(r.model) for t in threads for r in t.requests if r.model)
        samples = rate_samples(threads)
        if not models or not samples:
            continue
        model, count = models.most_common(1)[0]
        if count < share * sum(models.values()):
            continue
        found.setdefault(model, []).extend(samples)
        counted[model] = counted.get(model, 0) + 1
    return {k: (round(statistics.median(v), 3), len(v), counted[k]) for k, v in sorted(found.items())}


def session_rate(threads: Sequence[Thread]) -> Rate:
    """The session's rate (see the module's docstring), with its model and any fallback named."""
    rates = rate_samples(threads)
    models: dict[str, int] = {}
    for thread in threads:
        for request in thread.requests:
            models[request.model] = models.get(request.model, 0) + 1
    model = max(models, key=lambda name: models[name]) if models else ""
    typical = model_rate(model)
    named = f"{model or 'its model'}'s typical {typical:.2f} used"
    if not rates:
        return Rate(typical, model, 0, None, f"no request to measure on: {named}")
    measured = statistics.median(rates)
    if not RATE_BOUNDS[0] <= measured <= RATE_BOUNDS[1]:
        low, high = RATE_BOUNDS
        return Rate(
            typical, model, len(rates), measured, f"measured {measured:.2f}, outside {low}-{high}: {named}"
        )
    if len(rates) < _SAMPLES:  # the session's own evidence, however thin, over a typical rate
        return Rate(
            measured, model, len(rates), measured, f"measured {measured:.2f} on {len(rates)} request(s) only"
        )
    return Rate(measured, model, len(rates), measured)


def tokens_per_char(threads: Sequence[Thread]) -> float:
    """The session's tokens per character of tool output (`session_rate(threads).value`)."""
    return session_rate(threads).value


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
