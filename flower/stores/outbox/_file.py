"""The outbox file: transcript entries a store has not taken yet, kept on the runner's own disk.

One SQLite file per workspace (`<workspace>/.flower/outbox.db` by default), in WAL mode with
`synchronous=NORMAL`: a batch put here survives the runner's `kill -9` (not a power loss of its
machine). Every method is blocking and holds the connection lock; the run calls them in a worker thread.

- `pending`: the entries, in the order they came (`id`, AUTOINCREMENT: never reused), each with the store
  it is for (`target`), its session key and its idempotency key (`dedupe`): the entry's `uuid`, or
  `~<outbox id>:<row id>` for an entry without one, so a batch delivered twice lands once.
- `sessions`: per session the outbox holds rows of, the lease epoch they were written under (0: none),
  the process writing them (0 once its run ended), and what a same-machine recovery needs to find the
  CLI's local transcript (its config directory; whether it resumed, and then how many lines of each
  transcript file came from the store).
- `fenced`: rows refused because another runner took the session over since; never delivered (they
  would fork the session), kept for a person to look at.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

from claude_agent_sdk import SessionKey, SessionStoreEntry

from ..._errors import StoreError
from ..sqlite._db_file import immediate, prepare_file
from ..sqlite._locked import LockedConnection

__all__ = ["Outbox", "Record", "Row"]

_APPLICATION_ID: Final = 0x666C776F  # "flwo"
_VERSION: Final = 1
_BATCH_ROWS: Final = 500
_BATCH_BYTES: Final = 1 << 20

_SCHEMA: Final = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE pending (
    id INTEGER PRIMARY KEY AUTOINCREMENT,  -- delivery order
    target TEXT NOT NULL,                  -- the store the row is for
    project_key TEXT NOT NULL,
    session_id TEXT NOT NULL,
    subpath TEXT NOT NULL,                 -- '' for the main transcript
    dedupe TEXT NOT NULL,                  -- the idempotency key
    payload TEXT NOT NULL,                 -- the entry as JSON, as the store keeps it
    enqueued REAL NOT NULL
);
CREATE INDEX pending_by_target ON pending (target, id);
CREATE TABLE sessions (
    target TEXT NOT NULL,
    session_id TEXT NOT NULL,
    epoch INTEGER NOT NULL,                -- the lease epoch the rows were written under (0: none)
    pid INTEGER NOT NULL,                  -- the process writing them (0: its run ended)
    config_dir TEXT NOT NULL,              -- the CLI's config directory
    resumed INTEGER NOT NULL,              -- 1: the CLI wrote into the SDK's temporary copy
    prefixes TEXT,                         -- JSON {subpath: lines copied from the store}, NULL: unknown
    started REAL NOT NULL,
    PRIMARY KEY (target, session_id)
);
CREATE TABLE fenced (
    id INTEGER PRIMARY KEY,
    target TEXT NOT NULL,
    project_key TEXT NOT NULL,
    session_id TEXT NOT NULL,
    subpath TEXT NOT NULL,
    dedupe TEXT NOT NULL,
    payload TEXT NOT NULL,
    reason TEXT NOT NULL,
    fenced_at REAL NOT NULL
);
"""


@dataclass(frozen=True)
class Row:
    """A pending row: its id, the key it is for, its idempotency key and its JSON."""

    id: int
    key: SessionKey
    dedupe: str
    payload: str


@dataclass(frozen=True)
class Record:
    """What the outbox knows of a session it holds rows of (see the module docstring)."""

    session_id: str
    epoch: int
    pid: int
    config_dir: str
    resumed: bool
    prefixes: dict[str, int] | None
    started: float


def _key(project_key: str, session_id: str, subpath: str) -> SessionKey:
    key: dict[str, str] = {"project_key": project_key, "session_id": session_id}
    if subpath:
        key["subpath"] = subpath
    return cast(SessionKey, key)


