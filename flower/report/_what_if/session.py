"""One session's what-if: its requests as recorded, then each layer replayed on them.

The threads are the main transcript and each subagent's; the CLI's compaction workers
(`subagents/agent-acompact-*`) are priced as recorded in every line (the handoff line weighs them).
Spill acts on every thread (`spill_guard` runs in subagents too), layer 4 on the main thread's resumes
(a subagent's history is replayed only if it is continued), and both together rewrite the main thread in
flower's order: spill when an output arrives, layer 4 on what spill left, at each resume, and a handoff
where flower's policy fires on what is left (`threshold`: the CLI's own compactions do not happen). A
line with spill is priced three ways: with the read-backs a model shown only the previews is expected to make
(`readback.CENTRAL`, its cost), with none (`replay_usd`) and at the pessimistic end (`read_back_usd`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..._cost import price_for
from ..._handoff.document import HandoffPolicy
from ..._spill import SpillPolicy
from ..._usage import TokenUsage
from ..._util.content import text_of
from .. import _metrics as m
from .._gaps import subagent_runs
from .._load import SessionData
from .._measured import PREVIEW_READ_BACK_INTERVAL
from .._options import ReportOptions
from .._resumed import resume_points
from .delegation import DelegationAssumptions, delegation_line, inline_switch
from .handoff import glance_line, handoff_line, main_model, unkept_compactions
from .idle import idle_pauses
from .layer4 import RESIDUE, ResumeReplay, layer4_savings, replay_resumes
from .lines import AsRecorded, Layer4Line, Layers, ReplayLine, SessionWhatIf, SpillLine, TokensByKind
from .prefix import coordinator_delta
from .priced import Scenario, dollars, priced, scenario
from .readback import CENTRAL, PESSIMISTIC, ReadBackModel
from .replay import Saving, Thread, session_rate, thread_of
from .saved import settle
from .spill import kept, spill_hits, spill_savings, spilled_entries
from .stopped import how_it_stopped
from .threshold import Handed, handed_off

__all__ = ["WhatIfOptions", "what_if_session"]


@dataclass(frozen=True, kw_only=True)
class WhatIfOptions:
    """The layers' settings a what-if replays with (flower's defaults unless told)."""

    spill: SpillPolicy = field(default_factory=SpillPolicy)
    """What `spill_guard` spills (threshold 4,000 chars, the six tools)."""
    layer4: ReportOptions = field(default_factory=ReportOptions)
    """Layer 4's policies at each resume (expiry keeps 6, one denial kept, the 5-minute cache)."""
    delegation: DelegationAssumptions = field(default_factory=DelegationAssumptions)
    """What the delegation estimate assumes."""
    handoff: HandoffPolicy = field(default_factory=HandoffPolicy)
    """When flower hands off (its default: `reserve` below the CLI's auto-compact line, on the window the
    CLI reports for the session's model): spill + layer 4 and the delegation estimate hand off where it
    fires on their replayed context, and the CLI's own compactions do not happen (`threshold`). Disabled:
    the compactions stay as recorded."""
    read_back: ReadBackModel = CENTRAL
    """How a model shown only previews reads spilled outputs back (the real figures by default)."""
    prefix_delta: int = 0
    """Tokens by which every main-thread request's fixed prefix (tools and system prompt) would differ
    under flower without delegation (negative: shorter), e.g. flower's tool list against the CLI's own
    set, measured from the two first requests; applied to spill + layer 4, and to the delegation estimate
    of a session whose transcript records no request shape. 0 by default: the recorded prefix is kept."""
    coordinator_delta: int | None = None
    """The same for the delegation estimate's coordinator; None (the default): computed per session,
    flower's coordinator's system prompt and tools against the request shape its transcript records
    (`prefix.coordinator_delta`), or `prefix_delta` where it records none."""
    show_prompts: bool = False
    """Give each session the first line of its first prompt as a title (content: off by default)."""


def _recorded(threads: Sequence[Thread]) -> list[list[TokenUsage]]:
    return [[r.usage for r in t.requests] for t in threads]


def _line(
    central: Scenario,
    replay: Scenario,
    worst: Scenario,
    recorded: float,
    fixed: Callable[[Scenario], float],
    cap: float | None = None,
) -> ReplayLine:
    """A line from its three scenarios; `fixed`: what each pays besides its threads (compactions). `cap`:
    the most a line with spill can cost (the recorded cost: a model that read every spilled output back
    whole would hold the context the session held, so it pays at most what the session paid)."""
    worst_usd = worst.usd + fixed(worst)
    if cap is not None:
        worst_usd = min(worst_usd, cap)
    cost = min(central.usd + fixed(central), worst_usd)
    return ReplayLine(
        cost_usd=cost,
        recorded_usd=recorded,
        main_peak=central.typical_peak,
        tokens_saved=central.tokens_saved,
        replay_usd=min(replay.usd + fixed(replay), cost),
        replay_peak=replay.peak,
        read_back_usd=worst_usd,
        read_back_peak=worst.peak,
    )


