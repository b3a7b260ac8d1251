"""Replays priced: a session's threads with some `Saving`s and the expected read-backs, in dollars and peaks.

Each scenario of a what-if is the same computation: take parts out of (or add them to) each thread's
requests (`replay.replayed`), add the requests read-backs take (`readback.Repeat`), price everything at
each request's own model (`flower._cost`), and read the main thread's peak.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..._cost import price
from ..._usage import TokenUsage
from .handoff import main_model
from .readback import ReadBackModel, ReadBacks, read_backs
from .replay import Saving, Thread, replayed
from .spill import SpillHit
from .threshold import Handed
from .typical import typical_peak

__all__ = ["Scenario", "again_usd", "dollars", "priced", "scenario"]


def dollars(pairs: Sequence[tuple[str, TokenUsage]]) -> float:
    """`(model, usage)` pairs priced, each at its model."""
    by_model: dict[str, list[TokenUsage]] = {}
    for model, usage in pairs:
        by_model.setdefault(model, []).append(usage)
    return sum(price(usages, model=model).total for model, usages in by_model.items())


def priced(threads: Sequence[Thread], usages: Sequence[Sequence[TokenUsage]]) -> float:
    """Every request of `threads` at the usage given for it."""
    return dollars(
        [
            (r.model, u)
            for t, us in zip(threads, usages, strict=True)
            for r, u in zip(t.requests, us, strict=True)
        ]
    )


@dataclass(frozen=True)
class Scenario:
    """One replay of a session's threads."""

    used: list[list[TokenUsage]]
    """Each thread's requests' usage."""
    usd: float
    """Everything: the threads' requests and the read-backs' own requests."""
    again_usd: float
    """The read-backs' own requests."""
    peak: int
    """The main thread's largest context."""
    tokens_saved: int
    """Context tokens not sent, over every request (negative: more sent)."""
    read_backs: float = 0.0
    """Expected read-backs."""
    read_back_chars: float = 0.0
    """Expected characters they bring back."""
    typical_peak: int = 0
    """The main thread's peak a run typically shows (`typical.typical_peak`): `peak` with no read-backs."""
    handoff_usd: float = 0.0
    """The requests asking for a handoff document, where flower's policy fired (`threshold.handed_off`)."""
    handoffs: int = 0
    """How many handoffs it fired."""


def again_usd(thread: Thread, used: Sequence[TokenUsage], found: ReadBacks) -> float:
    """The read-backs' own requests: each sent right after the request whose reply asked for it, so it
    reads that request's context from the cache (that request wrote it, even a cold one), writes what
    the read-back brought, and its reply writes the prose a main thread's reply does."""
    total = 0.0
    for repeat in found.repeats:
        model = thread.requests[repeat.request].model
        sent = TokenUsage(cache_read=used[repeat.request].context)
        total += repeat.weight * price([sent], model=model).total
        total += price(
            [TokenUsage(cache_creation=round(repeat.tokens), output=round(repeat.output))], model=model
        ).total
    return total


def scenario(
    threads: Sequence[Thread],
    savings: Sequence[Sequence[Saving]],
    hits: Sequence[Sequence[SpillHit]] | None = None,
    rate: float = 0.25,
    model: ReadBackModel | None = None,
    handoff: Callable[[list[TokenUsage]], Handed] | None = None,
) -> Scenario:
    """`threads` with `savings` taken out and, when a read-back `model` is given, the expected read-backs
    of `hits` added; with `handoff`, the main thread's replayed requests then go through it (flower's
    handoffs put in, `threshold.handed_off`), and its handoff requests are priced at the main thread's
    model."""
    found = (
        [read_backs(t, h, rate, model) for t, h in zip(threads, hits, strict=True)]
        if model is not None and hits is not None
        else [ReadBacks([], [], 0.0, 0.0) for _ in threads]
    )
    used = [
        replayed(t, [*s, *f.added]) if s or f.added else [r.usage for r in t.requests]
        for t, s, f in zip(threads, savings, found, strict=True)
    ]
    handed = handoff(used[0]) if handoff is not None else Handed(used[0], [], ())
    used[0] = handed.used
    asks = price(handed.asks, model=main_model(threads[0])).total if handed.asks else 0.0
    again = sum(again_usd(t, u, f) for t, u, f in zip(threads, used, found, strict=True))
    peak = max((u.context for u in used[0]), default=0)
    main = found[0]
    return Scenario(
        used=used,
        usd=priced(threads, used) + again,
        again_usd=again,
        peak=peak,
        typical_peak=typical_peak([u.context for u in used[0]], main.added, main.chances)
        if main.chances
        else peak,
        tokens_saved=sum(
            r.usage.context - u.context
            for t, us in zip(threads, used, strict=True)
            for r, u in zip(t.requests, us, strict=True)
        ),
        read_backs=sum(f.expected for f in found),
        read_back_chars=sum(f.chars for f in found),
        handoff_usd=asks,
        handoffs=len(handed.asks),
    )