class Outbox(LockedConnection):
    """One outbox file (see the module docstring). The constructor does no I/O."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(os.path.abspath(os.fspath(path)), busy_timeout=30.0)
        self.id = ""
        """This outbox's own id: part of the idempotency key of an entry without a uuid."""

    def __repr__(self) -> str:
        return f"Outbox({self.path!r})"

    def _open(self) -> sqlite3.Connection:
        prepare_file(self.path)
        conn = sqlite3.connect(
            self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
        )
        try:
            found = conn.execute("PRAGMA application_id").fetchone()[0]
            if found not in (0, _APPLICATION_ID):
                raise StoreError(
                    f"{self.path} is not a flower outbox (application_id {found:#x})", path=self.path
                )
            if conn.execute("PRAGMA journal_mode=WAL").fetchone()[0].lower() != "wal":
                raise StoreError(f"{self.path}: cannot switch the outbox to WAL mode", path=self.path)
            conn.execute("PRAGMA synchronous=NORMAL")  # with WAL: a commit survives a killed process
            with immediate(conn):
                if conn.execute("PRAGMA application_id").fetchone()[0] == 0:
                    if conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                        raise StoreError(f"{self.path} is a database of another application", path=self.path)
                    for statement in _SCHEMA.split(";"):
                        if statement.strip():
                            conn.execute(statement)
                    conn.execute("INSERT INTO meta VALUES ('id', ?)", (secrets.token_hex(6),))
                    conn.execute(f"PRAGMA application_id = {_APPLICATION_ID}")
                    conn.execute(f"PRAGMA user_version = {_VERSION}")
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                if version != _VERSION:
                    raise StoreError(
                        f"{self.path} is an outbox of layout {version}; this flower reads {_VERSION}",
                        path=self.path,
                    )
                self.id = str(conn.execute("SELECT value FROM meta WHERE key = 'id'").fetchone()[0])
        except BaseException:
            conn.close()
            raise
        return conn

    def open(self) -> None:
        """Create or check the file now (`StoreError` naming it when it cannot be used)."""
        with self._connection():
            pass

    # -- the rows ------------------------------------------------------------------------------------

    def put(self, target: str, key: SessionKey, entries: Sequence[SessionStoreEntry]) -> int:
        """Keep a batch for `target`, atomically; the number of rows kept."""
        now = time.time()
        rows = []
        for entry in entries:
            payload = json.dumps(entry, separators=(",", ":"))  # ASCII, as the stores keep it
            uuid = entry.get("uuid") if isinstance(entry, dict) else None
            subpath = key.get("subpath") or ""
            rows.append(
                (
                    target,
                    key["project_key"],
                    key["session_id"],
                    subpath,
                    uuid if isinstance(uuid, str) else "",
                    payload,
                    now,
                )
            )
        with self._write() as conn:
            conn.executemany(
                "INSERT INTO pending (target, project_key, session_id, subpath, dedupe, payload, enqueued) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            # an entry without a uuid is keyed by its row id, which is never reused
            conn.execute("UPDATE pending SET dedupe = '~' || ? || ':' || id WHERE dedupe = ''", (self.id,))
        return len(rows)

    def head(self, target: str, sessions: Collection[str] | None = None) -> list[Row]:
        """The oldest rows for `target` (of `sessions` when given) that share the oldest one's key: one
        append, at most 500 rows or 1 MiB."""
        query = "SELECT id, project_key, session_id, subpath, dedupe, payload FROM pending WHERE target = ?"
        args: list[Any] = [target]
        if sessions is not None:
            if not sessions:
                return []
            query += f" AND session_id IN ({','.join('?' * len(sessions))})"
            args += list(sessions)
        with self._connection() as conn:
            found = conn.execute(f"{query} ORDER BY id LIMIT {_BATCH_ROWS}", args).fetchall()
        rows: list[Row] = []
        size = 0
        for row_id, project_key, session_id, subpath, dedupe, payload in found:
            key = _key(project_key, session_id, subpath)
            if rows and (key != rows[0].key or size + len(payload) > _BATCH_BYTES):
                break
            rows.append(Row(row_id, key, dedupe, payload))
            size += len(payload)
        return rows

    def rows(self, target: str, session_id: str) -> list[Row]:
        """Every row waiting for `target` of one session, in order."""
        with self._connection() as conn:
            found = conn.execute(
                "SELECT id, project_key, session_id, subpath, dedupe, payload FROM pending "
                "WHERE target = ? AND session_id = ? ORDER BY id",
                (target, session_id),
            ).fetchall()
        return [Row(i, _key(p, s, sub), d, payload) for i, p, s, sub, d, payload in found]

    def ack(self, ids: Sequence[int]) -> None:
        """Forget delivered rows."""
        with self._write() as conn:
            conn.executemany("DELETE FROM pending WHERE id = ?", [(i,) for i in ids])

    def count(self, target: str, sessions: Collection[str] | None = None) -> int:
        """Rows waiting for `target` (of `sessions` when given)."""
        query, args = "SELECT count(*) FROM pending WHERE target = ?", [target]
        if sessions is not None:
            if not sessions:
                return 0
            query += f" AND session_id IN ({','.join('?' * len(sessions))})"
            args += list(sessions)
        with self._connection() as conn:
            return int(conn.execute(query, args).fetchone()[0])

    def fence(self, target: str, session_id: str, reason: str) -> int:
        """Set aside the session's rows (another runner took it over): never delivered. The count."""
        with self._write() as conn:
            conn.execute(
                "INSERT INTO fenced (target, project_key, session_id, subpath, dedupe, payload, reason, "
                "fenced_at) SELECT target, project_key, session_id, subpath, dedupe, payload, ?, ? FROM "
                "pending WHERE target = ? AND session_id = ? ORDER BY id",
                (reason, time.time(), target, session_id),
            )
            moved = conn.execute(
                "DELETE FROM pending WHERE target = ? AND session_id = ?", (target, session_id)
            ).rowcount
            conn.execute("DELETE FROM sessions WHERE target = ? AND session_id = ?", (target, session_id))
        return int(moved)

    # -- the sessions --------------------------------------------------------------------------------

    def begin(self, target: str, session_id: str, *, epoch: int, config_dir: str, resumed: bool) -> None:
        """Record that this process writes `session_id` now (its prefixes unknown for a resume, until
        `set_prefixes`)."""
        with self._write() as conn:
            conn.execute(
                "INSERT INTO sessions (target, session_id, epoch, pid, config_dir, resumed, prefixes, "
                "started) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (target, session_id) DO UPDATE SET "
                "epoch = excluded.epoch, pid = excluded.pid, config_dir = excluded.config_dir, "
                "resumed = excluded.resumed, prefixes = excluded.prefixes, started = excluded.started",
                (
                    target,
                    session_id,
                    epoch,
                    os.getpid(),
                    config_dir,
                    int(resumed),
                    None if resumed else "{}",
                    time.time(),
                ),
            )

    def set_epoch(self, target: str, session_id: str, epoch: int) -> None:
        """The lease was taken (back) with a new epoch: the session's rows are written under it."""
        with self._write() as conn:
            conn.execute(
                "UPDATE sessions SET epoch = ? WHERE target = ? AND session_id = ?",
                (epoch, target, session_id),
            )

    def set_prefixes(self, target: str, session_id: str, prefixes: dict[str, int]) -> None:
        """How many lines of each transcript file a resume copied from the store (by subpath, '' main)."""
        with self._write() as conn:
            conn.execute(
                "UPDATE sessions SET prefixes = ? WHERE target = ? AND session_id = ?",
                (json.dumps(prefixes, sort_keys=True), target, session_id),
            )

    def end(self, target: str, session_id: str) -> None:
        """The run writing the session ended: forget it when nothing is left, else mark it writer-less."""
        with self._write() as conn:
            left = conn.execute(
                "SELECT count(*) FROM pending WHERE target = ? AND session_id = ?", (target, session_id)
            ).fetchone()[0]
            if left:
                conn.execute(
                    "UPDATE sessions SET pid = 0 WHERE target = ? AND session_id = ?", (target, session_id)
                )
            else:
                conn.execute("DELETE FROM sessions WHERE target = ? AND session_id = ?", (target, session_id))

    def forget(self, target: str, session_id: str) -> None:
        """Drop the session's record (its rows, if any, stay)."""
        with self._write() as conn:
            conn.execute("DELETE FROM sessions WHERE target = ? AND session_id = ?", (target, session_id))

    def records(self, target: str) -> list[Record]:
        """Every session recorded for `target`, oldest first."""
        with self._connection() as conn:
            found = conn.execute(
                "SELECT session_id, epoch, pid, config_dir, resumed, prefixes, started FROM sessions "
                "WHERE target = ? ORDER BY started",
                (target,),
            ).fetchall()
        return [
            Record(
                sid,
                int(epoch),
                int(pid),
                config,
                bool(resumed),
                json.loads(prefixes) if prefixes else None,
                started,
            )
            for sid, epoch, pid, config, resumed, prefixes, started in found
        ]

    def orphans(self, target: str) -> list[str]:
        """Sessions with rows but no record (left by an older flower or a record dropped by hand)."""
        with self._connection() as conn:
            found = conn.execute(
                "SELECT DISTINCT session_id FROM pending WHERE target = ? AND session_id NOT IN "
                "(SELECT session_id FROM sessions WHERE target = ?)",
                (target, target),
            ).fetchall()
        return [sid for (sid,) in found]
