"""The blocking half of `SqliteSessionStore`: schema, opening checks and one method per store call.

Every method runs in a worker thread (the store calls it through `anyio.to_thread.run_sync`) and holds
the connection lock, so one connection serves any number of threads. Several processes may share the
file: the database is in WAL mode (readers never block the writer), each write is one `BEGIN IMMEDIATE`
transaction (the whole batch lands or none of it, even when the process is killed mid-append), and a
busy database is waited for up to `busy_timeout` seconds.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from typing import Any, cast

from claude_agent_sdk import (
    SessionStoreEntry,
    SessionStoreListEntry,
    SessionSummaryEntry,
    fold_session_summary,
)
from claude_agent_sdk.types import SessionKey

from ..._errors import StoreError
from .._target import not_this_store
from . import _schema
from ._db_file import immediate, prepare_file
from ._locked import LockedConnection
from ._schema import APPLICATION_ID, SCHEMA_VERSION

__all__ = ["APPLICATION_ID", "SCHEMA_VERSION", "Database"]

_CHUNK = 500  # bound variables per statement, well under SQLite's limit


def _subpath(key: SessionKey) -> str:
    subpath = key.get("subpath")
    return subpath if isinstance(subpath, str) else ""


def _check_key(key: Any, *, subpath: bool = True) -> None:
    if not isinstance(key, dict):
        raise StoreError(f"a session key is a dict with project_key and session_id, got {type(key).__name__}")
    for name in ("project_key", "session_id"):
        if not isinstance(key.get(name), str) or not key[name]:
            raise StoreError(f"session key field {name!r} must be a non-empty str, got {key.get(name)!r}")
    if subpath and "subpath" in key and key["subpath"] is not None and not isinstance(key["subpath"], str):
        raise StoreError(f"session key field 'subpath' must be a str, got {key['subpath']!r}")


class Database(LockedConnection):
    """One SQLite file holding session transcripts (blocking; see the module docstring)."""

    def _open(self) -> sqlite3.Connection:
        memory = self.path == ":memory:"
        if not memory:
            prepare_file(self.path)  # a regular file, created 0600 (its directories 0700, git-ignored)
        conn = sqlite3.connect(
            self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
        )
        try:
            self._prepare(conn, memory=memory)
        except BaseException:
            conn.close()
            raise
        return conn

    def _prepare(self, conn: sqlite3.Connection, *, memory: bool) -> None:
        try:
            application_id = conn.execute("PRAGMA application_id").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            if getattr(exc, "sqlite_errorcode", 0) & 0xFF not in (
                sqlite3.SQLITE_NOTADB,
                sqlite3.SQLITE_CORRUPT,
            ):
                raise  # cannot open, read-only, locked...: explained by _connection
            raise StoreError(
                f"{self.path} is not a SQLite database (a corrupt or foreign file): {exc}", path=self.path
            ) from exc
        if application_id not in (0, APPLICATION_ID):
            raise StoreError(
                f"{self.path} is a SQLite database of another application "
                f"(application_id {application_id:#x})",
                path=self.path,
            )
        if application_id == 0:
            with immediate(conn):  # two processes creating the file: one creates, one sees it
                _schema.create(conn, self.path)
        if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
            try:
                with immediate(conn):  # an older layout is migrated in place, once
                    _schema.migrate(conn, self.path)
            except sqlite3.OperationalError as exc:
                if getattr(exc, "sqlite_errorcode", 0) & 0xFF != sqlite3.SQLITE_READONLY:
                    raise
                # a file that cannot be written is read as it is; its first write says why it fails
        if not memory:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(f"{self.path}: cannot switch to WAL mode (got {mode!r})", path=self.path)
        conn.execute("PRAGMA synchronous=NORMAL")  # with WAL: safe against a killed process

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._connection() as conn:
            conn.execute("BEGIN")  # one snapshot for the statements inside
            try:
                yield conn
            finally:
                if conn.in_transaction:
                    conn.execute("COMMIT")

    @staticmethod
    def _tick(conn: sqlite3.Connection) -> int:
        last = int(conn.execute("SELECT last_ms FROM clock WHERE id = 1").fetchone()[0])
        now = max(int(time.time() * 1000), last + 1)
        conn.execute("UPDATE clock SET last_ms = ? WHERE id = 1", (now,))
        return now

    # -- the store calls ---------------------------------------------------------------------------

    def append(self, key: SessionKey, entries: Sequence[SessionStoreEntry], epoch: int | None = None) -> None:
        _check_key(key)
        if not isinstance(entries, list | tuple):
            raise StoreError(
                f"append() takes a list of entries, got {type(entries).__name__}", path=self.path
            )
        if entries:
            self._append(key, [self._row(index, entry) for index, entry in enumerate(entries)], epoch)

    def append_keyed(
        self,
        key: SessionKey,
        rows: Sequence[tuple[str, str]],
        epoch: int | None = None,
        store_id: str | None = None,
    ) -> None:
        """Append `(idempotency key, entry JSON)` rows: the key takes the uuid's place. With `store_id`,
        only into the file of that id (checked in the append's transaction)."""
        _check_key(key)
        if rows:
            self._append(
                key,
                [self._keyed(index, dedupe, payload) for index, (dedupe, payload) in enumerate(rows)],
                epoch,
                store_id,
            )

    def take_epoch(self, session_id: str, holder: str, if_epoch: int | None) -> int:
        """Draw a new lease epoch for `session_id` (only while it is `if_epoch`, when given)."""
        with self._write() as conn:
            return _schema.take_epoch(conn, session_id, holder, if_epoch, self.path)

    def _append(
        self,
        key: SessionKey,
        rows: list[tuple[str | None, str, SessionStoreEntry]],
        epoch: int | None,
        store_id: str | None = None,
    ) -> None:
        subpath = _subpath(key)
        with self._write() as conn:
            if store_id is not None:
                found = conn.execute("SELECT value FROM meta WHERE key = 'store_id'").fetchone()
                if found is None or found[0] != store_id:
                    mine = f"sqlite:{found[0]}" if found is not None else None
                    raise not_this_store(f"sqlite:{store_id}", mine, self.path, path=self.path)
            if epoch is not None:
                _schema.check_epoch(conn, key["session_id"], epoch, self.path)
            now = self._tick(conn)
            conn.execute(
                "INSERT INTO transcripts (project_key, session_id, subpath, mtime) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (project_key, session_id, subpath) DO UPDATE SET mtime = excluded.mtime",
                (key["project_key"], key["session_id"], subpath, now),
            )
            transcript = conn.execute(
                "SELECT id FROM transcripts WHERE project_key = ? AND session_id = ? AND subpath = ?",
                (key["project_key"], key["session_id"], subpath),
            ).fetchone()[0]
            fresh = self._unseen(conn, transcript, rows)
            conn.executemany(
                "INSERT INTO entries (transcript, uuid, payload) VALUES (?, ?, ?)",
                [(transcript, uuid, payload) for uuid, payload, _ in fresh],
            )
            if not subpath:
                self._fold(conn, key, [entry for _, _, entry in fresh], now)

    def _row(self, index: int, entry: Any) -> tuple[str | None, str, SessionStoreEntry]:
        if not isinstance(entry, dict):
            raise StoreError(f"entry {index} is a {type(entry).__name__}, not a dict", path=self.path)
        try:
            payload = json.dumps(entry, separators=(",", ":"))  # ASCII: lone surrogates survive too
        except (TypeError, ValueError, RecursionError) as exc:
            raise StoreError(
                f"session store {self.path}: entry {index} is not JSON-serialisable: {exc}", path=self.path
            ) from exc
        uuid = entry.get("uuid")
        return (uuid if isinstance(uuid, str) else None), payload, cast(SessionStoreEntry, entry)

    def _keyed(self, index: int, dedupe: str, payload: str) -> tuple[str | None, str, SessionStoreEntry]:
        try:
            entry = json.loads(payload)
        except ValueError as exc:
            raise StoreError(f"session store {self.path}: row {index} is not a JSON entry: {exc}") from exc
        if not isinstance(entry, dict):
            raise StoreError(f"row {index} is a {type(entry).__name__}, not a dict", path=self.path)
        return dedupe, payload, cast(SessionStoreEntry, entry)

    @staticmethod
    def _unseen(
        conn: sqlite3.Connection, transcript: int, rows: list[tuple[str | None, str, SessionStoreEntry]]
    ) -> list[tuple[str | None, str, SessionStoreEntry]]:
        """The rows whose uuid is neither stored nor repeated earlier in the batch (SDK retries resend)."""
        uuids = sorted({uuid for uuid, _, _ in rows if uuid is not None})
        seen: set[str] = set()
        for start in range(0, len(uuids), _CHUNK):
            chunk = uuids[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            found = conn.execute(
                f"SELECT uuid FROM entries WHERE transcript = ? AND uuid IN ({marks})", (transcript, *chunk)
            )
            seen.update(uuid for (uuid,) in found)
        fresh = []
        for row in rows:
            uuid = row[0]
            if uuid is not None:
                if uuid in seen:
                    continue
                seen.add(uuid)
            fresh.append(row)
        return fresh

    @staticmethod
    def _fold(conn: sqlite3.Connection, key: SessionKey, entries: list[SessionStoreEntry], now: int) -> None:
        row = conn.execute(
            "SELECT mtime, data FROM summaries WHERE project_key = ? AND session_id = ?",
            (key["project_key"], key["session_id"]),
        ).fetchone()
        previous: SessionSummaryEntry | None = None
        if row is not None:
            previous = {"session_id": key["session_id"], "mtime": row[0], "data": json.loads(row[1])}
        folded = fold_session_summary(previous, key, entries)
        conn.execute(
            "INSERT INTO summaries (project_key, session_id, mtime, data) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (project_key, session_id) "
            "DO UPDATE SET mtime = excluded.mtime, data = excluded.data",
            (key["project_key"], key["session_id"], now, json.dumps(folded["data"], separators=(",", ":"))),
        )

    def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        _check_key(key)
        with self._read() as conn:
            row = conn.execute(
                "SELECT id FROM transcripts WHERE project_key = ? AND session_id = ? AND subpath = ?",
                (key["project_key"], key["session_id"], _subpath(key)),
            ).fetchone()
            if row is None:
                return None
            # closed even when a payload fails to decode: no statement left open past the lock
            with closing(
                conn.execute("SELECT payload FROM entries WHERE transcript = ? ORDER BY id", (row[0],))
            ) as payloads:
                return [json.loads(payload) for (payload,) in payloads]

    def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        with self._read() as conn:
            rows = conn.execute(
                "SELECT session_id, mtime FROM transcripts "
                "WHERE project_key = ? AND subpath = '' ORDER BY id",
                (project_key,),
            ).fetchall()
        return [{"session_id": session_id, "mtime": mtime} for session_id, mtime in rows]

    def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        with self._read() as conn:
            rows = conn.execute(
                "SELECT session_id, mtime, data FROM summaries WHERE project_key = ? ORDER BY session_id",
                (project_key,),
            ).fetchall()
            return [{"session_id": s, "mtime": mtime, "data": json.loads(data)} for s, mtime, data in rows]

    def delete(self, key: SessionKey) -> None:
        _check_key(key)
        subpath = _subpath(key)
        with self._write() as conn:
            where = "project_key = ? AND session_id = ?" + ("" if not subpath else " AND subpath = ?")
            args: tuple[str, ...] = (key["project_key"], key["session_id"]) + ((subpath,) if subpath else ())
            conn.execute(
                f"DELETE FROM entries WHERE transcript IN (SELECT id FROM transcripts WHERE {where})", args
            )
            conn.execute(f"DELETE FROM transcripts WHERE {where}", args)
            if not subpath:
                conn.execute("DELETE FROM summaries WHERE project_key = ? AND session_id = ?", args)

    def list_subkeys(self, project_key: str, session_id: str) -> list[str]:
        with self._read() as conn:
            rows = conn.execute(
                "SELECT subpath FROM transcripts WHERE project_key = ? AND session_id = ? AND subpath != '' "
                "ORDER BY id",
                (project_key, session_id),
            ).fetchall()
        return [subpath for (subpath,) in rows]

    def home(self, session_id: str, local: str) -> tuple[str, str | None] | None:
        """Where the main transcript of `session_id` is stored: its project key (`local` when it is
        there) and the working directory its first entry names; None when no project holds it."""
        with self._read() as conn:
            keys = conn.execute(
                "SELECT id, project_key FROM transcripts WHERE session_id = ? AND subpath = '' ORDER BY id",
                (session_id,),
            ).fetchall()
            if not keys:
                return None
            transcript, project_key = next(((i, k) for i, k in keys if k == local), keys[0])
            cwd = None
            for (payload,) in conn.execute(
                "SELECT payload FROM entries WHERE transcript = ? ORDER BY id LIMIT 50", (transcript,)
            ):
                try:
                    found = json.loads(payload).get("cwd")
                except (ValueError, AttributeError):
                    continue
                if isinstance(found, str) and found:
                    cwd = found
                    break
        return str(project_key), cwd

    def integrity(self) -> str:
        """`PRAGMA integrity_check`'s answer: `"ok"` for a sound file."""
        with self._connection() as conn:
            return str(conn.execute("PRAGMA integrity_check").fetchone()[0])

    def store_id(self) -> str | None:
        """The store's own id (`meta.store_id`), or None for a file of an older layout that could not be
        migrated (a read-only one)."""
        with self._connection() as conn:
            try:
                row = conn.execute("SELECT value FROM meta WHERE key = 'store_id'").fetchone()
            except sqlite3.OperationalError:
                return None
        return str(row[0]) if row is not None else None
