"""One session's what-if: its requests as recorded, then each layer replayed on them.

The threads are the main transcript and each subagent's; the CLI's compaction workers
(`subagents/agent-acompact-*`) are priced as recorded in every line (the handoff line weighs them).
Spill acts on every thread (`spill_guard` runs in subagents too), layer 4 on the main thread's resumes
(a subagent's history is replayed only if it is continued), and both together rewrite the main thread in
flower's order: spill when an output arrives, layer 4 on what spill left, at each resume.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..._util.content import text_of
from ...cost import price
from ...spill import SpillPolicy
from ...usage import TokenUsage
from .. import metrics as m
from .._load import SessionData
from ..gaps import subagent_runs
from ..options import ReportOptions
from ..resumed import resume_points
from .delegation import DelegationAssumptions, delegation_line
from .handoff import glance_line, handoff_line, main_model, unkept_compactions
from .layer4 import RESIDUE, ResumeReplay, layer4_savings, replay_resumes
from .lines import AsRecorded, Layer4Line, Layers, ReplayLine, SessionWhatIf, SpillLine, TokensByKind
from .replay import Saving, Thread, replayed, thread_of, tokens_per_char
from .spill import SpillHit, read_backs, spill_hits, spill_savings, spilled_entries

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
    show_prompts: bool = False
    """Give each session the first line of its first prompt as a title (content: off by default)."""


def _dollars(pairs: Sequence[tuple[str, TokenUsage]]) -> float:
    by_model: dict[str, list[TokenUsage]] = {}
    for model, usage in pairs:
        by_model.setdefault(model, []).append(usage)
    return sum(price(usages, model=model).total for model, usages in by_model.items())


def _priced(threads: Sequence[Thread], usages: Sequence[Sequence[TokenUsage]]) -> float:
    return _dollars(
        [
            (r.model, u)
            for t, us in zip(threads, usages, strict=True)
            for r, u in zip(t.requests, us, strict=True)
        ]
    )


def _recorded(threads: Sequence[Thread]) -> list[list[TokenUsage]]:
    return [[r.usage for r in t.requests] for t in threads]


def _peak(usages: Sequence[TokenUsage]) -> int:
    return max((u.context for u in usages), default=0)


def _used(threads: Sequence[Thread], savings: Sequence[Sequence[Saving]]) -> list[list[TokenUsage]]:
    return [
        replayed(t, s) if s else [r.usage for r in t.requests] for t, s in zip(threads, savings, strict=True)
    ]


@dataclass(frozen=True)
class _ReadBack:
    """A replay with every output quoted later read back whole (`read_backs`)."""

    usd: float
    peak: int
    used: list[list[TokenUsage]]
    """Each thread's usage."""
    again_usd: float
    """The read requests themselves."""


def _read_back(
    threads: Sequence[Thread],
    savings: Sequence[Sequence[Saving]],
    hits: Sequence[Sequence[SpillHit]],
    rate: float,
) -> _ReadBack:
    found = [read_backs(t, h, rate) for t, h in zip(threads, hits, strict=True)]
    used = _used(threads, [[*s, *added] for s, (added, _) in zip(savings, found, strict=True)])
    again = _dollars(
        [
            (t.requests[i].model, us[i])
            for t, us, (_, repeat) in zip(threads, used, found, strict=True)
            for i in repeat
        ]
    )
    return _ReadBack(_priced(threads, used) + again, _peak(used[0]), used, again)


def _line(
    threads: Sequence[Thread], savings: Sequence[Sequence[Saving]], recorded_usd: float, fixed_usd: float
) -> tuple[ReplayLine, list[list[TokenUsage]]]:
    used = _used(threads, savings)
    saved = sum(
        r.usage.context - u.context
        for t, us in zip(threads, used, strict=True)
        for r, u in zip(t.requests, us, strict=True)
    )
    line = ReplayLine(
        cost_usd=_priced(threads, used) + fixed_usd,
        recorded_usd=recorded_usd,
        main_peak=_peak(used[0]),
        tokens_saved=saved,
        read_back_usd=_priced(threads, used) + fixed_usd,
        read_back_peak=_peak(used[0]),
    )
    return line, used