def _as_recorded(
    session: SessionData, threads: Sequence[Thread], fixed: Sequence[Thread], unkept: Sequence[TokenUsage]
) -> AsRecorded:
    every = [r for t in (*threads, *fixed) for r in t.requests]
    stopped = how_it_stopped(session.main)
    model = main_model(threads[0])
    tokens = TokensByKind()
    for u in [*(r.usage for r in every), *unkept]:
        tokens += TokensByKind(
            input=u.input,
            cache_read=u.cache_read,
            cache_write_5m=u.cache_creation,
            cache_write_1h=u.cache_creation_1h,
            output=u.output,
        )
    workers = [p for p in session.subagents if not m.is_compaction(p)]
    idle = idle_pauses(threads[0])
    models = dict.fromkeys(r.model for r in every if r.model and r.model != "<synthetic>")
    return AsRecorded(
        requests=len(every) + len(unkept),
        tokens=tokens,
        cost_usd=dollars([*((r.model, r.usage) for r in every), *((model, u) for u in unkept)]),
        cost_lower_bound=any(r.mid_stream for r in every),
        main_peak=max((r.usage.context for r in threads[0].requests), default=0),
        compactions=sum(1 for e in session.main if e.get("subtype") == "compact_boundary"),
        compactions_estimated=len(unkept),
        resumes=len(resume_points(session.main, None)),
        subagents=subagent_runs(session.main, workers).total,
        stopped=stopped,
        unfinished=int(bool(stopped)),
        idle_pauses=idle.gaps,
        idle_tokens=idle.tokens,
        idle_usd=idle.usd,
        unpriced=tuple(name for name in models if not price_for(name)[1]),
    )


def _layer4_line(resumes: Sequence[ResumeReplay], line: ReplayLine) -> Layer4Line:
    return Layer4Line(
        cost_usd=line.cost_usd,
        recorded_usd=line.recorded_usd,
        main_peak=line.main_peak,
        tokens_saved=line.tokens_saved,
        replay_usd=line.replay_usd,
        replay_peak=line.replay_peak,
        read_back_usd=line.read_back_usd,
        read_back_peak=line.read_back_peak,
        resumes=len(resumes),
        cold_resumes=sum(1 for r in resumes if not r.warm),
        expired=sum(r.kinds.get("expired", 0) for r in resumes),
        denials_pruned=sum(r.kinds.get("denial", 0) for r in resumes),
        residue=sum(r.kinds.get(kind, 0) for r in resumes for kind in RESIDUE),
        chars_saved=sum(r.chars for r in resumes),
    )


def _title(entries: Sequence[Mapping[str, object]]) -> str:
    found = m.prompts(entries)
    return text_of(found[0][1]).strip().split("\n", 1)[0][:60] if found else ""


def _prefix(main: Thread, delta: int, start: int = 0, end: int | None = None) -> list[Saving]:
    """The fixed prefix `delta` tokens longer (negative: shorter) in the main-thread requests `start` to
    `end - 1` (None: to the last)."""
    end = len(main.requests) if end is None else end
    if not delta or start >= end:
        return []
    return [Saving(start, end, 0, abs(delta), -delta)]


