"""One reader for every history a report reads, one session at a time.

A source is any of:

- the CLI's projects directory (`$CLAUDE_CONFIG_DIR/projects`, or the config directory itself): every
  project below it; `None` stands for the one the CLI uses (`CLAUDE_CONFIG_DIR`, else `~/.claude`);
- one project directory (`projects/<project>/`): its `<session>.jsonl` main transcripts;
- one `.jsonl` transcript;
- a flower store: a workspace, its `.flower/` directory, a SQLite `.db` file, or a `SessionStore` object.

A session is its main transcript and its subagents' (`<session>/subagents/**/*.jsonl` beside a CLI file,
the `subpath` keys of a store), read as the stores import them (`flower.stores._local.read_transcripts`):
a damaged line is skipped with a warning naming the file and the line, never the whole session, and a file
that cannot be read at all is skipped with a warning naming it. A `.jsonl` file that holds lines but no
entry the Claude Code CLI writes (another tool's log, random JSON Lines) is no session: it is skipped
with the reason and counted apart (`TranscriptSource.not_transcripts`). Nothing is written anywhere.

Sessions are listed first (paths and modification times only), then read one by one, so a report over a
long history holds one session in memory at a time. Filters: `project_key` (a project directory name or key,
a shell pattern such as `*app*`, or a path the CLI would name its project directory after), `sessions`
(ids, or prefixes of them such as the 8 characters a report prints: one that names two sessions is an
error), and a time range (`since`, `until`: a session counts when it was active in it).
"""

from __future__ import annotations

import fnmatch
import logging
import os
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, cast

import anyio
from claude_agent_sdk import SessionKey, SessionStore

from .._errors import SpecError, StoreError
from .._util.check import checked
from .._warm.records import RECORDS, read_records
from ..stores import SqliteSessionStore
from ..stores._local import config_dir, read_transcripts
from ._load import DB_NAME, WORKBENCH, Loaded, SessionData, project_keys, read_spills, resolve_path, unwrap
from ._time import parse_time, within

__all__ = ["Place", "TranscriptSource", "load_source", "not_a_transcript", "open_source", "unmatched"]

logger = logging.getLogger("flower.report")

Kind = Literal["projects", "project", "transcript", "store"]
_CLI_TYPES = frozenset(
    {"user", "assistant", "system", "summary", "progress", "attachment", "queue-operation", "mode",
     "file-history-snapshot", "last-prompt", "custom-title", "ai-title", "cost-state", "permission-mode"}
)  # fmt: skip
"""Entry types the Claude Code CLI writes in a session's transcript (some of them: enough to tell one)."""
_UNSAFE = re.compile(r"[^A-Za-z0-9]")
"""The CLI names a project directory after its working directory, every other character made `-`."""


@dataclass(frozen=True)
class Place:
    """Where one session is, before it is read."""

    project_key: str
    """The project directory's name (a CLI file) or the store's project key."""
    session_id: str
    path: str
    """The main transcript file; for a store, `<store>#<session id>`."""
    mtime: float | None = None
    """The file's modification time (epoch seconds), or the store's `mtime`; None when unknown."""


def _project_matches(key: str, wanted: str | None) -> bool:
    if wanted is None:
        return True
    if key == wanted or fnmatch.fnmatchcase(key, wanted):
        return True
    encoded = _UNSAFE.sub("-", os.path.abspath(os.path.expanduser(wanted)))
    return key == encoded


def not_a_transcript(entries: Sequence[Any]) -> str | None:
    """Why these entries are not a Claude Code transcript, or None when they are one (or hold nothing).

    A transcript holds at least one entry the CLI writes: a JSON object whose `type` is one of the CLI's
    (`user`, `assistant`, `system`, `queue-operation` ...) and that names its session (`sessionId`) or
    itself (`uuid`). Another tool's log (a Copilot session log: `session.start` ...) or random JSON Lines
    hold none.
    """
    if not entries:
        return None
    for entry in entries:
        if (
            isinstance(entry, dict)
            and entry.get("type") in _CLI_TYPES
            and (isinstance(entry.get("sessionId"), str) or isinstance(entry.get("uuid"), str))
        ):
            return None
    first = next((e for e in entries if isinstance(e, dict)), None)
    kind = first.get("type") if first is not None else None
    shown = f"the first has type {kind!r:.40}" if kind is not None else "the first has no type"
    lines = f"{len(entries):,} line(s)"
    return f"not a Claude Code transcript: none of its {lines} is an entry the CLI writes ({shown})"


