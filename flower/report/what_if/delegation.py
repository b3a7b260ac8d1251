"""Layer 1 estimated: the main thread's tool loops moved into workers. An estimate, never a replay.

A *tool loop* is a run of main-thread requests that only carry tool results back (no prompt, no
compaction between them). Its stretches of calls a coordinator may not make itself (anything but `Read`,
`TodoWrite`, the Agent/planning tools and the Bash calls glance accepts) would each have been one
mandate: the coordinator's reply that started the stretch becomes the Agent call, a worker makes the
stretch's requests on its own context (its start, the mandate, then what the stretch added), and the main
thread keeps only the mandate, the worker's report inside the CLI's hand-back frame, and, sometimes, a
document the report pointed to that it reads back; the coordinator's own glances and reads stay where
they were. A worker takes as long as its stretch took: when that is the prompt cache's lifetime or more
(an hour if the main thread wrote to the 1-hour cache, else five minutes), the coordinator's request that
gets the report finds its cache gone and writes its whole context again. Everything else is priced as
recorded (with spill and layer 4 applied first, as flower runs them: at the low end as replayed, at the
high end with every spilled output a later reply quotes read back whole).

What no transcript can tell is assumed, twice, as a range (`DelegationAssumptions`): report sizes are those
of real project agents with a set report format (`flower.report.measured.REPORT_CHARS_DECILES`, 1st and
9th deciles), how often the coordinator reads a document back is `READ_BACK_INTERVAL` (the low end for
the low cost), mandates are sized between a small and a large case, and a worker's start is read from the
cache (another worker warmed it) or, twice as large, written whole. The worker is assumed to make the
same requests and write the same output the main thread did; the coordinator's rules and the workbench
block it would also have carried are not counted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ...cost import TTL_1H, TTL_5M, price
from ...glance import is_ephemeral
from ...stores.rewrite import is_prompt
from ...stores.rewrite.expire import entry_time
from ...usage import TokenUsage
from ..measured import READ_BACK_INTERVAL, REPORT_CHARS_DECILES
from .replay import Request, Saving, Thread, replayed
from .spill import boundaries, until_compacted

__all__ = ["COORDINATOR_TOOLS", "DelegationAssumptions", "DelegationLine", "delegation_line", "tool_loops"]

COORDINATOR_TOOLS = ("Read", "TodoWrite", "Agent", "Task", "TaskCreate", "TaskUpdate", "TaskList", "TaskGet")
"""Tools a flower coordinator calls itself; Bash too when glance accepts the command."""


@dataclass(frozen=True, kw_only=True)
class DelegationAssumptions:
    """What the delegation estimate assumes, as (low cost, high cost) pairs; printed with it."""

    report_chars: tuple[int, int] = (REPORT_CHARS_DECILES[1], REPORT_CHARS_DECILES[9])
    """A worker's report (1st and 9th deciles of real project agents with a set report format)."""
    read_back: tuple[float, float] = READ_BACK_INTERVAL
    """Share of reports after which the coordinator reads a document back (as long as the report)."""
    mandate_chars: tuple[int, int] = (400, 1_600)
    """A mandate (flower's demo: 367 on average, 577 the longest)."""
    frame_tokens: int = 150
    """The CLI's hand-back frame around a report."""
    worker_start_tokens: tuple[int, int] = (4_300, 8_600)
    """A worker's tools and system prompt: the original design's measurement, read from the cache (another
    worker warmed it), up to twice that written whole (a worker with more tools or a longer prompt)."""


@dataclass(frozen=True, kw_only=True)
class DelegationLine:
    """The estimate: the session's cost and main-thread peak with its tool loops delegated, low to high."""

    _derived: ClassVar[tuple[str, ...]] = ("estimate",)

    loops: int = 0
    """Tool loops that would have gone to a worker."""
    calls: int = 0
    """Their tool calls."""
    requests: int = 0
    """Their requests, made by workers instead of the main thread."""
    cost_usd_low: float = 0.0
    cost_usd_high: float = 0.0
    main_peak_low: int = 0
    main_peak_high: int = 0
    assumptions: DelegationAssumptions = field(default_factory=DelegationAssumptions)

    @property
    def estimate(self) -> bool:
        """Always True: nothing here was recorded."""
        return True


def _calls(request: Request) -> list[Mapping[str, Any]]:
    return [b for b in request.blocks if b.get("type") == "tool_use"]


def _own(call: Mapping[str, Any]) -> bool:
    name = call.get("name")
    if name == "Bash":
        tool_input = call.get("input")
        return isinstance(tool_input, Mapping) and is_ephemeral(str(tool_input.get("command", "")))
    return name in COORDINATOR_TOOLS


