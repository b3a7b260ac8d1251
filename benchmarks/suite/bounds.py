"""What choices flower does not make itself would change, replayed on flower's own recordings.

Nothing is recorded again: the requests stay exactly as sent, only their cache marks or their output
change, and each variant is priced under the same clock and seed as the run.

- **The coordinator's cache lifetime** (on `flower -keep_warm`'s runs, whose coordinator asked for 1
  hour). `5m`: every mark of the coordinator's requests at 5 minutes (flower's default marks without its
  pings, on the same requests). `warm`: every coordinator mark at 5 minutes, and while the coordinator
  waits longer on its workers, its last request sent again every `PING_EVERY` seconds for one token of
  output, which reads its whole prefix and keeps it alive (the page's first sketch of what flower now
  does; flower's own schedule is `warm.py`'s).
- **Workers that keep to their brief.** `short`: each report flower's cap cut written only as long as
  the head the coordinator read of it (the workers' last replies write the rest less); the rest of the
  run is unchanged.

(An earlier "oracle", one hour exactly on the coordinator's requests followed by a wait over 5 minutes,
is gone: it was no bound, putting an hour's premium on a 2-hour idle gap and ignoring pings, which beat
it. The bound that cannot be beaten is `floor.py`'s.)
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

from flower._cost import TTL_1H, TTL_5M, Block, tokens_of

VARIANTS = ("5m", "warm", "short")
"""The replays, in the order the page shows them."""
CLOCKS = ("calibrated", "35", "stress")
"""The clocks they are priced under: the calibrated one, 35 s a request, and workers with the real tail."""
PING_EVERY = 270.0
"""Seconds between two keep-warm requests (`kept_warm`): inside the 5-minute lifetime, with room to spare."""


class Sendable(Protocol):
    """A request as the pricer holds it (`trace.Sent`): who sent it, its blocks, its output tokens."""

    @property
    def caller(self) -> str: ...
    @property
    def blocks(self) -> list[Block]: ...
    @property
    def output(self) -> int: ...


S = TypeVar("S", bound=Sendable)


def asks_one_hour(sent: Sequence[Sendable]) -> bool:
    """Whether a run's coordinator asked for a 1-hour cache and delegated (the runs worth replaying)."""
    marked = any(b.breakpoint == TTL_1H for s in sent if s.caller == "main" for b in s.blocks)
    return marked and any(s.caller == "worker" for s in sent)


def with_lifetimes(sent: Sequence[S], lifetimes: Mapping[int, float]) -> list[S]:
    """`sent` with every mark of the requests at the indices of `lifetimes` at that lifetime."""
    out = list(sent)
    for i, ttl in lifetimes.items():
        blocks = [
            b if b.breakpoint is None else dataclasses.replace(b, breakpoint=ttl) for b in sent[i].blocks
        ]
        out[i] = dataclasses.replace(sent[i], blocks=blocks)  # type: ignore[type-var]
    return out


CALL = re.compile(r"\b[A-Z]\w*\(\{")
"""A tool call in a recorded answer (`Bash({...})`), as `RecordedRequest.answer` writes it."""
CUT = re.compile(r"\[flower: report cut at ([\d,]+) of ([\d,]+) chars")


def cut_excess(requests: Sequence[Any]) -> int:
    """Output tokens the workers wrote beyond what the coordinator read: for each report the cap cut
    (each Agent result the coordinator received, once), its whole length minus its head's."""
    seen: dict[str, int] = {}
    for r in requests:
        if r.caller != "main":
            continue
        for result in r.tool_results:
            found = CUT.search(result.text)
            if found:
                head, whole = (int(g.replace(",", "")) for g in found.groups())
                seen[result.tool_use_id] = whole - head
    return sum(tokens_of(chars) for chars in seen.values())


def worker_finals(requests: Sequence[Any]) -> list[int]:
    """Indices of the workers' last replies: a worker request whose answer calls no tool."""
    return [
        i for i, r in enumerate(requests) if r.caller not in ("main", "compact") and not CALL.search(r.answer)
    ]


def short_reports(sent: Sequence[S], finals: Sequence[int], excess: int) -> list[S]:
    """`sent` with `excess` output tokens fewer, taken from the workers' last replies (`finals`) in
    order: only the output's price depends on it (a worker's last reply is in no later request)."""
    out = list(sent)
    for i in finals:
        take = min(excess, sent[i].output)
        out[i] = dataclasses.replace(sent[i], output=sent[i].output - take)  # type: ignore[type-var]
        excess -= take
    return out


def kept_warm(
    sent: Sequence[S], times: Sequence[float], idle: Sequence[float]
) -> tuple[list[S], list[float]]:
    """Every coordinator mark at 5 minutes, and while the coordinator waits longer than that on its
    workers, a copy of its last request every `PING_EVERY` seconds asking for one token: it reads the
    whole prefix (0.1x) and so keeps it alive. `idle[k]`: seconds of the workload's idle time after
    request k (no one waits on a worker then: no ping). Returns the requests and their times, in order."""
    mains = [i for i, s in enumerate(sent) if s.caller == "main"]
    five = with_lifetimes(sent, dict.fromkeys(mains, TTL_5M))
    timed = [(at, n, s) for n, (s, at) in enumerate(zip(five, times, strict=True))]
    for i, nxt in itertools.pairwise(mains):
        touched, end = times[i], times[nxt] - sum(idle[i:nxt])
        while nxt > i + 1 and end - touched > TTL_5M:
            touched += PING_EVERY
            timed.append((touched, i, dataclasses.replace(five[i], output=1)))  # type: ignore[type-var]
    timed.sort(key=lambda item: (item[0], item[1]))
    return [s for _, _, s in timed], [at for at, _, _ in timed]


def variants(
    sent: Sequence[S], times: Sequence[float], idle: Sequence[float], finals: Sequence[int], excess: int
) -> dict[str, tuple[list[S], list[float]]]:
    """Each replay of `VARIANTS`: the requests to price and their times (`idle` as `kept_warm`'s)."""
    mains = [i for i, s in enumerate(sent) if s.caller == "main"]
    at = list(times)
    return {
        "5m": (with_lifetimes(sent, dict.fromkeys(mains, TTL_5M)), at),
        "warm": kept_warm(sent, times, idle),
        "short": (short_reports(sent, finals, excess), at),
    }


__all__ = [
    "CLOCKS",
    "VARIANTS",
    "Sendable",
    "asks_one_hour",
    "cut_excess",
    "kept_warm",
    "short_reports",
    "variants",
    "with_lifetimes",
    "worker_finals",
]
