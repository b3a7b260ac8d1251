"""`SqliteSessionStore`'s tables, their migration in place, and the lease epochs kept among them.

The file is marked as flower's (`PRAGMA application_id`) and its layout's version is `PRAGMA
user_version`:

- 1: the first layout.
- 2: a `leases` table: each session's lease epoch (drawn as the largest epoch so far plus one at each
  acquisition, never reused) and its holder. Every append of a runner that holds the session's lease
  checks the epoch in its transaction, so a runner whose lease was taken over cannot write (fencing):
  the `flock` decides who may hold the lease, the epoch is what the database believes.
- 3: a `meta` table holding the store's id (`store_id`, random, drawn when the table is made): what the
  outbox keys its waiting rows by, so they reach this store whatever path names it (a file moved, a
  workspace copied elsewhere, a backup restored in its place keep it; see `SqliteSessionStore.identity`).

A file of an older version is migrated to the newest when it is opened, in one `BEGIN IMMEDIATE`
transaction (two processes opening it at once migrate it once). Every function here runs on a
connection inside the transaction its caller opened.
"""

from __future__ import annotations

import sqlite3
from typing import Final

from ..._errors import StoreError
from .._lease import NEVER_LEASED, fenced

__all__ = ["APPLICATION_ID", "SCHEMA_VERSION", "check_epoch", "create", "migrate", "take_epoch"]

APPLICATION_ID: Final = (
    0x666C7772  # "flwr": marks the file as a flower session store (sqlite header, offset 68)
)
SCHEMA_VERSION: Final = 3

_SCHEMA: Final = """
CREATE TABLE transcripts (
    id INTEGER PRIMARY KEY,
    project_key TEXT NOT NULL,
    session_id TEXT NOT NULL,
    subpath TEXT NOT NULL,               -- '' for the main transcript
    mtime INTEGER NOT NULL,              -- storage write time, epoch ms
    UNIQUE (project_key, session_id, subpath)
);
CREATE TABLE entries (
    id INTEGER PRIMARY KEY,              -- commit order: the order load() returns
    transcript INTEGER NOT NULL,
    uuid TEXT,                           -- the idempotency key: the entry's uuid, or the outbox's key
    payload TEXT NOT NULL                -- the entry as JSON
);
CREATE INDEX entries_by_transcript ON entries (transcript, id);
CREATE UNIQUE INDEX entries_by_uuid ON entries (transcript, uuid) WHERE uuid IS NOT NULL;
CREATE TABLE summaries (
    project_key TEXT NOT NULL,
    session_id TEXT NOT NULL,
    mtime INTEGER NOT NULL,
    data TEXT NOT NULL,                  -- fold_session_summary's opaque state, verbatim
    PRIMARY KEY (project_key, session_id)
);
CREATE TABLE clock (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    last_ms INTEGER NOT NULL             -- mtimes are strictly increasing across processes
);
"""

_TO_2: Final = """
CREATE TABLE leases (
    session_id TEXT PRIMARY KEY,
    epoch INTEGER NOT NULL,              -- the latest acquisition's epoch (kept after the lease ends)
    holder TEXT NOT NULL                 -- runner name, host and pid of that acquisition
);
"""

_TO_3: Final = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta (key, value) VALUES ('store_id', lower(hex(randomblob(8))))
"""

_MIGRATIONS: Final = {1: _TO_2, 2: _TO_3}
"""version -> the statements that take a file of that version to the next."""


def _run(conn: sqlite3.Connection, script: str) -> None:
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


def create(conn: sqlite3.Connection, path: str) -> None:
    """Create the tables of an empty file (nothing when another process initialised it first)."""
    application_id = conn.execute("PRAGMA application_id").fetchone()[0]
    if application_id == APPLICATION_ID:
        return
    tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    if tables:
        raise StoreError(
            f"{path} is a SQLite database of another application (it has tables but no flower mark)",
            path=path,
        )
    _run(conn, _SCHEMA)
    for step in range(1, SCHEMA_VERSION):
        _run(conn, _MIGRATIONS[step])
    conn.execute("INSERT INTO clock (id, last_ms) VALUES (1, 0)")
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def migrate(conn: sqlite3.Connection, path: str) -> None:
    """Take a file of an older layout to `SCHEMA_VERSION`; `StoreError` for a newer or unknown one."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version == SCHEMA_VERSION:
        return  # another process migrated it first
    if version not in _MIGRATIONS:
        newer = isinstance(version, int) and version > SCHEMA_VERSION
        why = "a newer flower wrote it: upgrade flower-context" if newer else "unknown layout"
        raise StoreError(
            f"{path} holds a flower session store of schema {version}; this version reads schema "
            f"{SCHEMA_VERSION} ({why})",
            path=path,
        )
    for step in range(version, SCHEMA_VERSION):
        _run(conn, _MIGRATIONS[step])
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def take_epoch(
    conn: sqlite3.Connection, session_id: str, holder: str, if_epoch: int | None, path: str
) -> int:
    """A new epoch for `session_id`, recorded with its holder; with `if_epoch`, only while the session's
    epoch is still that one (`NEVER_LEASED` when it has none), else the `LeaseError` of a takeover."""
    row = conn.execute("SELECT epoch, holder FROM leases WHERE session_id = ?", (session_id,)).fetchone()
    current = int(row[0]) if row is not None else NEVER_LEASED
    if if_epoch is not None and current != if_epoch:
        raise fenced(session_id, if_epoch, current, row[1] if row is not None else None, path)
    epoch = int(conn.execute("SELECT coalesce(max(epoch), 0) + 1 FROM leases").fetchone()[0])
    conn.execute(
        "INSERT INTO leases (session_id, epoch, holder) VALUES (?, ?, ?) "
        "ON CONFLICT (session_id) DO UPDATE SET epoch = excluded.epoch, holder = excluded.holder",
        (session_id, epoch, holder),
    )
    return epoch


def check_epoch(conn: sqlite3.Connection, session_id: str, epoch: int, path: str) -> None:
    """Refuse a write of a holder whose epoch is no longer the session's (`LeaseError`)."""
    row = conn.execute("SELECT epoch, holder FROM leases WHERE session_id = ?", (session_id,)).fetchone()
    if row is None or int(row[0]) != epoch:
        raise fenced(session_id, epoch, int(row[0]) if row is not None else None, row and row[1], path)
