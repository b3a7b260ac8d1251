"""`build_report`: read a store (and the workbench beside it) and compute its `EconomyReport`.

The store is never modified. What each resume rewrote is recomputed: the history before each prompt
that started a new process (`flower.stores.rewrite.resumes`) is run through layer 4's pure rewrites
(`flower.stores.rewrite.rewrite_history`) with the given policies and the resume's time, which is what
a `PruningSessionStore` handed the CLI at that resume. So the report works for any store, including
one written without flower. The windows of the models come from the bundled CLI when it can be asked
(`flower.report.windows`), else from `flower.report.pricing`.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
from claude_agent_sdk import SessionStore

from .._errors import SpecError
from .._run.sync import run_blocking
from .._util.check import check_fields, checked
from ..cost import price
from ..handoff.document import TAKEOVER_PROMPT
from ..stores import CachePolicy, EphemeralPolicy, PrunePolicy, TrimPolicy
from ..usage import TokenUsage
from ..wall.rules import WORKER_RULES
from ..warm.records import record_usage
from . import metrics as m
from ._load import Loaded, SessionData, load_source, spills_of
from .delegation import delegation
from .economy import EconomyReport
from .gaps import output_note, runs_note, subagent_runs
from .parts import (
    ContextGrowth,
    Cost,
    Mandates,
    Reports,
    Scripts,
    SessionSummary,
    Spills,
    Split,
    Tokens,
)
from .pricing import window_for
from .resumed import HANDOFF, recomputed, resume_points
from .windows import cli_windows

__all__ = ["ReportOptions", "build_report", "build_report_sync", "compute_report", "main_models"]

_TAKEOVER = TAKEOVER_PROMPT.split("{", 1)[0].strip()
_GENERATION = re.compile(r"generation (\d+)")


@dataclass(frozen=True, kw_only=True)
class ReportOptions:
    """How to read a run: the window for the extrapolation, the rules a mandate may restate, and the
    layer-4 policies its resumes ran with (the Runtime's defaults unless told)."""

    window: int | None = None
    """The context window in tokens; None takes the one the CLI reports for the main thread's model."""
    ask_cli: bool = True
    """Ask the bundled CLI for each model's window (`rawMaxTokens`, no API request); False, or when it
    cannot answer: the table of `flower.report.pricing`."""
    rules: tuple[str, ...] = (WORKER_RULES,)
    """Texts the workers already had: a mandate copying them restates them."""
    scripts: tuple[str, ...] = ()
    """Extra `scripts/` directories (the workbench's own and any `.flower/scripts` are always looked at)."""
    keep_denials: int = 1
    """`PrunePolicy.keep_denials` of the resumes (the Runtime's `keep_denials`)."""
    ephemeral: EphemeralPolicy | None = field(default_factory=EphemeralPolicy)
    """The expiry policy of the resumes; None when expiry was off."""
    trim: TrimPolicy | None = None
    """The trim policy of the resumes; None (the default) when trim was off."""
    cache: CachePolicy | None = field(default_factory=CachePolicy)
    """The cache policy of the resumes' store (a warm resume repeats the last cold one); None when it
    had none."""

    def __post_init__(self) -> None:
        check_fields(self)
        if self.window is not None and (not isinstance(self.window, int) or self.window <= 0):
            raise SpecError(f"ReportOptions.window must be a positive int of tokens, got {self.window!r}")
        if isinstance(self.rules, str) or not all(isinstance(rule, str) for rule in self.rules):
            raise SpecError("ReportOptions.rules must be a tuple of str")
        if isinstance(self.scripts, str) or not all(isinstance(path, str) for path in self.scripts):
            raise SpecError("ReportOptions.scripts must be a tuple of str")
        PrunePolicy(keep_denials=self.keep_denials)  # checks it


def _role(first_prompt: str) -> tuple[bool, int | None]:
    if not first_prompt.lstrip().startswith(_TAKEOVER):
        return False, None
    found = _GENERATION.search(first_prompt[:400])
    return True, int(found.group(1)) if found else None


def _workers(session: SessionData) -> dict[str, list[dict[str, Any]]]:
    return {path: entries for path, entries in session.subagents.items() if not m.is_compaction(path)}


def _compaction_turns(session: SessionData) -> list[m.Message]:
    return [t for path, sub in session.subagents.items() if m.is_compaction(path) for t in m.turns(sub)]


def _sessions(loaded: Loaded, windows: Mapping[str, int]) -> list[SessionSummary]:
    summaries: list[SessionSummary] = []
    waiting: list[tuple[str, SessionSummary]] = []  # (ended, retired session) without a successor yet
    for session in loaded.sessions:
        asked = m.prompts(session.main)
        texts = [text for _, text in asked]
        successor, previous = _role(texts[0]) if texts else (False, None)
        predecessor = _predecessor(waiting, session.started) if successor else None
        generation = (previous + 1) if previous else ((predecessor.generation + 1) if predecessor else 1)
        handed_off = any(text.lstrip().startswith(HANDOFF) for text in texts)
        main_turns = m.turns(session.main)
        models = Counter(t.model for t in main_turns)
        model = models.most_common(1)[0][0] if models else ""
        runs = subagent_runs(session.main, _workers(session))
        summary = SessionSummary(
            session_id=session.session_id,
            project_key=session.project_key,
            role="successor" if successor else "start",
            generation=generation if successor else 1,
            predecessor=predecessor.session_id if predecessor else None,
            handed_off=handed_off,
            prompts=len(texts),
            resumes=len(resume_points(session.main, None)),
            turns=len(main_turns),
            subagent_runs=runs.total,
            subagent_runs_from_calls=runs.from_calls,
            compactions=sum(1 for e in session.main if e.get("subtype") == "compact_boundary"),
            model=model,
            window=windows.get(model) or window_for(model),
            context=tuple(t.usage.context for t in main_turns),
        )
        if handed_off:
            waiting.append((session.ended, summary))
        summaries.append(summary)
    return summaries


def _predecessor(waiting: list[tuple[str, SessionSummary]], started: str) -> SessionSummary | None:
    """The retired session that ended last before `started` (a successor starts as its predecessor ends)."""
    before = [item for item in waiting if item[0] <= started] or waiting
    if not before:
        return None
    chosen = max(before, key=lambda item: item[0])
    waiting.remove(chosen)
    return chosen[1]


def _spills(loaded: Loaded, results: Mapping[str, str]) -> Spills:
    rows = spills_of(loaded.spills, [s.session_id for s in loaded.sessions])
    chars_by_call: Counter[str] = Counter()
    chars = kept_out = 0
    for row in rows:
        size = row.get("chars")
        size = size if isinstance(size, int) else 0
        chars += size
        call = row.get("tool_use_id")
        if isinstance(call, str) and call:
            chars_by_call[call] += size
        else:
            kept_out += size
    for call, size in chars_by_call.items():
        kept_out += max(0, size - len(results.get(call, "")))
    main = sum(1 for row in rows if not row.get("agent_id"))
    return Spills(count=len(rows), main=main, subagents=len(rows) - main, chars=chars, kept_out=kept_out)


_SENT_BACK = re.compile(r"your report is ([\d,]+) chars")
_CUT = re.compile(r"\[flower: report cut at ([\d,]+) of ([\d,]+) chars; the whole report: ")


def _reports(entries: Sequence[Mapping[str, Any]], main_results: Iterable[str]) -> Reports:
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


def _cost(replies: Sequence[m.Message], pings: Sequence[Mapping[str, Any]] = ()) -> Cost:
    """The replies and the keep-warm pings priced by model; a lower bound when some output counts are
    (`Message.mid_stream`)."""
    by_model: dict[str, TokenUsage] = {}
    for reply in replies:
        by_model[reply.model] = by_model.get(reply.model, TokenUsage()) + reply.usage
    warm = 0.0
    for row in pings:
        model = str(row.get("model") or "")
        by_model[model] = by_model.get(model, TokenUsage()) + record_usage(row)
        warm += price([record_usage(row)], model=model).total
    priced: list[tuple[str, float]] = []
    unpriced: list[str] = []
    for model, usage in sorted(by_model.items()):
        cost = price([usage], model=model)  # flower's one cost model, as StepResult.cost_usd
        unpriced.extend(cost.unpriced)
        priced.append((model, cost.total))
    return Cost(
        usd=sum(c for _, c in priced),
        by_model=tuple(priced),
        unpriced=tuple(unpriced),
        lower_bound=any(reply.mid_stream for reply in replies),
        keep_warm_usd=warm,
    )


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


def main_models(loaded: Loaded) -> list[str]:
    """The models of the main threads' replies, most used first."""
    counted = Counter(t.model for s in loaded.sessions for t in m.turns(s.main))
    return [model for model, _ in counted.most_common()]


def compute_report(
    loaded: Loaded, options: ReportOptions | None = None, windows: Mapping[str, int] | None = None
) -> EconomyReport:
    """The report of what `load_source` read (pure: no I/O). `windows` maps models to the windows the
    CLI reported (`cli_windows`); a model it lacks takes the table's."""
    options = options or ReportOptions()
    windows = windows or {}
    notes: list[str] = []
    sessions = _sessions(loaded, windows)
    workers = [_workers(s) for s in loaded.sessions]
    main_entries = [e for s in loaded.sessions for e in s.main]
    sub_entries = [e for subs in workers for entries in subs.values() for e in entries]
    main_turns = [t for s in loaded.sessions for t in m.turns(s.main)]
    sub_turns = [t for subs in workers for sub in subs.values() for t in m.turns(sub)]
    compaction_turns = [t for s in loaded.sessions for t in _compaction_turns(s)]
    main_calls = [c for s in loaded.sessions for c in m.tool_uses(s.main)]
    sub_calls = [c for subs in workers for sub in subs.values() for c in m.tool_uses(sub)]
    said = m.mandates(main_entries)
    roots = [".flower/scripts", *options.scripts]
    if loaded.workbench:
        roots.append(os.path.join(os.path.abspath(loaded.workbench), "scripts"))
    refused_main, refused_sub = m.refused_calls(main_entries), m.refused_calls(sub_entries)
    activity = m.script_activity([*main_calls, *sub_calls], roots, refused_main | refused_sub)
    main_results = m.result_texts(main_entries)
    results = {**m.result_texts(sub_entries), **main_results}
    if not loaded.workbench:
        notes.append("no workbench beside the store: spills and its scripts/ were not read")
    replies = [*main_turns, *sub_turns, *compaction_turns]
    cost = _cost(replies, loaded.pings)
    notes.extend(
        note
        for note in (output_note(replies), runs_note(sum(s.subagent_runs_from_calls for s in sessions)))
        if note
    )
    return EconomyReport(
        source=loaded.source,
        sessions=tuple(sessions),
        turns=Split(main=len(main_turns), subagents=len(sub_turns)),
        body_chars=Split(main=m.body_chars(main_entries), subagents=m.body_chars(sub_entries)),
        tool_calls=Split(main=len(main_calls), subagents=len(sub_calls)),
        denials=Split(main=m.denial_count(main_entries), subagents=m.denial_count(sub_entries)),
        refusals=Split(main=len(refused_main), subagents=len(refused_sub)),
        subagent_runs=sum(s.subagent_runs for s in sessions),
        compactions=sum(s.compactions for s in sessions),
        api_errors=m.api_error_count(main_entries) + m.api_error_count(sub_entries),
        handoffs=sum(1 for s in sessions if s.role == "successor"),
        mandates=Mandates(
            count=len(said),
            chars=sum(len(text) for text in said),
            longest=max((len(text) for text in said), default=0),
            restated_chars=sum(m.restated_chars(text, options.rules) for text in said),
        ),
        scripts=Scripts(
            written=len(activity.written),
            writes=activity.writes,
            runs=activity.runs,
            scripts_run=len(activity.run),
        ),
        spills=_spills(loaded, results),
        reports=_reports(sub_entries, main_results.values()),
        resumes=tuple(
            r
            for s in loaded.sessions
            for r in recomputed(
                s,
                PrunePolicy(keep_denials=options.keep_denials),
                options.ephemeral,
                options.trim,
                options.cache,
                notes,
            )
        ),
        context=_context(sessions, options, windows),
        tokens=Tokens(
            main=sum((t.usage for t in main_turns), TokenUsage()),
            subagents=sum((t.usage for t in sub_turns), TokenUsage()),
            compaction=sum((t.usage for t in compaction_turns), TokenUsage()),
            keep_warm=sum((record_usage(row) for row in loaded.pings), TokenUsage()),
            pings=len(loaded.pings),
            mid_stream=sum(1 for reply in replies if reply.mid_stream),
        ),
        cost=cost,
        delegation=delegation(
            main_entries,
            [sub for s in loaded.sessions for sub in s.subagents.values()],
            priced=lambda replies: _cost(replies).usd,
            total_usd=cost.usd,
        ),
        notes=tuple(notes),
    )


@checked
async def build_report(
    source: str | os.PathLike[str] | SessionStore,
    *,
    options: ReportOptions | None = None,
    project_key: str | None = None,
    sessions: Sequence[str] | None = None,
    workbench: str | os.PathLike[str] | None = None,
) -> EconomyReport:
    """The economy report of every session in `source` (or only `sessions`).

    `source` is a workspace, its `.flower/` directory, a `.db` file, or any `SessionStore` (give
    `project_key` unless it is a `SqliteSessionStore`; a Runtime's `rt.store` is read beneath its
    rewriting layer). `workbench` is where `spill/` and `scripts/` are, when not beside the store.
    Raises `SpecError` for a source that is not a store, `StoreError` for one that cannot be read.
    """
    loaded = await load_source(source, project_key=project_key, sessions=sessions, workbench=workbench)
    options = options or ReportOptions()
    windows = await cli_windows(main_models(loaded)) if options.ask_cli and options.window is None else {}
    return await anyio.to_thread.run_sync(compute_report, loaded, options, windows)


@checked
def build_report_sync(
    source: str | os.PathLike[str] | SessionStore,
    *,
    options: ReportOptions | None = None,
    project_key: str | None = None,
    sessions: Sequence[str] | None = None,
    workbench: str | os.PathLike[str] | None = None,
) -> EconomyReport:
    """Blocking form of `build_report()`; inside a running event loop it raises `SpecError`."""

    async def run() -> EconomyReport:
        return await build_report(
            source, options=options, project_key=project_key, sessions=sessions, workbench=workbench
        )

    return run_blocking(run, "build_report_sync", "await build_report(...)")
