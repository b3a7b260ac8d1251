"""One session's share of an economy report, computed from that session alone.

A report over a long history is the merge of these parts (`flower.report._merge`), so it never needs more
than one session's transcripts in memory. Everything a part holds is a count, a sum, a small set (script
names) or a per-turn series of ints; what depends on every session at once (the handoff chain, the
windows, the context's slope, the notes over all replies) is decided at the merge.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._cost import price
from .._handoff.document import TAKEOVER_PROMPT
from .._usage import TokenUsage
from ..stores import PrunePolicy
from . import _metrics as m
from ._delegation import Delegation, delegation
from ._gaps import subagent_runs
from ._load import SessionData
from ._options import ReportOptions
from ._parts import Cost, Mandates, Reports, ResumeSummary, SessionSummary, Spills, Split, Tokens
from ._resumed import HANDOFF, recomputed, resume_points

__all__ = ["SessionPart", "SpillRows", "cost_of", "session_part"]

_TAKEOVER = TAKEOVER_PROMPT.split("{", 1)[0].strip()
_GENERATION = re.compile(r"generation (\d+)")
_SENT_BACK = re.compile(r"your report is ([\d,]+) chars")
_CUT = re.compile(r"\[flower: report cut at ([\d,]+) of ([\d,]+) chars; the whole report: ")


@dataclass
class SpillRows:
    """The rows of a workbench's spill manifest, by session: each row is given to one session only."""

    by_session: dict[str, list[Mapping[str, Any]]] = field(default_factory=dict)
    unnamed: list[Mapping[str, Any]] = field(default_factory=list)
    """Rows with no session id: a session takes those whose call is one of its own."""

    @classmethod
    def of(cls, rows: Iterable[Mapping[str, Any]]) -> SpillRows:
        found = cls()
        for row in rows:
            session = row.get("session_id")
            if session:
                found.by_session.setdefault(str(session), []).append(row)
            else:
                found.unnamed.append(row)
        return found

    def take(self, session_id: str, calls: Mapping[str, str]) -> list[Mapping[str, Any]]:
        """This session's rows (removed from the pool)."""
        mine = self.by_session.pop(session_id, [])
        if self.unnamed and calls:
            kept: list[Mapping[str, Any]] = []
            for row in self.unnamed:
                (mine if row.get("tool_use_id") in calls else kept).append(row)
            self.unnamed = kept
        return mine


@dataclass(frozen=True, kw_only=True)
class SessionPart:
    """What one session adds to a report."""

    summary: SessionSummary
    """Its row (generation, predecessor and window are settled at the merge)."""
    started: str
    ended: str
    successor: bool
    """Its first prompt is the handoff's takeover prompt."""
    previous: int | None
    """The generation that prompt names, if any."""
    turns: Split
    body_chars: Split
    tool_calls: Split
    denials: Split
    refusals: Split
    api_errors: int
    mandates: Mandates
    written: tuple[str, ...]
    run: tuple[str, ...]
    writes: int
    runs: int
    spills: Spills
    reports: Reports
    resumes: tuple[ResumeSummary, ...]
    tokens: Tokens
    by_model: tuple[tuple[str, TokenUsage], ...]
    replies: int
    mid_stream_recorded: int
    """Output tokens recorded for the replies counted from their content (`Message.mid_stream`)."""
    mid_stream_derived: int
    delegation: Delegation
    notes: tuple[str, ...]


def cost_of(replies: Sequence[m.Message]) -> Cost:
    """Replies priced by model; a lower bound when some output counts are (`Message.mid_stream`)."""
    return priced(usage_by_model(replies), any(reply.mid_stream for reply in replies))


def usage_by_model(replies: Iterable[m.Message]) -> dict[str, TokenUsage]:
    """The replies' usage summed per model."""
    by_model: dict[str, TokenUsage] = {}
    for reply in replies:
        by_model[reply.model] = by_model.get(reply.model, TokenUsage()) + reply.usage
    return by_model


def priced(by_model: Mapping[str, TokenUsage], lower_bound: bool, keep_warm_usd: float = 0.0) -> Cost:
    """Usage per model in dollars, with flower's one cost model (as `StepResult.cost_usd`); of them,
    `keep_warm_usd` were keep-warm pings'."""
    found: list[tuple[str, float]] = []
    unpriced: list[str] = []
    for model, usage in sorted(by_model.items()):
        cost = price([usage], model=model)
        unpriced.extend(cost.unpriced)
        found.append((model, cost.total))
    return Cost(
        usd=sum(c for _, c in found),
        by_model=tuple(found),
        unpriced=tuple(unpriced),
        lower_bound=lower_bound,
        keep_warm_usd=keep_warm_usd,
    )


def _role(first_prompt: str) -> tuple[bool, int | None]:
    if not first_prompt.lstrip().startswith(_TAKEOVER):
        return False, None
    found = _GENERATION.search(first_prompt[:400])
    return True, int(found.group(1)) if found else None


def _spills(rows: Sequence[Mapping[str, Any]], results: Mapping[str, str]) -> Spills:
    chars_by_call: dict[str, int] = {}
    chars = kept_out = 0
    for row in rows:
        size = row.get("chars")
        size = size if isinstance(size, int) else 0
        chars += size
        call = row.get("tool_use_id")
        if isinstance(call, str) and call:
            chars_by_call[call] = chars_by_call.get(call, 0) + size
        else:
            kept_out += size
    for call, size in chars_by_call.items():
        kept_out += max(0, size - len(results.get(call, "")))
    main = sum(1 for row in rows if not row.get("agent_id"))
    return Spills(count=len(rows), main=main, subagents=len(rows) - main, chars=chars, kept_out=kept_out)