def _pick(places: list[Place], wanted: Sequence[str]) -> tuple[list[Place], list[str]]:
    """The places whose session id is one of `wanted` or starts with one of them, and the wanted ids that
    name none. An id naming a session exactly picks it alone; a prefix naming two sessions or more is a
    `SpecError` listing them."""
    picked: dict[int, Place] = {}
    unmatched = []
    for ident in wanted:
        exact = [i for i, p in enumerate(places) if p.session_id == ident]
        found = exact or [i for i, p in enumerate(places) if p.session_id.startswith(ident)]
        ids = sorted({places[i].session_id for i in found})
        if len(ids) > 1:
            named = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
            raise SpecError(f"session {ident!r} is ambiguous: it starts {len(ids)} session ids ({named})")
        if not found:
            unmatched.append(ident)
        picked.update((i, places[i]) for i in found)
    return [picked[i] for i in sorted(picked)], unmatched


def _kind(path: Path) -> tuple[Kind, Path]:
    """What `path` is, and the directory or file to read."""
    if path.is_file():
        return ("transcript", path) if path.suffix == ".jsonl" else ("store", path)
    if not path.is_dir():
        raise SpecError(
            f"source: {path} does not exist (give the CLI's projects directory, a project directory, "
            "a .jsonl transcript, or a flower workspace, .flower directory or .db file)"
        )
    if (path / WORKBENCH / DB_NAME).is_file() or (path / DB_NAME).is_file():
        return "store", path
    if (path / "projects").is_dir():
        return "projects", path / "projects"
    if any(_mains(path)):
        return "project", path
    if any(child.is_dir() and any(_mains(child)) for child in _children(path)):
        return "projects", path
    raise SpecError(
        f"source: {path} holds no flower session store ({WORKBENCH}/{DB_NAME} or {DB_NAME}), no CLI "
        "transcript (*.jsonl) and no project directory of them"
    )


def _children(directory: Path) -> list[Path]:
    try:
        return sorted(directory.iterdir(), key=lambda p: p.name)
    except OSError:
        return []


def _mains(directory: Path) -> list[Path]:
    """The main transcripts of a project directory (its subagents' live in `<session>/subagents/`)."""
    return [p for p in _children(directory) if p.suffix == ".jsonl" and p.is_file()]


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def _file_places(kind: Kind, root: Path, project: str | None) -> list[Place]:
    if kind == "transcript":
        projects = [(root.parent.name, [root])]
    elif kind == "project":
        projects = [(root.name, _mains(root))]
    else:
        projects = [(d.name, _mains(d)) for d in _children(root) if d.is_dir()]
    return [
        Place(key, path.stem, str(path), _mtime(path))
        for key, files in projects
        if _project_matches(key, project) or kind == "transcript"
        for path in files
    ]