def _as_recorded(
    session: SessionData, threads: Sequence[Thread], fixed: Sequence[Thread], unkept: Sequence[TokenUsage]
) -> AsRecorded:
    every = [r for t in (*threads, *fixed) for r in t.requests]
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
    return AsRecorded(
        requests=len(every) + len(unkept),
        tokens=tokens,
        cost_usd=_dollars([*((r.model, r.usage) for r in every), *((model, u) for u in unkept)]),
        cost_lower_bound=any(r.mid_stream for r in every),
        main_peak=_peak([r.usage for r in threads[0].requests]),
        compactions=sum(1 for e in session.main if e.get("subtype") == "compact_boundary"),
        compactions_estimated=len(unkept),
        resumes=len(resume_points(session.main, None)),
        subagents=subagent_runs(session.main, workers).total,
    )


def _layer4_line(resumes: Sequence[ResumeReplay], line: ReplayLine) -> Layer4Line:
    return Layer4Line(
        cost_usd=line.cost_usd,
        recorded_usd=line.recorded_usd,
        main_peak=line.main_peak,
        tokens_saved=line.tokens_saved,
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


async def what_if_session(session: SessionData, options: WhatIfOptions | None = None) -> SessionWhatIf:
    """The what-if of one session (reads nothing but `session`; layer 4 runs in an in-memory store)."""
    options = options or WhatIfOptions()
    main = thread_of("main", session.main)
    subs = [thread_of(p, e) for p, e in session.subagents.items() if not m.is_compaction(p)]
    fixed = [thread_of(p, e) for p, e in session.subagents.items() if m.is_compaction(p)]
    threads = [main, *subs]
    rate = tokens_per_char(threads)
    unkept = unkept_compactions(main, fixed, rate)
    recorded = _as_recorded(session, threads, fixed, unkept)
    fixed_usd = _priced(fixed, _recorded(fixed)) + _dollars([(main_model(main), u) for u in unkept])
    total = recorded.cost_usd
    none: list[list[Saving]] = [[] for _ in threads]

    hits = [spill_hits(t, options.spill) for t in threads]
    spill_cuts = [spill_savings(t, h, rate) for t, h in zip(threads, hits, strict=True)]
    spill, _ = _line(threads, spill_cuts, total, fixed_usd)
    back = _read_back(threads, spill_cuts, hits, rate)

    resumes = await replay_resumes(session.project_key, session.session_id, session.main, options.layer4)
    cut4 = [layer4_savings(main, resumes, rate), *none[1:]]
    layer4, _ = _line(threads, cut4, total, fixed_usd)

    spilled = spilled_entries(session.main, hits[0])
    over = await replay_resumes(session.project_key, session.session_id, spilled, options.layer4)
    both_cuts = [[*spill_cuts[0], *layer4_savings(main, over, rate)], *spill_cuts[1:]]
    both, used = _line(threads, both_cuts, total, fixed_usd)
    worst = _read_back(threads, both_cuts, hits, rate)
    both = dataclasses.replace(both, read_back_usd=worst.usd + fixed_usd, read_back_peak=worst.peak)

    others = (
        _priced(threads[1:], used[1:]) + fixed_usd,
        _priced(threads[1:], worst.used[1:]) + fixed_usd + worst.again_usd,
    )
    return SessionWhatIf(
        session_id=session.session_id,
        project_key=session.project_key,
        path=session.path,
        started=session.started,
        ended=session.ended,
        tokens_per_char=round(rate, 4),
        as_recorded=recorded,
        layers=Layers(
            spill=SpillLine(
                cost_usd=spill.cost_usd,
                recorded_usd=total,
                main_peak=spill.main_peak,
                tokens_saved=spill.tokens_saved,
                read_back_usd=back.usd + fixed_usd,
                read_back_peak=back.peak,
                outputs=sum(len(h) for h in hits),
                main_outputs=len(hits[0]),
                chars_kept_out=sum(hit.saved for h in hits for hit in h),
                quoted_later=sum(hit.quoted_later for h in hits for hit in h),
            ),
            layer4=_layer4_line(resumes, layer4),
            spill_and_layer4=both,
            handoff=handoff_line(main, fixed, rate),
            glance=glance_line(main),
            delegation=delegation_line(main, (used[0], worst.used[0]), others, rate, options.delegation),
        ),
        main_context=tuple(r.usage.context for r in main.requests),
        main_context_after=tuple(u.context for u in used[0]),
        title=_title(session.main) if options.show_prompts else "",
    )