def spill_totals(rows: Sequence[Mapping[str, Any]]) -> Spills:
    """Rows no session of the report claimed (no session id, a call of none of them)."""
    return _spills(rows, {})


def _reports(entries: Iterable[Mapping[str, Any]], main_results: Iterable[str]) -> Reports:
    """Long reports: cut by `report_cut` (the note in a main-thread Agent result) or sent back by
    `report_guard` (SubagentStop blocks in workers' transcripts)."""
    sent_back = cut = chars = 0
    for entry in entries:
        attachment = entry.get("attachment")
        if not isinstance(attachment, Mapping) or attachment.get("type") != "hook_blocking_error":
            continue
        if attachment.get("hookEvent") != "SubagentStop":
            continue
        sent_back += 1
        error = attachment.get("blockingError")
        text = error.get("blockingError") if isinstance(error, Mapping) else error
        found = _SENT_BACK.search(text) if isinstance(text, str) else None
        chars += int(found.group(1).replace(",", "")) if found else 0
    for text in main_results:
        found = _CUT.search(text)
        if found:
            cut += 1
            chars += int(found.group(2).replace(",", "")) - int(found.group(1).replace(",", ""))
    return Reports(sent_back=sent_back, cut=cut, chars=chars)


def session_part(
    session: SessionData, options: ReportOptions, roots: Sequence[str], rows: SpillRows
) -> SessionPart:
    """The part of `session` (pure but for taking its rows out of `rows`): `roots` are the `scripts/`
    directories a run of a script is recognised in."""
    main = session.main
    workers = {p: e for p, e in session.subagents.items() if not m.is_compaction(p)}
    sub_entries = [e for entries in workers.values() for e in entries]
    main_turns = m.turns(main)
    sub_turns = [t for sub in workers.values() for t in m.turns(sub)]
    compaction_turns = [
        t for path, sub in session.subagents.items() if m.is_compaction(path) for t in m.turns(sub)
    ]
    main_calls, sub_calls = m.tool_uses(main), [c for sub in workers.values() for c in m.tool_uses(sub)]
    refused_main, refused_sub = m.refused_calls(main), m.refused_calls(sub_entries)
    activity = m.script_activity([*main_calls, *sub_calls], roots, refused_main | refused_sub)
    main_results = m.result_texts(main)
    results = {**m.result_texts(sub_entries), **main_results}
    replies = [*main_turns, *sub_turns, *compaction_turns]
    counted = [reply for reply in replies if reply.mid_stream]
    texts = [text for _, text in m.prompts(main)]
    successor, previous = _role(texts[0]) if texts else (False, None)
    models: dict[str, int] = {}
    for turn in main_turns:
        models[turn.model] = models.get(turn.model, 0) + 1
    runs = subagent_runs(main, workers)
    said = m.mandates(main)
    notes: list[str] = []
    resumes = recomputed(
        session,
        PrunePolicy(keep_denials=options.keep_denials),
        options.ephemeral,
        options.trim,
        options.cache,
        notes,
    )
    summary = SessionSummary(
        session_id=session.session_id,
        project_key=session.project_key,
        role="successor" if successor else "start",
        generation=1,
        predecessor=None,
        handed_off=any(text.lstrip().startswith(HANDOFF) for text in texts),
        prompts=len(texts),
        resumes=len(resume_points(main, None)),
        turns=len(main_turns),
        subagent_runs=runs.total,
        subagent_runs_from_calls=runs.from_calls,
        compactions=sum(1 for e in main if e.get("subtype") == "compact_boundary"),
        model=max(models, key=lambda k: models[k]) if models else "",
        context=tuple(t.usage.context for t in main_turns),
    )
    return SessionPart(
        summary=summary,
        started=session.started,
        ended=session.ended,
        successor=successor,
        previous=previous,
        turns=Split(main=len(main_turns), subagents=len(sub_turns)),
        body_chars=Split(main=m.body_chars(main), subagents=m.body_chars(sub_entries)),
        tool_calls=Split(main=len(main_calls), subagents=len(sub_calls)),
        denials=Split(main=m.denial_count(main), subagents=m.denial_count(sub_entries)),
        refusals=Split(main=len(refused_main), subagents=len(refused_sub)),
        api_errors=m.api_error_count(main) + m.api_error_count(sub_entries),
        mandates=Mandates(
            count=len(said),
            chars=sum(len(text) for text in said),
            longest=max((len(text) for text in said), default=0),
            restated_chars=sum(m.restated_chars(text, options.rules) for text in said),
        ),
        written=activity.written,
        run=activity.run,
        writes=activity.writes,
        runs=activity.runs,
        spills=_spills(rows.take(session.session_id, results), results),
        reports=_reports(sub_entries, main_results.values()),
        resumes=tuple(resumes),
        tokens=Tokens(
            main=sum((t.usage for t in main_turns), TokenUsage()),
            subagents=sum((t.usage for t in sub_turns), TokenUsage()),
            compaction=sum((t.usage for t in compaction_turns), TokenUsage()),
            mid_stream=len(counted),
        ),
        by_model=tuple(usage_by_model(replies).items()),
        replies=len(replies),
        mid_stream_recorded=sum(reply.recorded_output for reply in counted),
        mid_stream_derived=sum(reply.usage.output for reply in counted),
        delegation=delegation(
            main, list(session.subagents.values()), priced=lambda r: cost_of(r).usd, total_usd=0.0
        ),
        notes=tuple(notes),
    )
