"""`build_report`: read a history (a store and the workbench beside it, or the CLI's own transcripts) and
compute its `EconomyReport`, one session at a time.

Nothing is modified. Each session is read, reduced to its part of the report (`flower.report._partial`)
and let go before the next is read, so a long history takes the memory of its largest session, not of
all of them; the parts are merged at the end (`flower.report._merge`). What each resume rewrote is
recomputed: the history before each prompt that started a new process (`flower.stores._rewrite.resumes`)
is run through layer 4's pure rewrites (`flower.stores._rewrite.rewrite_history`) with the given policies
and the resume's time, which is what a `PruningSessionStore` handed the CLI at that resume. So the report
works for any store, including one written without flower. The windows of the models come from the
bundled CLI when it can be asked (`flower.report._windows`), else from `flower.report._pricing`.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

import anyio
from claude_agent_sdk import SessionStore

from .._run.sync import run_blocking
from .._util.check import checked
from . import _metrics as m
from ._economy import EconomyReport
from ._load import Loaded
from ._merge import merge_parts
from ._options import ReportOptions
from ._partial import SessionPart, SpillRows, session_part
from ._sources import open_source, unmatched
from ._windows import cli_windows

__all__ = ["ReportOptions", "build_report", "build_report_sync", "compute_report", "main_models"]

Progress = Callable[[int, int], object]
"""Called after each session read: `(sessions done, sessions listed)`."""


def _roots(options: ReportOptions, workbench: str | None) -> list[str]:
    roots = [".flower/scripts", *options.scripts]
    if workbench:
        roots.append(os.path.join(os.path.abspath(workbench), "scripts"))
    return roots


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
    rows = SpillRows.of(loaded.spills)
    roots = _roots(options, loaded.workbench)
    parts = [session_part(session, options, roots, rows) for session in loaded.sessions]
    return merge_parts(
        parts,
        source=loaded.source,
        options=options,
        windows=windows or {},
        workbench=loaded.workbench,
        unclaimed=rows.unnamed,
        pings=loaded.pings,
    )


@checked
async def build_report(
    source: str | os.PathLike[str] | SessionStore | None,
    *,
    options: ReportOptions | None = None,
    project_key: str | None = None,
    sessions: Sequence[str] | None = None,
    workbench: str | os.PathLike[str] | None = None,
    since: str | datetime | None = None,
    until: str | datetime | None = None,
    progress: Progress | None = None,
) -> EconomyReport:
    """The economy report of every session in `source` (or only `sessions`), read one at a time.

    `source` is a workspace, its `.flower/` directory, a `.db` file, any `SessionStore` (give
    `project_key` unless it is a `SqliteSessionStore`; a Runtime's `rt.store` is read beneath its
    rewriting layer), or the CLI's own transcripts: its projects directory (None: the one the CLI uses),
    a project directory or one `.jsonl` file. `project_key` keeps one project
    (a name or a shell pattern); `since`/`until` keep the sessions active in that time range (ISO dates,
    UTC when no zone is given). `workbench` is where `spill/` and `scripts/` are, when not beside the
    store. Raises `SpecError` for a source that is none of those, `StoreError` for a store that cannot
    be read.
    """
    options = options or ReportOptions()
    opened = await open_source(
        source, project_key=project_key, sessions=sessions, since=since, until=until, workbench=workbench
    )
    async with opened:
        unmatched(opened)
        bench = str(opened.workbench) if opened.workbench is not None else None
        rows = SpillRows.of(await anyio.to_thread.run_sync(opened.spills))
        roots = _roots(options, bench)
        parts: list[SessionPart] = []
        async for session in opened.sessions():
            parts.append(await anyio.to_thread.run_sync(session_part, session, options, roots, rows))
            if progress is not None:
                progress(len(parts), len(opened.places))
    pings = await anyio.to_thread.run_sync(opened.pings, [p.summary.session_id for p in parts])
    models = [model for model, _ in Counter(p.summary.model for p in parts if p.summary.model).most_common()]
    windows = await cli_windows(models) if options.ask_cli and options.window is None else {}
    return merge_parts(
        parts,
        source=opened.label,
        options=options,
        windows=windows,
        workbench=bench,
        unclaimed=rows.unnamed,
        pings=pings,
    )


@checked
def build_report_sync(
    source: str | os.PathLike[str] | SessionStore | None,
    *,
    options: ReportOptions | None = None,
    project_key: str | None = None,
    sessions: Sequence[str] | None = None,
    workbench: str | os.PathLike[str] | None = None,
    since: str | datetime | None = None,
    until: str | datetime | None = None,
) -> EconomyReport:
    """Blocking form of `build_report()`; inside a running event loop it raises `SpecError`."""

    async def run() -> EconomyReport:
        return await build_report(
            source,
            options=options,
            project_key=project_key,
            sessions=sessions,
            workbench=workbench,
            since=since,
            until=until,
        )

    return run_blocking(run, "build_report_sync", "await build_report(...)")