def tool_loops(thread: Thread) -> list[tuple[int, int, int]]:
    """`(first, last, calls)` of each stretch of a tool loop a worker would have made: the request whose
    reply made its first delegable call, the request that got its last results, and its calls. A reply
    whose calls the coordinator may make itself (`_own`) stays on the main thread and ends a stretch: the
    coordinator runs its glances and reads between mandates."""
    requests, entries = thread.requests, thread.entries
    cuts = set(boundaries(entries))

    def carried_back(number: int) -> bool:
        between = range(requests[number - 1].entry + 1, requests[number].entry)
        return not any(i in cuts or is_prompt(dict(entries[i])) for i in between)

    stretches = []
    opened: int | None = None
    for number, request in enumerate(requests):
        calls = _calls(request)
        goes_on = number + 1 < len(requests) and bool(calls) and carried_back(number + 1)
        if opened is None and goes_on and not all(_own(c) for c in calls):
            opened = number
        elif opened is not None and (not goes_on or all(_own(c) for c in calls)):
            stretches.append((opened, number))
            opened = None
    return [(first, last, sum(len(_calls(r)) for r in requests[first:last])) for first, last in stretches]


def _lifetime(thread: Thread) -> float:
    """The prompt cache's lifetime the main thread's writes show: an hour with any 1-hour write."""
    return TTL_1H if any(r.usage.cache_creation_1h for r in thread.requests) else TTL_5M


def _seconds(thread: Thread, first: int, last: int) -> float:
    """How long a stretch took, from its first reply to the one that got its last results."""
    stamps = [entry_time(dict(thread.entries[thread.requests[n].entry])) for n in (first, last)]
    return stamps[1] - stamps[0] if stamps[0] is not None and stamps[1] is not None else 0.0


def _cold(usage: TokenUsage, hour: bool) -> TokenUsage:
    """`usage` sent after the cache expired: what it read is written again."""
    read = usage.cache_read
    return dataclasses.replace(
        usage,
        cache_read=0,
        cache_creation=usage.cache_creation + (0 if hour else read),
        cache_creation_1h=usage.cache_creation_1h + (read if hour else 0),
    )


def _with(thread: Thread, usages: Sequence[TokenUsage]) -> Thread:
    requests = tuple(dataclasses.replace(r, usage=u) for r, u in zip(thread.requests, usages, strict=True))
    return Thread(thread.name, thread.entries, requests)


def _bound(
    main: Thread, loops: Sequence[tuple[int, int, int]], rate: float, low: bool, a: DelegationAssumptions
) -> tuple[float, int]:
    """The main thread and its workers in dollars, and the main thread's peak, at one end of the range."""
    pick = 0 if low else 1
    report = a.report_chars[pick] * rate
    mandate = a.mandate_chars[pick] * rate
    share = a.read_back[pick]
    start = a.worker_start_tokens[pick]
    cuts = boundaries(main.entries)
    savings: list[Saving] = []
    moved: set[int] = set()
    workers: list[TokenUsage] = []
    for first, last, _ in loops:
        before = main.end_of(first)
        grown = main.requests[last].usage.context - before
        end = until_compacted(main, main.requests[last].entry, cuts)
        savings.append(Saving(last, end, before, max(grown, 0), grown - (mandate + report + a.frame_tokens)))
        savings.append(Saving(last + 1, end, before + grown, report, -share * report))
        moved.update(range(first + 1, last))
        loop = Thread("worker", main.entries, main.requests[first + 1 : last + 1])
        prefix = Saving(0, len(loop.requests), 0, before, before - (start + mandate))
        used = replayed(loop, [prefix])
        written = round(mandate if low else start + mandate)
        head = used[0]
        used[0] = head.minus(TokenUsage(cache_read=written)) + TokenUsage(
            cache_creation=min(written, head.cache_read)
        )
        workers.extend(used)
    kept = replayed(main, savings)
    lifetime = _lifetime(main)
    for first, last, _ in loops:  # the coordinator waited as long as the loop took: its cache may be gone
        if _seconds(main, first, last) >= lifetime:
            kept[last] = _cold(kept[last], lifetime == TTL_1H)
    model = {r.model for r in main.requests}
    main_cost = sum(
        price([u], model=r.model).total
        for number, (r, u) in enumerate(zip(main.requests, kept, strict=True))
        if number not in moved
    )
    worker_model = max(model, key=lambda name: sum(r.model == name for r in main.requests)) if model else ""
    worker_cost = price(workers, model=worker_model).total if workers else 0.0
    peak = max((u.context for number, u in enumerate(kept) if number not in moved), default=0)
    return main_cost + worker_cost, peak


def delegation_line(
    main: Thread,
    usages: tuple[Sequence[TokenUsage], Sequence[TokenUsage]],
    others_usd: tuple[float, float],
    rate: float,
    a: DelegationAssumptions,
) -> DelegationLine:
    """The estimate for a session whose main thread, with spill and layer 4 replayed, used `usages` (the
    low end: the replay; the high end: every spilled output quoted later read back whole); `others_usd`
    is what its subagents and compactions cost at each end (kept as they are)."""
    loops = tool_loops(main)
    low_usd, low_peak = _bound(_with(main, usages[0]), loops, rate, True, a)
    high_usd, high_peak = _bound(_with(main, usages[1]), loops, rate, False, a)
    return DelegationLine(
        loops=len(loops),
        calls=sum(calls for _, _, calls in loops),
        requests=sum(last - first for first, last, _ in loops),
        cost_usd_low=low_usd + others_usd[0],
        cost_usd_high=high_usd + others_usd[1],
        main_peak_low=low_peak,
        main_peak_high=high_peak,
        assumptions=a,
    )
