"""flower's keep-warm pings, priced on the suite's simulated clock.

A `Runtime` gives its coordinator 5-minute cache marks and, while the coordinator waits on a worker, sends
a ping every 270 s (`flower.warm`). A recording never holds those pings: the scripted workers answer at
once in wall-clock time, so no wait of a run reaches 270 s. The suite prices flower as it would run on the
drawn clock instead: `as_flower` lays the pings `flower.warm.schedule.ping_times` would send over the
recorded requests and their drawn send times, each one the coordinator's last request with its last mark
moved onto the ping's own user message and budget line (`PING_SUFFIX` tokens written, as measured through
the CLI), for one output token, in one request. `keeps_warm` says which recordings are priced so: a
flower run whose coordinator delegated, unless its `Runtime` had `keep_warm=False` (`flower -keep_warm`:
1-hour marks, no ping). A run recorded before `Runtime` kept warm (its coordinator asked for 1 hour) is
priced the same way, its coordinator's marks at 5 minutes: the CLI's requests differ in nothing else
(the e2e test of the 1-hour variable, and the keep-warm test, read the same blocks).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import Any

from flower.cost import TTL_5M, Block
from flower.warm import KeepWarmPolicy
from flower.warm.schedule import ping_limit, ping_times

from .bounds import S, with_lifetimes

PING_SUFFIX = 27
"""Tokens a ping writes after the coordinator's prefix (its `. N` message and the budget line), in the
suite's unit (characters / 4), as `tests/e2e/test_keep_warm.py` reads them on the scripted model, for a
foreground worker (the suite's coordinators delegate in the foreground; a background worker's ping also
writes the CLI's notice that the task is not running in the fork, about 300 tokens more)."""
PING = "ping"
"""The caller of a priced ping (`Sent.caller`, `Req.caller`): not the main thread's, so the context
series, the peak and the waits are the run's own."""
EARLIER = "earlier run, 1-hour marks priced as flower's"
"""What a re-marked recording's note says (`Trace.note`): the page lists those runs."""
POLICY = KeepWarmPolicy()
"""The policy the suite's flower runs with (`Runtime`'s default)."""


def keeps_warm(strategy: Any, sent: Sequence[S]) -> bool:
    """Whether a recording of `strategy` is priced with flower's pings: a flower run whose `Runtime`
    keeps warm (not `keep_warm=False`) and whose coordinator delegated."""
    if strategy.engine != "flower" or strategy.runtime.get("keep_warm", True) is False:
        return False
    return any(s.caller == "main" for s in sent) and any(s.caller == "worker" for s in sent)


def ping(request: S, number: int) -> S:
    """The coordinator's request `request` sent again as ping `number` of its wait: its last mark moved
    onto the ping's suffix, one output token."""

    def blocks(found: list[Block]) -> list[Block]:
        last = max(i for i, b in enumerate(found) if b.breakpoint is not None)
        moved = [dataclasses.replace(b, breakpoint=None) if i == last else b for i, b in enumerate(found)]
        key = hash(("keep-warm", tuple(b.key for b in found), number))
        return [*moved, Block(key, PING_SUFFIX, TTL_5M, "user", found[-1].message + 1)]

    more = {"ignored": blocks(request.ignored)} if hasattr(request, "ignored") else {}
    return dataclasses.replace(  # type: ignore[type-var]
        request, caller=PING, blocks=blocks(request.blocks), output=1, **more
    )


def _five_ignored(request: S) -> S:
    """`request` with the marks of its `ignored` blocks at 5 minutes."""
    ignored = [
        b if b.breakpoint is None else dataclasses.replace(b, breakpoint=TTL_5M)
        for b in request.ignored  # type: ignore[attr-defined]
    ]
    return dataclasses.replace(request, ignored=ignored)  # type: ignore[type-var]


def as_flower(
    sent: Sequence[S], times: Sequence[float], idle: Sequence[float], policy: KeepWarmPolicy = POLICY
) -> tuple[list[S], list[float]]:
    """`sent` at 5-minute coordinator marks, with the pings `flower.warm` sends while the coordinator
    waits on a worker (the workload's idle time, when no one waits, excluded), in time order.
    `idle[k]`: seconds of the workload's idle time after request k."""
    mains = [i for i, s in enumerate(sent) if s.caller == "main"]
    five = with_lifetimes(sent, dict.fromkeys(mains, TTL_5M))
    if five and hasattr(five[0], "ignored"):  # the billing block's sensitivity row, re-marked alike
        five = [_five_ignored(s) if i in mains else s for i, s in enumerate(five)]
    timed = [(at, n, s) for n, (s, at) in enumerate(zip(five, times, strict=True))]
    for i, nxt in itertools.pairwise(mains):
        if nxt == i + 1:  # no worker between two coordinator requests: it waited on no one
            continue
        model = getattr(sent[i], "model", "")
        limit = ping_limit(policy, model=model, lifetime=TTL_5M)
        until = times[nxt] - sum(idle[i:nxt])
        for number, at in enumerate(
            ping_times(policy, since=times[i], until=until, lifetime=TTL_5M, limit=limit)
        ):
            timed.append((at, i, ping(five[i], number + 1)))
    timed.sort(key=lambda item: (item[0], item[1]))
    return [s for _, _, s in timed], [at for at, _, _ in timed]


__all__ = ["EARLIER", "PING", "PING_SUFFIX", "POLICY", "as_flower", "keeps_warm", "ping"]
