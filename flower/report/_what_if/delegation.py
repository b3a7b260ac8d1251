"""Layer 1 estimated: the main thread's tool loops moved into workers. An estimate, never a replay.

A *tool loop* is a run of main-thread requests that only carry tool results back (no prompt, no
compaction between them). Its stretches of calls a coordinator may not make itself (anything but `Read`,
`TodoWrite`, the Agent/planning tools and the Bash calls glance accepts) would each have been one
mandate. flower's coordinator is strict by default (`coordinator()`, `own_steps=0`): every hands-on call
is delegated, and so it is here. With `DelegationAssumptions(own_steps=n)`, a stretch of at most `n`
hands-on calls (a Bash that is not a glance, a Write, Edit or NotebookEdit with at most
`OWN_STEP_MAX_INPUT` chars of input) stays on the main thread, as `coordinator(own_steps=n)` lets it. For
the others, the
coordinator's reply that started the stretch becomes the Agent call, a worker makes the stretch's
requests on its own context (its start, the mandate, then what the stretch added), and the main thread
keeps only the mandate, the worker's report inside the CLI's hand-back frame, and, sometimes, a document
the report pointed to that it reads back; the coordinator's own glances and reads stay where they were.
Priced as flower pays it:

- a worker's first request reads its fixed prefix (tools and system prompt, `worker_prefix_tokens`) from
  the cache when another worker sent a request less than five minutes before (workers keep 5-minute
  marks), else writes it;
- a worker writes as real subagents do, not as the main thread did: each reply before its report writes
  its tool calls and the prose real subagents write per reply (`flower.report._measured.SUBAGENT_TEXT`,
  `SUBAGENT_THINKING`: no thinking, a short text; their expected chars), and its context carries that
  instead of the main thread's prose; its last reply writes its report;
- what the coordinator's later replies copy from the outputs its workers saw, it looks up
  (`readback.coordinator_look_ups`: the same look-ups as a spilled output's, the whole output hidden);
- the coordinator waits as long as the stretch took, kept warm by `flower._warm`'s pings (5-minute marks,
  a ping `KeepWarmPolicy.interval` after its last request and after each ping, each reading its context
  for one output token, at most `ping_limit` of them); past the last ping's lifetime its request that
  gets the report writes its whole context again;
- the coordinator writes each mandate as output.

Everything else is priced as recorded, with spill and layer 4 applied first as flower runs them, with the
read-backs `readback` expects (the low end at the lower bound of the real read-back share, the high end at
its upper bound); the coordinator hands off where flower's policy fires on its own context (`threshold`).

What no transcript can tell is assumed as a range (`DelegationAssumptions`): report sizes are those of real
project agents with a set report format (`flower.report._measured.REPORT_CHARS_DECILES`, 1st and 9th
deciles), how often the coordinator reads a document back is `READ_BACK_INTERVAL` (the low end for the low
cost), mandates are sized between a small and a large case, and the glances right after a stretch are
its worker's at the low end, the coordinator's at the high end. The worker is assumed to make the same
tool calls the main thread did. The coordinator's own fixed prefix (its system prompt and rules, `Agent`
and its workers' tools) replaces the recorded one where the transcript records its request shape
(`prefix`); the workbench block it would also carry (about 700 characters) is not counted.

With `DelegationAssumptions(inline_until=t)` and the handoff on, a `Runtime`'s run: the main thread is the
coordinator's inline session (its own prefix, `prefix.coordinator_delta(inline_until=t)`; its calls its
own) up to the first request whose recorded context reached `t` (`inline_switch`), then hands off
(`threshold.handed_off(switch=...)`) to the coordinator, which delegates from its first request on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from ..._cost import TTL_5M, price
from ..._glance import is_ephemeral
from ..._handoff.document import HandoffPolicy
from ..._usage import TokenUsage
from ..._wall.delegate import OWN_STEP_MAX_INPUT
from ..._warm import KeepWarmPolicy
from ..._warm.schedule import ping_limit, ping_times
from ...stores._rewrite import is_prompt
from ...stores._rewrite.expire import entry_time
from .._metrics import block_chars
from .estimate import NARROW, DelegationAssumptions, DelegationLine
from .priced import again_usd
from .readback import ReadBacks, coordinator_look_ups
from .replay import Request, Saving, Thread, replayed
from .spill import boundaries, read_path, saved_files, until_compacted
from .threshold import handed_off

__all__ = [
    "COORDINATOR_TOOLS",
    "NARROW",
    "DelegationAssumptions",
    "DelegationLine",
    "coordinator_wait",
    "delegation_line",
    "inline_switch",
    "own_step",
    "tool_loops",
    "warm_starts",
    "worker_outputs",
]

COORDINATOR_TOOLS = ("Read", "TodoWrite", "Agent", "Task", "TaskCreate", "TaskUpdate", "TaskList", "TaskGet")
"""Tools a flower coordinator calls itself; Bash too when glance accepts the command."""

_OWN_STEP_INPUT = {"Bash": "command", "Write": "content", "Edit": "new_string", "NotebookEdit": "new_source"}
"""The hands-on tools and the input field the wall measures against `OWN_STEP_MAX_INPUT`."""


def _calls(request: Request) -> list[Mapping[str, Any]]:
    return [b for b in request.blocks if b.get("type") == "tool_use"]


def _own(call: Mapping[str, Any]) -> bool:
    name = call.get("name")
    if name == "Bash":
        tool_input = call.get("input")
        return isinstance(tool_input, Mapping) and is_ephemeral(str(tool_input.get("command", "")))
    return name in COORDINATOR_TOOLS


def own_step(call: Mapping[str, Any]) -> bool:
    """A hands-on call the wall lets the coordinator take itself as one of its own steps: a Bash that is
    not a glance, a Write, Edit or NotebookEdit, with at most `OWN_STEP_MAX_INPUT` chars of input."""
    field_name = _OWN_STEP_INPUT.get(str(call.get("name")))
    tool_input = call.get("input")
    if field_name is None or not isinstance(tool_input, Mapping):
        return False
    text = tool_input.get(field_name)
    return isinstance(text, str) and len(text) <= OWN_STEP_MAX_INPUT and not _own(call)


def _touches(call: Mapping[str, Any], cwd: str, saved: set[str]) -> bool:
    """Whether `call` reads a file of `saved` (a Read of it, or a Bash command naming it)."""
    if call.get("name") == "Bash":
        tool_input = call.get("input")
        command = str(tool_input.get("command", "")) if isinstance(tool_input, Mapping) else ""
        return any(path in command for path in saved)
    return read_path(call, cwd) in saved


def tool_loops(
    thread: Thread,
    own_steps: int = 0,
    trailing: bool = False,
    inline_until: int | None = None,
    handoff: bool = False,
) -> list[tuple[int, int, int]]:
    """`(first, last, calls)` of each stretch of a tool loop a worker would have made: the request whose
    reply made its first delegable call, the request that got its last results, and its calls. A reply
    whose calls the coordinator may make itself (`_own`) stays on the main thread and ends a stretch: the
    coordinator runs its glances and reads between mandates. A stretch of at most `own_steps` calls, each
    an `own_step`, stays too: the coordinator takes a one-off step itself. The replies right after a
    stretch that only read or search files the CLI saved outputs to (`spill.saved_files`) are that
    stretch's last: the worker that was shown the preview looks into the file (as in flower's runs), not
    the coordinator, which never saw it. With `trailing`, so are the replies right after a delegated
    stretch that only make glances (the worker looks at the state its own calls left before it
    reports); without, the coordinator runs them. With `inline_until`, a reply whose request's context
    (what the wall reads) was under that many tokens, and never past it before, makes its calls itself:
    a stretch keeps only its replies from the first strict one. With `handoff` too, the session that
    reached it hands off to the coordinator after that reply (`inline_switch`), which runs its calls as a
    handoff's last reply does: the strict part starts at the next request, the coordinator's first."""
    requests, entries = thread.requests, thread.entries
    cuts = set(boundaries(entries))
    saved = saved_files(thread)

    def carried_back(number: int) -> bool:
        between = range(requests[number - 1].entry + 1, requests[number].entry)
        return not any(i in cuts or is_prompt(dict(entries[i])) for i in between)

    def reads_back(number: int) -> bool:  # every call of its reply reads or searches a saved file
        cwd = str(entries[requests[number].entry].get("cwd") or ".")
        calls = _calls(requests[number])
        return bool(calls) and all(_touches(c, cwd, saved) for c in calls)

    def glances(number: int) -> bool:  # every call of its reply is a Bash glance accepts
        calls = _calls(requests[number])
        return bool(calls) and all(c.get("name") == "Bash" and _own(c) for c in calls)

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
    strict = _strict_from(requests, inline_until)
    if handoff and inline_switch(thread, inline_until) is not None:
        strict += 1
    loops = []
    for first, last in stretches:
        if last <= strict:
            continue  # every reply of it ran inline
        first = max(first, strict)
        while saved and last + 1 < len(requests) and reads_back(last) and carried_back(last + 1):
            last += 1
        calls = [c for r in requests[first:last] for c in _calls(r)]
        if len(calls) <= own_steps and all(own_step(c) or _own(c) for c in calls):
            continue
        while trailing and last + 1 < len(requests) and glances(last) and carried_back(last + 1):
            last += 1
        loops.append((first, last, sum(len(_calls(r)) for r in requests[first:last])))
    return loops


def _strict_from(requests: Sequence[Request], inline_until: int | None) -> int:
    """The first request whose reply the wall judges strictly: the first whose context reached
    `inline_until` (0, the strict wall from the start, without one)."""
    if inline_until is None:
        return 0
    return next((n for n, r in enumerate(requests) if r.usage.context >= inline_until), len(requests))


def inline_switch(thread: Thread, inline_until: int | None) -> int | None:
    """The request after whose reply a coordinator's inline session hands off to the coordinator under a
    `Runtime`: the first whose recorded context reached `inline_until`, if one did and a request follows
    it (None without `inline_until`)."""
    if inline_until is None:
        return None
    reached = _strict_from(thread.requests, inline_until)
    return reached if reached + 1 < len(thread.requests) else None


def worker_outputs(loop: Thread, prose: float, rate: float) -> list[int]:
    """The output tokens of a worker's replies before its report, made as `loop`'s recorded replies but
    written as a real subagent writes: their tool calls, and `prose` chars of prose each."""
    return [round(rate * (sum(block_chars(b) for b in _calls(r)) + prose)) for r in loop.requests[:-1]]


def _at(thread: Thread, number: int) -> float | None:
    return entry_time(dict(thread.entries[thread.requests[number].entry]))


def _seconds(thread: Thread, first: int, last: int) -> float:
    """How long a stretch took, from its first reply to the one that got its last results."""
    start, end = _at(thread, first), _at(thread, last)
    return end - start if start is not None and end is not None else 0.0


def warm_starts(main: Thread, loops: Sequence[tuple[int, int, int]]) -> list[bool]:
    """Whether each stretch's worker finds the workers' prefix in the cache: another worker sent a request
    less than five minutes before its first."""
    found: list[bool] = []
    last: float | None = None
    for first, end, _ in loops:
        start = _at(main, first + 1) if first + 1 < len(main.requests) else None
        found.append(start is not None and last is not None and start - last < TTL_5M)
        stamp = _at(main, end)
        last = stamp if stamp is not None else last
    return found


def _cold(usage: TokenUsage) -> TokenUsage:
    """`usage` sent after the cache expired: what it read is written again."""
    return dataclasses.replace(usage, cache_read=0, cache_creation=usage.cache_creation + usage.cache_read)


def coordinator_wait(
    usage: TokenUsage, seconds: float, model: str, warm: bool
) -> tuple[list[TokenUsage], bool]:
    """The pings (`flower._warm`'s, `KeepWarmPolicy()`) of a coordinator that waits `seconds` on a worker
    with `usage`'s context, each reading that context for one output token (its short message written),
    and whether its cache is gone when the report comes back (no ping when `warm` is False)."""
    policy = KeepWarmPolicy()
    limit = ping_limit(policy, model=model, lifetime=TTL_5M) if warm else 0
    times = ping_times(policy, since=0.0, until=seconds, lifetime=TTL_5M, limit=limit)
    ping = TokenUsage(cache_read=usage.context, cache_creation=4, output=1)
    return [ping] * len(times), seconds >= (times[-1] if times else 0.0) + TTL_5M


def _with(thread: Thread, usages: Sequence[TokenUsage]) -> Thread:
    requests = tuple(dataclasses.replace(r, usage=u) for r, u in zip(thread.requests, usages, strict=True))
    return Thread(thread.name, thread.entries, requests)


def _bound(
    main: Thread,
    loops: Sequence[tuple[int, int, int]],
    looked: ReadBacks,
    rate: float,
    low: bool,
    a: DelegationAssumptions,
    policy: HandoffPolicy,
    switch: tuple[int | None, int] = (None, 0),
) -> tuple[float, int]:
    """The main thread and its workers in dollars, and the main thread's peak, at one end of the range;
    `looked`: the coordinator's look-ups of what its workers saw. The coordinator hands off where
    `policy` fires on its own context (`threshold.handed_off`), its moved requests left out; `switch`:
    the request after which an inline session hands off to it (`inline_switch`), and how many tokens
    longer the coordinator's fixed prefix is than the inline session's."""
    pick = 0 if low else 1
    report = a.report_chars[pick] * rate
    mandate = a.mandate_chars[pick] * rate
    share = a.read_back[pick]
    start = a.worker_prefix_tokens
    warmed = warm_starts(main, loops)
    cuts = boundaries(main.entries)
    savings: list[Saving] = list(looked.added)
    moved: set[int] = set()
    workers: list[TokenUsage] = []
    for (first, last, _), warm in zip(loops, warmed, strict=True):
        before = main.end_of(first)
        grown = main.requests[last].usage.context - before
        end = until_compacted(main, main.requests[last].entry, cuts)
        savings.append(Saving(last, end, before, max(grown, 0), grown - (mandate + report + a.frame_tokens)))
        savings.append(Saving(last + 1, end, before + grown, report, -share * report))
        moved.update(range(first + 1, last))
        loop = Thread("worker", main.entries, main.requests[first + 1 : last + 1])
        prefix = Saving(0, len(loop.requests), 0, before, before - (start + mandate))
        outputs = worker_outputs(loop, a.worker_prose_chars, rate)
        prose = [  # each reply's recorded output, less what the worker writes, off the later contexts
            Saving(n + 1, len(loop.requests), r.usage.context, r.usage.output, r.usage.output - out)
            for n, (r, out) in enumerate(zip(loop.requests[:-1], outputs, strict=True))
        ]
        used = replayed(loop, [prefix, *prose])
        used[:-1] = [dataclasses.replace(u, output=out) for u, out in zip(used[:-1], outputs, strict=True)]
        written = round(mandate if warm else start + mandate)
        head = used[0]
        used[0] = head.minus(TokenUsage(cache_read=written)) + TokenUsage(
            cache_creation=min(written, head.cache_read)
        )
        used[-1] = dataclasses.replace(used[-1], output=round(report))  # the worker writes its report
        workers.extend(used)
    kept = replayed(main, savings)
    for first, _, _ in loops:  # the coordinator writes the mandate
        kept[first] = dataclasses.replace(kept[first], output=kept[first].output + round(mandate))
    handed = handed_off(main, kept, rate, policy, moved, *switch)
    kept = handed.used
    asks = price(handed.asks, model=main.requests[0].model).total if handed.asks else 0.0
    pings = 0.0
    for first, last, _ in loops:  # the coordinator waits as long as the loop took, kept warm
        model_of = main.requests[first].model
        sent, gone = coordinator_wait(kept[first], _seconds(main, first, last), model_of, a.keep_warm)
        pings += price(sent, model=model_of).total if sent else 0.0
        if gone:
            kept[last] = _cold(kept[last])
    model = {r.model for r in main.requests}
    main_cost = (
        asks
        + pings
        + again_usd(main, kept, looked)
        + sum(
            price([u], model=r.model).total
            for number, (r, u) in enumerate(zip(main.requests, kept, strict=True))
            if number not in moved
        )
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
    prefix: tuple[int, bool] = (0, False),
    policy: HandoffPolicy | None = None,
    recorded_usd: float = 0.0,
    shift: int = 0,
) -> DelegationLine:
    """The estimate for a session whose main thread, with spill and layer 4 replayed and its fixed prefix
    moved by `prefix` (tokens a request, and whether they were computed from the recorded request shape),
    used `usages` (with the read-backs expected at the lower and the upper bound of the real read-back
    share); `others_usd` is what its subagents, compactions and read-back requests cost at each end;
    `policy`: when its coordinator hands off (flower's default; disabled: never, its compactions priced in
    `others_usd`); `recorded_usd`: the session's recorded cost, which the savings are told against. With
    `a.inline_until` and the policy enabled, a `Runtime`'s run: the inline session up to the first request
    that reached it (its prefix already in `usages`), a handoff, then the coordinator, whose fixed prefix
    is `shift` tokens longer (negative: shorter) than the inline session's. With the policy disabled, one
    session, as the wall switches a resumed one."""
    policy = policy or HandoffPolicy()
    by_trailing = {
        trailing: tool_loops(main, a.own_steps, trailing, a.inline_until, policy.enabled)
        for trailing in {False, *a.worker_glances}
    }
    switch = (inline_switch(main, a.inline_until) if policy.enabled else None, shift)
    ends = []
    for pick, low in ((0, True), (1, False)):
        stretches = by_trailing[a.worker_glances[pick]]
        looked = coordinator_look_ups(main, stretches, rate)
        ends.append(_bound(_with(main, usages[pick]), stretches, looked, rate, low, a, policy, switch))
    (low_usd, low_peak), (high_usd, high_peak) = ends
    loops = by_trailing[False]
    return DelegationLine(
        loops=len(loops),
        calls=sum(calls for _, _, calls in loops),
        requests=sum(last - first for first, last, _ in loops),
        cost_usd_low=low_usd + others_usd[0],
        cost_usd_high=high_usd + others_usd[1],
        main_peak_low=low_peak,
        main_peak_high=high_peak,
        prefix_delta=prefix[0],
        prefix_sessions=int(prefix[1]),
        inline_prefix_delta=prefix[0] - shift if a.inline_until is not None and policy.enabled else 0,
        switches=int(switch[0] is not None),
        assumptions=a,
        recorded_usd=recorded_usd,
    )