async def what_if_session(session: SessionData, options: WhatIfOptions | None = None) -> SessionWhatIf:
    """The what-if of one session (reads nothing but `session`; layer 4 runs in an in-memory store)."""
    options = options or WhatIfOptions()
    main = thread_of("main", session.main)
    subs = [thread_of(p, e) for p, e in session.subagents.items() if not m.is_compaction(p)]
    fixed = [thread_of(p, e) for p, e in session.subagents.items() if m.is_compaction(p)]
    threads = [main, *subs]
    measured = session_rate(threads)
    rate = measured.value
    unkept = unkept_compactions(main, fixed, rate)
    recorded = _as_recorded(session, threads, fixed, unkept)
    fixed_usd = priced(fixed, _recorded(fixed)) + dollars([(main_model(main), u) for u in unkept])
    total = recorded.cost_usd
    none: list[list[Saving]] = [[] for _ in threads]

    home = Path(session.path).with_suffix("") / "tool-results" if session.path.endswith(".jsonl") else None
    every = [settle(t, spill_hits(t, options.spill), home, options.spill) for t in threads]
    hits = [kept(h) for h in every]
    cuts = [spill_savings(t, h, rate) for t, h in zip(threads, hits, strict=True)]
    # the replay's end, nothing read back: the recorded read-backs of the CLI's saved outputs spilled too
    bare = [spill_savings(t, h, rate) for t, h in zip(threads, every, strict=True)]
    model = options.read_back
    central = scenario(threads, cuts, hits, rate, model)
    spill = _line(
        central,
        scenario(threads, bare),
        scenario(threads, cuts, hits, rate, PESSIMISTIC),
        total,
        lambda _: fixed_usd,
        cap=total,
    )

    resumes = await replay_resumes(session.project_key, session.session_id, session.main, options.layer4)
    alone = scenario(threads, [layer4_savings(main, resumes, rate), *none[1:]])
    layer4 = _line(alone, alone, alone, total, lambda _: fixed_usd)

    spilled = spilled_entries(session.main, hits[0])
    over = await replay_resumes(session.project_key, session.session_id, spilled, options.layer4)
    prefix = _prefix(main, options.prefix_delta)
    pruned = layer4_savings(main, over, rate)
    policy = options.handoff

    def handing(used: list[TokenUsage]) -> Handed:
        """flower's handoffs where its policy fires on the replayed main thread (`threshold`)."""
        return handed_off(main, used, rate, policy)

    def handoffs(replayed: Scenario) -> float:
        """The handoff requests; the CLI's own compactions when handoff is off."""
        return replayed.handoff_usd if policy.enabled else fixed_usd

    both_cuts = [[*cuts[0], *pruned, *prefix], *cuts[1:]]
    both_central = scenario(threads, both_cuts, hits, rate, model, handing)
    both = _line(
        both_central,
        scenario(threads, [[*bare[0], *pruned, *prefix], *bare[1:]], handoff=handing),
        scenario(threads, both_cuts, hits, rate, PESSIMISTIC, handing),
        total,
        handoffs,
        cap=min(total, layer4.cost_usd),
    )
    computed = coordinator_delta(main) if options.coordinator_delta is None else None
    coordinator = options.coordinator_delta if options.coordinator_delta is not None else computed
    coordinator = options.prefix_delta if coordinator is None else coordinator
    moved = _prefix(main, coordinator)
    inline_until = options.delegation.inline_until
    switch = inline_switch(main, inline_until) if policy.enabled else None
    inline = coordinator_delta(main, inline_until) if inline_until is not None else None
    inline = coordinator if inline is None else inline
    if inline_until is not None and policy.enabled:  # a Runtime's inline session, up to its handoff
        cut = len(main.requests) if switch is None else switch + 1
        moved = [*_prefix(main, inline, 0, cut), *_prefix(main, coordinator, cut)]
    ends = [  # the low end with nothing of the CLI's saved outputs read back, as the replay's end
        scenario(threads, [[*spilled_cuts[0], *pruned, *moved], *spilled_cuts[1:]], hits, rate, end)
        for spilled_cuts, end in zip(
            (bare, cuts),
            (dataclasses.replace(model, look_share=share) for share in PREVIEW_READ_BACK_INTERVAL),
            strict=True,
        )
    ]
    # the delegation estimate hands off on the coordinator's own context (`delegation_line`)
    others = tuple(
        priced(threads[1:], end.used[1:]) + end.again_usd + (0.0 if policy.enabled else fixed_usd)
        for end in ends
    )
    return SessionWhatIf(
        session_id=session.session_id,
        project_key=session.project_key,
        cwd=next((str(e["cwd"]) for e in session.main if isinstance(e.get("cwd"), str) and e["cwd"]), ""),
        path=session.path,
        started=session.started,
        ended=session.ended,
        tokens_per_char=rate,
        as_recorded=recorded,
        layers=Layers(
            spill=SpillLine(
                **{f.name: getattr(spill, f.name) for f in dataclasses.fields(ReplayLine)},
                outputs=sum(len(h) for h in hits),
                main_outputs=len(hits[0]),
                chars_kept_out=sum(hit.saved for h in hits for hit in h),
                quoted_later=sum(hit.quoted_later for h in hits for hit in h),
                copied_later=sum(hit.copied_later for h in hits for hit in h),
                read_backs=round(central.read_backs, 3),
                read_back_chars=round(central.read_back_chars),
            ),
            layer4=_layer4_line(resumes, layer4),
            spill_and_layer4=both,
            handoff=handoff_line(main, fixed, rate),
            glance=glance_line(main),
            delegation=delegation_line(
                main,
                (ends[0].used[0], ends[1].used[0]),
                (others[0], others[1]),
                rate,
                options.delegation,
                (coordinator, computed is not None),
                policy,
                total,
                coordinator - inline,
            ),
        ),
        main_context=tuple(r.usage.context for r in main.requests),
        main_context_after=tuple(u.context for u in both_central.used[0]),
        title=_title(session.main) if options.show_prompts else "",
        model=measured.model,
        rate_fallback=measured.fallback,
    )
