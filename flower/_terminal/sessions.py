"""`flower sessions`: the sessions of a workspace's store, with their cost and last activity; and the
session an id prefix names (`flower run --resume PREFIX`).

The store is the one `flower run` writes: `<workspace>/.flower/sessions.db`, under the project key the
CLI gives the workspace's directory. Nothing is created or modified: a workspace without a store has no
sessions. Costs are estimated from the stored usage with flower's cost model (as `flower report` does);
keep-warm pings are not in them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from claude_agent_sdk import project_key_for_directory

from .._errors import SpecError
from .._handoff.document import TAKEOVER_PROMPT
from ..report import _metrics as m
from ..report._load import DB_NAME, WORKBENCH
from ..report._partial import cost_of
from ..report._sources import open_source
from ..stores import SqliteSessionStore
from .lines import first_words

__all__ = ["SessionRow", "list_sessions", "render_sessions", "resolve_session", "store_path"]

_TAKEOVER = TAKEOVER_PROMPT.split("(", 1)[0]


@dataclass(frozen=True, kw_only=True)
class SessionRow:
    """One session of the workspace's store."""

    session_id: str
    """Its id (`flower run --resume` takes it, or an unambiguous prefix)."""
    started: str
    """Its first timestamp (ISO, UTC), '' when none."""
    last_activity: str
    """Its last timestamp (ISO, UTC), '' when none."""
    cost_usd: float
    """Estimated from its stored usage, workers included (flower's cost model)."""
    turns: int
    """Main-thread replies of the model."""
    title: str
    """Its first prompt's first words; a handoff's successor says so."""
    successor: bool
    """It was started by a handoff: it continues the session that ended just before it."""


def store_path(workspace: Path) -> Path:
    """Where `flower run` keeps the sessions of `workspace`: `<workspace>/.flower/sessions.db`."""
    return workspace / WORKBENCH / DB_NAME


def _key(workspace: Path) -> str:
    return project_key_for_directory(str(workspace.resolve()))


async def list_sessions(workspace: Path) -> list[SessionRow]:
    """Every session of `workspace`'s store, oldest activity first (the latest is printed last)."""
    if not store_path(workspace).is_file():
        return []
    rows = []
    async with await open_source(workspace, project_key=_key(workspace)) as source:
        async for session in source.sessions():
            replies = m.turns(session.main)
            every = replies + [t for sub in session.subagents.values() for t in m.turns(sub)]
            prompts = m.prompts(session.main)
            first = prompts[0][1] if prompts else ""
            successor = first.lstrip().startswith(_TAKEOVER)
            rows.append(
                SessionRow(
                    session_id=session.session_id,
                    started=session.started,
                    last_activity=session.ended,
                    cost_usd=cost_of(every).usd,
                    turns=len(replies),
                    title="(continues the session before it: handoff)"
                    if successor
                    else first_words(first, 60),
                    successor=successor,
                )
            )
    rows.sort(key=lambda row: (row.last_activity, row.started))
    return rows


def render_sessions(rows: list[SessionRow], workspace: Path) -> str:
    """The table `flower sessions` prints (a line saying there are none, if so)."""
    if not rows:
        return f'no sessions in {workspace} yet: flower run "GOAL" starts one'
    lines = [f"{'SESSION':<36}  {'LAST ACTIVITY (UTC)':<19}  {'COST':>9}  {'TURNS':>5}  FIRST PROMPT"]
    for row in rows:
        cost = f"${row.cost_usd:.4f}"
        lines.append(
            f"{row.session_id:<36}  {_when(row.last_activity):<19}  {cost:>9}  {row.turns:>5}  {row.title}"
        )
    total = sum(row.cost_usd for row in rows)
    lines.append(f"{len(rows)} session{'s' if len(rows) != 1 else ''}, ${total:.4f} in all (estimated)")
    return "\n".join(lines)


def _when(stamp: str) -> str:
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp[:19] or "-"
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


async def resolve_session(workspace: Path, given: str) -> str:
    """The id of the session of `workspace`'s store that `given` names: the whole id or an unambiguous
    prefix. `SpecError` when none or several match (the message lists them)."""
    wanted = given.strip()
    if not wanted:
        raise SpecError("--resume: give a session id (flower sessions lists them)")
    path = store_path(workspace)
    if not path.is_file():
        raise SpecError(f"--resume {wanted}: {workspace} has no sessions yet ({path} does not exist)")
    store = SqliteSessionStore(path)
    try:
        listed = [str(s["session_id"]) for s in await store.list_sessions(_key(workspace))]
    finally:
        await store.aclose()
    if wanted in listed:
        return wanted
    matches = sorted(s for s in listed if s.startswith(wanted))
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise SpecError(
            f"--resume {wanted}: no session of {workspace} starts with it (flower sessions lists them)"
        )
    raise SpecError(f"--resume {wanted}: {len(matches)} sessions start with it: {', '.join(matches)}")
