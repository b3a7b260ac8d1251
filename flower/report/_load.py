"""What a report reads: one session's transcripts (`SessionData`), a store's place on disk, its workbench.

A store source is a workspace (`<ws>/.flower/sessions.db`), its `.flower/` directory, a `.db` file, or a
`SessionStore` object. The transcripts are read through the store's public methods (`list_sessions`,
`list_subkeys`, `load`; `flower.report._sources` does the reading); a rewriting layer (`rt.store`) is
unwrapped to its inner store first (`unwrap`), so the report sees the entries as written, never a resume's
rewritten copy. The protocol has no call that lists projects, so for a SQLite file the project keys are
read with one read-only query (`project_keys`); for another store pass `project_key`.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.request import pathname2url

from claude_agent_sdk import SessionStore

from .._errors import SpecError, StoreError
from .._spill._files import MANIFEST
from .._util.safe_open import read_regular
from ..stores import PruningSessionStore, TrimmingSessionStore

__all__ = ["Loaded", "SessionData"]

DB_NAME = "sessions.db"
WORKBENCH = ".flower"


@dataclass(frozen=True)
class SessionData:
    """One session: its main transcript and its subagents' transcripts (subpath -> entries)."""

    project_key: str
    session_id: str
    main: list[dict[str, Any]]
    subagents: dict[str, list[dict[str, Any]]]
    path: str = ""
    """Where it was read from: the main transcript's file, or `<store>#<session id>` ('' when not told)."""

    @property
    def started(self) -> str:
        """The first timestamp of the main transcript ('' when none): sessions sort by it."""
        return next((str(e["timestamp"]) for e in self.main if isinstance(e.get("timestamp"), str)), "")

    @property
    def ended(self) -> str:
        """The last timestamp of the main transcript ('' when none)."""
        stamps = (str(e["timestamp"]) for e in reversed(self.main) if isinstance(e.get("timestamp"), str))
        return next(stamps, "")


@dataclass(frozen=True)
class Loaded:
    """What a report is computed from."""

    source: str
    sessions: list[SessionData]
    spills: list[dict[str, Any]] = field(default_factory=list)
    """The rows of the workbench's `spill/INDEX.jsonl` (empty when there is none)."""
    workbench: str | None = None
    """The workbench directory, when the source has one."""
    pings: list[dict[str, Any]] = field(default_factory=list)
    """The rows of the workbench's `keep-warm.jsonl` of these sessions (`flower._warm.records`)."""


def unwrap(store: SessionStore) -> SessionStore:
    """The store beneath any rewriting layer: the entries as written, never a resume's rewritten copy."""
    while isinstance(store, TrimmingSessionStore | PruningSessionStore):
        store = store.inner
    return store


def project_keys(path: str) -> list[str]:
    """The project keys stored in a flower SQLite file (read-only; the file is never created)."""
    uri = f"file:{pathname2url(os.path.abspath(path))}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True)
        try:
            rows = conn.execute(
                "SELECT project_key FROM transcripts GROUP BY project_key ORDER BY min(id)"
            ).fetchall()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read the session store {path}: {exc}", path=path) from exc
    return [str(key) for (key,) in rows]


def resolve_path(source: str | os.PathLike[str]) -> tuple[Path, Path | None]:
    """`(database file, workbench directory or None)` for a workspace, a `.flower/` dir or a `.db` file."""
    path = Path(source).expanduser()
    if path.is_file():
        workbench = path.parent if any((path.parent / d).is_dir() for d in ("spill", "scripts")) else None
        return path, workbench
    if path.is_dir():
        for workbench in (path / WORKBENCH, path):
            if (workbench / DB_NAME).is_file():
                return workbench / DB_NAME, workbench
        raise SpecError(
            f"source: no flower session store in {path}: looked for {WORKBENCH}/{DB_NAME} and {DB_NAME} "
            "(give a workspace, its .flower directory, or a .db file)"
        )
    raise SpecError(f"source: {path} does not exist (give a workspace, its .flower directory, or a .db file)")


def read_spills(workbench: Path | None) -> list[dict[str, Any]]:
    """The rows of `spill/INDEX.jsonl` (a line that is not a JSON object is skipped; none when the file
    is missing, unreadable or not a regular file)."""
    if workbench is None:
        return []
    manifest = workbench / "spill" / MANIFEST
    try:  # a regular file only: a FIFO there would block the report
        lines = read_regular(manifest).decode("utf-8", errors="replace").splitlines()
    except OSError:
        return []
    rows = []
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


def spills_of(rows: Sequence[Mapping[str, Any]], session_ids: Sequence[str]) -> list[Mapping[str, Any]]:
    """The manifest rows of these sessions (a row without a session id is kept)."""
    wanted = set(session_ids)
    return [r for r in rows if not r.get("session_id") or r.get("session_id") in wanted]
