"""flower's keep-warm pings, priced on the suite's simulated clock.

A `Runtime` gives its coordinator 5-minute cache marks and, while the coordinator waits on a worker, sends
a ping every 270 s (`flower._warm`). A recording never holds those pings: the scripted workers answer at
once in wall-clock time, so no wait of a run reaches 270 s. The suite prices flower as it would run on the
drawn clock instead: `as_flower` lays the pings `flower._warm.schedule.ping_times` would send over the
recorded requests and their drawn send times, each one the coordinator's last request sent again as the
CLI sends it on that request's model (`ping`), for one output token, in one request. `keeps_warm` says
which recordings are priced so: a flower run whose coordinator delegated, unless its `Runtime` had
`keep_warm=False` (`flower -keep_warm`: 1-hour marks, no ping). A run recorded before `Runtime` kept warm
(its coordinator asked for 1 hour) is priced the same way, its coordinator's marks at 5 minutes: the CLI's
requests differ in nothing else (the e2e test of the 1-hour variable, and the keep-warm test, read the
same blocks).

What the CLI sends, recorded through it with the scripted model under each model name
(`python benchmarks/bench_keep_warm.py --probe`, CLI 2.1.337): on Opus 5 (`claude-opus-5`) every block up to
the coordinator's last mark is equal, then the ping's `. N` text and a `USD budget` line of its own, the
mark on the latter (27 tokens written at characters / 4). On Sonnet 4.6 (and a model the table does not
know) the CLI appends two system-reminders (a new `<total_tokens>` counter and the `USD budget` line,
about 180 characters) *inside the last tool_result block*: that block differs, so the ping reads only up
to the entry before it (the request before the coordinator's last) and writes from there: the last
request's own new blocks, the changed tool_result and the `. N` text (143 tokens in the probe, where the
coordinator's last request had written 90).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import Any

from flower._cost import TTL_5M, Block
from flower._warm import KeepWarmPolicy
from flower._warm.schedule import ping_limit, ping_times

from .bounds import S, with_lifetimes

PING_TEXT_CHARS = 32
"""Characters of the ping's own `. N` text block (8 tokens at characters / 4)."""
PING_BUDGET_CHARS = 76
"""Characters of the `USD budget` line the CLI sends after it on Opus 5 (19 tokens at characters / 4)."""
PING_SUFFIX = 27
"""Tokens (characters / 4) a ping writes after the coordinator's whole prefix on Opus 5: its `. N` text
and the budget line, as the probe reads them on the scripted model, for a foreground worker (the suite's
coordinators delegate in the foreground; a background worker's ping also writes the CLI's notice that
the task is not running in the fork, about 300 tokens more)."""
REMINDER_CHARS = 180
"""Characters the CLI appends inside the last tool_result block of a ping on Sonnet 4.6: a new
`<total_tokens>` counter and the `USD budget` line, each a system-reminder (45 tokens at characters / 4)."""
WHOLE_PREFIX = ("claude-opus-5",)
"""The models (name prefixes) whose ping repeats every block up to the coordinator's last mark; on any
other the CLI's reminders go inside the last tool_result block (measured on Sonnet 4.6)."""
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


def _tokens(chars: int, rate: float) -> int:
    return max(1, round(chars * rate))


def ping(request: S, number: int, rate: float = 0.25) -> S:
    """The coordinator's request `request` sent again as ping `number` of its wait, as the CLI sends it on
    the request's model (see the module's docstring), its blocks counted at `rate` tokens a character:
    its last mark moved onto the ping's own text, one output token."""
    whole = str(getattr(request, "model", "")).startswith(WHOLE_PREFIX)
    results = getattr(request, "results", {})

    def blocks(found: list[Block]) -> list[Block]:
        last = max(i for i, b in enumerate(found) if b.breakpoint is not None)
        moved = [dataclasses.replace(b, breakpoint=None) if i == last else b for i, b in enumerate(found)]
        key = hash(("keep-warm", tuple(b.key for b in found), number))
        text = Block(key, _tokens(PING_TEXT_CHARS, rate), TTL_5M, "user", found[-1].message)
        if whole:  # Opus 5: the whole prefix, then the text and the budget line (the mark on the latter)
            budget = Block(hash((key, "budget")), _tokens(PING_BUDGET_CHARS, rate), TTL_5M, "system", -1)
            return [*moved, dataclasses.replace(text, breakpoint=None), budget]
        tail = moved[last]
        if tail.key in results:  # the reminders inside the last tool_result: that block differs
            changed = Block(hash((tail.key, "reminders", number)), tail.tokens, None, tail.role, tail.message)
            grown = dataclasses.replace(changed, tokens=tail.tokens + _tokens(REMINDER_CHARS, rate))
            return [*moved[:last], grown, *moved[last + 1 :], text]
        reminders = Block(hash((key, "reminders")), _tokens(REMINDER_CHARS, rate), None, "user", tail.message)
        return [*moved, reminders, text]

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
    sent: Sequence[S],
    times: Sequence[float],
    idle: Sequence[float],
    policy: KeepWarmPolicy = POLICY,
    rate: float = 0.25,
) -> tuple[list[S], list[float]]:
    """`sent` at 5-minute coordinator marks, with the pings `flower._warm` sends while the coordinator
    waits on a worker (the workload's idle time, when no one waits, excluded), in time order.
    `idle[k]`: seconds of the workload's idle time after request k; `rate`: the tokens per character
    `sent` is counted at (`pricing.at_rate`), which the pings' own blocks are counted at too."""
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
            timed.append((at, i, ping(five[i], number + 1, rate)))
    timed.sort(key=lambda item: (item[0], item[1]))
    return [s for _, _, s in timed], [at for at, _, _ in timed]


__all__ = [
    "EARLIER",
    "PING",
    "PING_BUDGET_CHARS",
    "PING_SUFFIX",
    "PING_TEXT_CHARS",
    "POLICY",
    "REMINDER_CHARS",
    "WHOLE_PREFIX",
    "as_flower",
    "keeps_warm",
    "ping",
]
