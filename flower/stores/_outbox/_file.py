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
- `stores`: each store rows were kept for, by identity, with the label it had (`_schema`).

A row's `target` is its store's identity (`identity()` of flower's stores), so any path or DSN that
reaches the store delivers it. An outbox at `MEMORY` holds the same tables in this process only: the
run's fallback when its file cannot be written (a full disk, a read-only or deleted file).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Collection, Sequence
from typing import Any, Final

from claude_agent_sdk import SessionKey, SessionStoreEntry

from ..._errors import StoreError
from .._sqlite._db_file import immediate, prepare_file
from ._books import Books, Record, Row, Waiting, key_of
from ._schema import APPLICATION_ID, LABEL, prepare

__all__ = ["LABEL", "MEMORY", "Outbox", "Record", "Row", "Waiting"]

_BATCH_ROWS: Final = 500
_BATCH_BYTES: Final = 1 << 20
MEMORY: Final = ":memory:"
"""The path of an outbox held in memory: where a run's entries wait when its file cannot be written."""


class Outbox(Books):
    """One outbox file (see the module docstring). The constructor does no I/O."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        text = os.fspath(path)
        super().__init__(text if text == MEMORY else os.path.abspath(text), busy_timeout=30.0)
        self.id = ""
        """This outbox's own id: part of the idempotency key of an entry without a uuid."""
        self._file: tuple[int, int] | None = None  # (device, inode) of the file opened

    def __repr__(self) -> str:
        return f"Outbox({self.path!r})"

    @property
    def in_memory(self) -> bool:
        """The outbox lives in this process's memory only (`MEMORY`)."""
        return self.path == MEMORY

    def _open(self) -> sqlite3.Connection:
        if not self.in_memory:
            prepare_file(self.path)
        conn = sqlite3.connect(
            self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
        )
        try:
            found = conn.execute("PRAGMA application_id").fetchone()[0]
            if found not in (0, APPLICATION_ID):
                raise StoreError(
                    f"{self.path} is not a flower outbox (application_id {found:#x})", path=self.path
                )
            if not self.in_memory:
                if conn.execute("PRAGMA journal_mode=WAL").fetchone()[0].lower() != "wal":
                    raise StoreError(f"{self.path}: cannot switch the outbox to WAL mode", path=self.path)
                conn.execute("PRAGMA synchronous=NORMAL")  # with WAL: a commit survives a killed process
                info = os.stat(self.path)
                self._file = (info.st_dev, info.st_ino)
            with immediate(conn):
                self.id = prepare(conn, self.path)
        except BaseException:
            conn.close()
            raise
        return conn

    def _still_there(self) -> None:
        """`StoreError` when the file opened was deleted or replaced since: a put would land in a file
        nobody reads again."""
        if self._file is None:
            return
        try:
            info = os.stat(self.path)
        except OSError:
            info = None
        if info is None or (info.st_dev, info.st_ino) != self._file:
            raise StoreError(f"the outbox {self.path} was deleted or replaced while in use", path=self.path)

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
        self._still_there()
        with self._write() as conn:
            conn.executemany(
                "INSERT INTO pending (target, project_key, session_id, subpath, dedupe, payload, enqueued) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            # an entry without a uuid is keyed by its row id, which is never reused
            conn.execute("UPDATE pending SET dedupe = '~' || ? || ':' || id WHERE dedupe = ''", (self.id,))
        return len(rows)

    def put_rows(self, target: str, rows: Sequence[Row]) -> None:
        """Keep rows taken from another outbox, in order, with their own idempotency keys."""
        with self._write() as conn:
            conn.executemany(
                "INSERT INTO pending (target, project_key, session_id, subpath, dedupe, payload, enqueued) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        target,
                        row.key["project_key"],
                        row.key["session_id"],
                        row.key.get("subpath") or "",
                        row.dedupe,
                        row.payload,
                        time.time(),
                    )
                    for row in rows
                ],
            )

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
            key = key_of(project_key, session_id, subpath)
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
        return [Row(i, key_of(p, s, sub), d, payload) for i, p, s, sub, d, payload in found]

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

    def take(self, target: str, sessions: Collection[str]) -> list[Row]:
        """Every row of `sessions` waiting for `target`, in order, removed from this outbox when it can
        be written (a full disk may refuse the delete: the rows then stay here too, and are delivered
        once more, harmlessly, by the next start)."""
        if not sessions:
            return []
        marks = ",".join("?" * len(sessions))
        with self._connection() as conn:
            found = conn.execute(
                "SELECT id, project_key, session_id, subpath, dedupe, payload FROM pending "
                f"WHERE target = ? AND session_id IN ({marks}) ORDER BY id",
                [target, *sessions],
            ).fetchall()
        rows = [Row(i, key_of(p, sid, sub), d, payload) for i, p, sid, sub, d, payload in found]
        with contextlib.suppress(StoreError):
            self.ack([row.id for row in rows])
        return rows