class TranscriptSource:
    """A history opened for reading: its label, where its workbench is (a store), the sessions listed, and
    an iterator that reads them one at a time. Use `open_source()`; close it (`async with`) when done."""

    def __init__(
        self,
        label: str,
        kind: Kind,
        places: list[Place],
        *,
        store: SessionStore | None = None,
        owned: SqliteSessionStore | None = None,
        workbench: Path | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> None:
        self.label = label
        """What was opened, as the report names it."""
        self.kind: Kind = kind
        """`projects`, `project`, `transcript` (the CLI's files) or `store`."""
        self.places = places
        """Every session listed (before the time range is checked against the transcripts' timestamps)."""
        self.workbench = workbench
        """The workbench beside a store (`spill/`, `scripts/`), if any."""
        self.skipped: list[str] = []
        """Files or sessions that could not be read at all, each with why (each also logged)."""
        self.not_transcripts: list[str] = []
        """Files that are not Claude Code transcripts (`not_a_transcript`), each with why: no session."""
        self.unmatched: list[str] = []
        """The session ids asked for that name no session listed (`open_source(sessions=...)`)."""
        self.listed = len(places)
        """Sessions the source lists before `open_source(sessions=...)` picks some."""
        self._store = store
        self._owned = owned
        self._since = since
        self._until = until

    def spills(self) -> list[dict[str, Any]]:
        """The rows of the workbench's `spill/INDEX.jsonl` (none without a workbench)."""
        return read_spills(self.workbench)

    def pings(self, session_ids: Sequence[str]) -> list[dict[str, Any]]:
        """The workbench's keep-warm pings of these sessions (`flower._warm.records`; none without one)."""
        return read_records(self.workbench / RECORDS, session_ids) if self.workbench is not None else []

    async def sessions(self) -> AsyncIterator[SessionData]:
        """Each session listed and active in the time range, read when reached (one in memory at a time
        unless the caller keeps them)."""
        for place in self.places:
            if self._since is not None and place.mtime is not None and place.mtime < self._since.timestamp():
                continue  # not written since: it ended before
            session = await self._read(place)
            if session is not None and within(session, self._since, self._until):
                yield session

    async def _read(self, place: Place) -> SessionData | None:
        try:
            if self._store is not None:
                return await _from_store(self._store, place)
            session = await anyio.to_thread.run_sync(_from_files, place)
        except (StoreError, OSError) as exc:
            self.skipped.append(f"{place.path}: {exc}")
            logger.warning("flower report: skipped session %s: %s", place.path, exc)
            return None
        why = not_a_transcript(session.main)
        if why is not None:
            self.not_transcripts.append(f"{place.path}: {why}")
            logger.warning("flower report: skipped %s: %s", place.path, why)
            return None
        return session

    async def aclose(self) -> None:
        """Close the store this source opened (none for the CLI's files)."""
        if self._owned is not None:
            await self._owned.aclose()
            self._owned = None

    async def __aenter__(self) -> TranscriptSource:
        return self

    async def __aexit__(self, *exc: object) -> None:
        with anyio.CancelScope(shield=True):
            await self.aclose()


def _from_files(place: Place) -> SessionData:
    key = cast(SessionKey, {"project_key": place.project_key, "session_id": place.session_id})
    found = read_transcripts(Path(place.path), key)
    main = cast(list[dict[str, Any]], found[0][1])
    subagents = {str(k.get("subpath")): cast(list[dict[str, Any]], e) for k, e in found[1:]}
    return SessionData(place.project_key, place.session_id, main, subagents, path=place.path)


async def _from_store(store: SessionStore, place: Place) -> SessionData:
    key: dict[str, Any] = {"project_key": place.project_key, "session_id": place.session_id}
    main = await store.load(cast(Any, key)) or []
    subagents: dict[str, list[dict[str, Any]]] = {}
    try:
        subpaths = await store.list_subkeys(cast(Any, key))
    except NotImplementedError:
        subpaths = []
    for subpath in subpaths:
        entries = await store.load(cast(Any, {**key, "subpath": subpath}))
        subagents[subpath] = cast(list[dict[str, Any]], entries or [])
    return SessionData(
        place.project_key, place.session_id, cast(list[dict[str, Any]], main), subagents, path=place.path
    )


async def _store_places(store: SessionStore, label: str, keys: Sequence[str]) -> list[Place]:
    places = []
    for key in keys:
        for listed in await store.list_sessions(key):
            session_id = listed["session_id"]
            mtime = listed.get("mtime")
            seconds = mtime / 1000 if isinstance(mtime, int | float) else None
            places.append(Place(key, session_id, f"{label}#{session_id}", seconds))
    return places


def _opened(
    label: str, kind: Kind, places: list[Place], sessions: Sequence[str] | None, **given: Any
) -> TranscriptSource:
    """The source over the places `sessions` picks (all when None), the ids that picked none noted."""
    listed, unmatched = len(places), list[str]()
    if sessions is not None:
        places, unmatched = _pick(places, sessions)
    opened = TranscriptSource(label, kind, places, **given)
    opened.unmatched, opened.listed = unmatched, listed
    return opened


@checked
async def open_source(
    source: str | os.PathLike[str] | SessionStore | None = None,
    *,
    project_key: str | None = None,
    sessions: Sequence[str] | None = None,
    since: str | datetime | None = None,
    until: str | datetime | None = None,
    workbench: str | os.PathLike[str] | None = None,
) -> TranscriptSource:
    """Open `source` (None: the CLI's own projects directory) and list its sessions; nothing is read yet.

    `sessions` keeps the sessions whose id is one of them or starts with one (a prefix naming two is a
    `SpecError`; an id naming none is listed in `TranscriptSource.unmatched`). `project_key` keeps
    the projects whose directory name (or store key) is it, matches it as a shell pattern,
    or is the CLI's name for it as a path; a `SessionStore` object needs it (a store lists no projects).
    Raises `SpecError` for a source that is none of those, `StoreError` for a store that cannot be read.
    """
    if project_key is not None and not project_key:  # a wrong type is `@checked`'s
        raise SpecError("open_source: project_key must be a non-empty str or None, got ''")
    start, end = parse_time(since, "since"), parse_time(until, "until")
    bench = Path(workbench) if workbench is not None else None
    if source is not None and not isinstance(source, str | os.PathLike):
        if not (callable(getattr(source, "load", None)) and callable(getattr(source, "list_sessions", None))):
            raise SpecError(f"a report reads a path or a SessionStore, got {source!r:.80}")
        inner = unwrap(source)
        label = repr(inner)
        if project_key is not None:
            keys = [project_key]
        elif isinstance(inner, SqliteSessionStore):
            keys = await anyio.to_thread.run_sync(project_keys, inner.path)
        else:
            raise SpecError(f"{label:.80}: give project_key= (a store lists no projects by itself)")
        places = await _store_places(inner, label, keys)
        return _opened(label, "store", places, sessions, store=inner, workbench=bench, since=start, until=end)
    root = Path(source).expanduser() if source is not None else config_dir() / "projects"
    kind, found = await anyio.to_thread.run_sync(_kind, root)
    if kind == "store":
        db, beside = await anyio.to_thread.run_sync(resolve_path, found)
        keys = await anyio.to_thread.run_sync(project_keys, str(db))
        keys = [key for key in keys if _project_matches(key, project_key)]
        owned = SqliteSessionStore(db)
        label = str(source)
        try:
            places = await _store_places(owned, label, keys)
            return _opened(
                label,
                kind,
                places,
                sessions,
                store=owned,
                owned=owned,
                workbench=bench or beside,
                since=start,
                until=end,
            )
        except BaseException:
            await owned.aclose()
            raise
    places = await anyio.to_thread.run_sync(_file_places, kind, found, project_key)
    return _opened(str(root), kind, places, sessions, workbench=bench, since=start, until=end)


def unmatched(opened: TranscriptSource) -> None:
    """A `SpecError` naming the session ids asked for that name no session of `opened` (a report of one
    source asks for sessions that are there; a fleet asks each project for all of them)."""
    if opened.unmatched:
        names = ", ".join(repr(ident) for ident in opened.unmatched)
        raise SpecError(
            f"no session id is or starts with {names} in {opened.label} ({opened.listed:,} session(s) "
            "there; give an id or its first characters, as the report prints them)"
        )


async def load_source(
    source: str | os.PathLike[str] | SessionStore | None,
    *,
    project_key: str | None = None,
    sessions: Sequence[str] | None = None,
    workbench: str | os.PathLike[str] | None = None,
) -> Loaded:
    """Every session of `source`, oldest first, with the workbench's spill rows, all in memory (for what
    needs them together: the fleet report, the OTLP export); `open_source` reads one at a time."""
    opened = await open_source(source, project_key=project_key, sessions=sessions, workbench=workbench)
    async with opened:
        found = [session async for session in opened.sessions()]
        spills = await anyio.to_thread.run_sync(opened.spills)
        pings = await anyio.to_thread.run_sync(opened.pings, [s.session_id for s in found])
    found.sort(key=lambda s: s.started)
    bench = str(opened.workbench) if opened.workbench is not None else None
    return Loaded(opened.label, found, spills, bench, pings)
