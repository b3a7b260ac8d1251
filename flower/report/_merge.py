"""The economy report from the parts of its sessions (`flower.report._partial`): sums, unions, and what
needs every session at once.

Decided here: each session's place in a handoff chain (sessions oldest first; a successor's predecessor
is the retired session that ended last before it started), each session's window (the CLI's answer for
its model, else the table's), the main thread's growth over every session, the script sets' unions, the
dollars per model, and the notes over all replies.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from .._cost import price
from .._usage import TokenUsage
from .._warm.records import record_usage
from . import _metrics as m
from ._delegation import Delegation
from ._economy import EconomyReport
from ._gaps import output_counts_note, runs_note
from ._options import ReportOptions
from ._partial import SessionPart, priced, spill_totals
from ._parts import ContextGrowth, Mandates, Reports, Scripts, SessionSummary, Spills, Split, Tokens
from ._pricing import window_for

__all__ = ["merge_parts"]


def _split(parts: Sequence[SessionPart], name: str) -> Split:
    splits: list[Split] = [getattr(part, name) for part in parts]
    return Split(main=sum(s.main for s in splits), subagents=sum(s.subagents for s in splits))


def _chained(parts: Sequence[SessionPart], windows: Mapping[str, int]) -> list[SessionSummary]:
    """Each session's row with its generation, predecessor and window (parts oldest first)."""
    summaries: list[SessionSummary] = []
    waiting: list[tuple[str, SessionSummary]] = []  # (ended, retired session) without a successor yet
    for part in parts:
        row = part.summary
        predecessor = _predecessor(waiting, part.started) if part.successor else None
        generation = (
            (part.previous + 1) if part.previous else (predecessor.generation + 1 if predecessor else 1)
        )
        row = dataclasses.replace(
            row,
            generation=generation if part.successor else 1,
            predecessor=predecessor.session_id if predecessor else None,
            window=windows.get(row.model) or window_for(row.model),
        )
        if row.handed_off:
            waiting.append((part.ended, row))
        summaries.append(row)
    return summaries


def _predecessor(waiting: list[tuple[str, SessionSummary]], started: str) -> SessionSummary | None:
    """The retired session that ended last before `started` (a successor starts as its predecessor ends)."""
    before = [item for item in waiting if item[0] <= started] or waiting
    if not before:
        return None
    chosen = max(before, key=lambda item: item[0])
    waiting.remove(chosen)
    return chosen[1]


def _context(
    sessions: Sequence[SessionSummary], options: ReportOptions, windows: Mapping[str, int]
) -> ContextGrowth:
    series = [s.context for s in sessions if s.context]
    models = Counter(s.model for s in sessions if s.model)
    model = models.most_common(1)[0][0] if models else ""
    if options.window is not None:
        window, source = options.window, "option"
    elif model in windows:
        window, source = windows[model], f"model {model}, as the CLI reports it"
    else:
        window, source = window_for(model), f"model {model or 'unknown'}"
    slope = m.pooled_slope(series)
    start = series[0][0] if series else 0
    return ContextGrowth(
        window=window,
        window_from=source,
        turns=sum(len(points) for points in series),
        start=start,
        peak=max((max(points) for points in series), default=0),
        last=series[-1][-1] if series else 0,
        slope=slope,
        wall_turns=m.turns_to_wall(start, slope, window),
    )


def _sum_fields(items: Sequence[Any], kind: type[Any], **kept: Any) -> Any:
    """A dataclass of `kind` whose int and float fields are the sums over `items` (others: `kept`)."""
    values: dict[str, Any] = dict(kept)
    for f in dataclasses.fields(kind):
        if f.name not in values:
            values[f.name] = sum(getattr(item, f.name) for item in items)
    return kind(**values)


def merge_parts(
    parts: Sequence[SessionPart],
    *,
    source: str,
    options: ReportOptions,
    windows: Mapping[str, int],
    workbench: str | None,
    unclaimed: Sequence[Mapping[str, Any]] = (),
    pings: Sequence[Mapping[str, Any]] = (),
) -> EconomyReport:
    """The report of these sessions (pure). `unclaimed` are spill rows no session claimed, `pings` the
    keep-warm pings of these sessions (`flower._warm.records`), priced with their replies."""
    parts = sorted(parts, key=lambda p: p.started)
    sessions = _chained(parts, windows)
    notes: list[str] = []
    if not workbench:
        notes.append("no workbench beside the store: spills and its scripts/ were not read")
    mid = sum(p.tokens.mid_stream for p in parts)
    notes.extend(
        note
        for note in (
            output_counts_note(
                mid,
                sum(p.replies for p in parts),
                sum(p.mid_stream_recorded for p in parts),
                sum(p.mid_stream_derived for p in parts),
            ),
            runs_note(sum(s.subagent_runs_from_calls for s in sessions)),
        )
        if note
    )
    notes.extend(note for p in parts for note in p.notes)
    by_model: dict[str, TokenUsage] = {}
    for part in parts:
        for model, usage in part.by_model:
            by_model[model] = by_model.get(model, TokenUsage()) + usage
    warm = 0.0
    for row in pings:
        model = str(row.get("model") or "")
        by_model[model] = by_model.get(model, TokenUsage()) + record_usage(row)
        warm += price([record_usage(row)], model=model).total
    cost = priced(by_model, mid > 0, warm)
    spills = [p.spills for p in parts]
    if unclaimed:
        spills.append(spill_totals(unclaimed))
    written = {name: None for p in parts for name in p.written}
    run = {name: None for p in parts for name in p.run}
    return EconomyReport(
        source=source,
        sessions=tuple(sessions),
        turns=_split(parts, "turns"),
        body_chars=_split(parts, "body_chars"),
        tool_calls=_split(parts, "tool_calls"),
        denials=_split(parts, "denials"),
        refusals=_split(parts, "refusals"),
        subagent_runs=sum(s.subagent_runs for s in sessions),
        compactions=sum(s.compactions for s in sessions),
        api_errors=sum(p.api_errors for p in parts),
        handoffs=sum(1 for s in sessions if s.role == "successor"),
        mandates=Mandates(
            count=sum(p.mandates.count for p in parts),
            chars=sum(p.mandates.chars for p in parts),
            longest=max((p.mandates.longest for p in parts), default=0),
            restated_chars=sum(p.mandates.restated_chars for p in parts),
        ),
        scripts=Scripts(
            written=len(written),
            writes=sum(p.writes for p in parts),
            runs=sum(p.runs for p in parts),
            scripts_run=len(run),
        ),
        spills=_sum_fields(spills, Spills),
        reports=_sum_fields([p.reports for p in parts], Reports),
        resumes=tuple(r for p in parts for r in p.resumes),
        context=_context(sessions, options, windows),
        tokens=Tokens(
            main=sum((p.tokens.main for p in parts), TokenUsage()),
            subagents=sum((p.tokens.subagents for p in parts), TokenUsage()),
            compaction=sum((p.tokens.compaction for p in parts), TokenUsage()),
            keep_warm=sum((record_usage(row) for row in pings), TokenUsage()),
            pings=len(pings),
            mid_stream=mid,
        ),
        cost=cost,
        delegation=_sum_fields([p.delegation for p in parts], Delegation, total_usd=cost.usd),
        notes=tuple(notes),
    )
