"""`build_what_if`: read a history one session at a time and replay flower's layers on each.

Read-only and local: the transcripts are read through `flower.report._sources` (the CLI's projects
directory by default), each session is replayed (`what_if_session`) and let go before the next is read,
so memory holds one session's transcripts and every session's small result.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from datetime import datetime

from claude_agent_sdk import SessionStore

from ..._run.sync import run_blocking
from ..._util.check import checked
from .._sources import open_source, unmatched
from .lines import SessionWhatIf
from .session import WhatIfOptions, what_if_session
from .what_if_report import WhatIfReport, total_of

__all__ = ["NOTES", "build_what_if", "build_what_if_sync"]

Progress = Callable[[int, int], object]
"""Called after each session: `(sessions done, sessions listed)`."""

NOTES = (
    "replayed, not re-run: each layer changes what the recorded requests held, and the model is taken to "
    "have made the same requests and written the same output, plus the read-backs a model shown a spilled "
    "output's preview is expected to make (calibrated on the CLI's own previews in real transcripts)",
    "characters become tokens at each session's own rate (its requests that added tool output, median), "
    "else at its model's typical rate (listed under assumptions); the cache marks (reads, 5-minute and "
    "1-hour writes) are the recorded ones",
    "layer 4 acts only at resumes the CLI marked (from CLI 2.1.327 on, a mode entry at the exit of a "
    "--resume'd process; a SessionStart:resume hook entry when such a hook is set); a history without "
    "marks shows none",
)


@checked
async def build_what_if(
    source: str | os.PathLike[str] | SessionStore | None = None,
    *,
    options: WhatIfOptions | None = None,
    project_key: str | None = None,
    sessions: Sequence[str] | None = None,
    since: str | datetime | None = None,
    until: str | datetime | None = None,
    progress: Progress | None = None,
) -> WhatIfReport:
    """What flower's layers would have changed in `source`'s sessions: the CLI's projects directory (None:
    the one the CLI uses), a project directory, one `.jsonl` transcript, or a flower store.

    Filters as `flower.report.build_report`'s (`sessions`: ids or prefixes of them). Raises `SpecError`
    for a source that is none of those, and for a session id or prefix that names no session or two.
    """
    options = options or WhatIfOptions()
    opened = await open_source(source, project_key=project_key, sessions=sessions, since=since, until=until)
    found: list[SessionWhatIf] = []
    async with opened:
        unmatched(opened)
        async for session in opened.sessions():
            found.append(await what_if_session(session, options))
            if progress is not None:
                progress(len(found), len(opened.places))
    found.sort(key=lambda s: (s.started, s.session_id))
    notes = list(NOTES)
    if any(s.as_recorded.cost_lower_bound for s in found):
        notes.append(
            "some replies recorded their output mid-stream (CLI 2.1.42 and earlier): their output is counted "
            "from their content, so costs are lower bounds"
        )
    return WhatIfReport(
        source=opened.label,
        filters={
            "project_key": project_key,
            "sessions": list(sessions) if sessions is not None else None,
            "since": str(since) if since is not None else None,
            "until": str(until) if until is not None else None,
        },
        sessions=tuple(found),
        total=total_of(found),
        notes=tuple(notes),
        skipped=tuple(opened.skipped),
        not_transcripts=tuple(opened.not_transcripts),
    )


@checked
def build_what_if_sync(
    source: str | os.PathLike[str] | SessionStore | None = None,
    *,
    options: WhatIfOptions | None = None,
    project_key: str | None = None,
    sessions: Sequence[str] | None = None,
    since: str | datetime | None = None,
    until: str | datetime | None = None,
) -> WhatIfReport:
    """Blocking form of `build_what_if()`; inside a running event loop it raises `SpecError`."""

    async def run() -> WhatIfReport:
        return await build_what_if(
            source, options=options, project_key=project_key, sessions=sessions, since=since, until=until
        )

    return run_blocking(run, "build_what_if_sync", "await build_what_if(...)")
