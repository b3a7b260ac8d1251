"""The outbox file's tables, and the migration of an older layout in place.

The file is marked as a flower outbox (`PRAGMA application_id`) and its layout's version is `PRAGMA
user_version`:

- 1: the first layout: rows keyed by the store's *label* (its path, or its DSN without password).
- 2: rows keyed by the store's *identity* (`SqliteSessionStore.identity()`,
  `PostgresSessionStore.identity()`): any path or DSN that reaches the store delivers them. A `stores`
  table names each identity seen (its label then, for messages and `flower doctor`). Rows of layout 1
  are kept under `label:<their label>`: a run whose store has that label takes them over (what layout 1
  did), any other run reports them.

A file of layout 1 is migrated when it is opened, in the transaction that checks it.
"""

from __future__ import annotations

import secrets
import sqlite3
import time
from typing import Final

from ..._errors import StoreError

__all__ = ["APPLICATION_ID", "LABEL", "VERSION", "prepare"]

APPLICATION_ID: Final = 0x666C776F  # "flwo"
VERSION: Final = 2
LABEL: Final = "label:"
"""The prefix of a target that is a store's label, not its identity (rows of layout 1, or of a run whose
store could not say who it is)."""

_SCHEMA: Final = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE pending (
    id INTEGER PRIMARY KEY AUTOINCREMENT,  -- delivery order
    target TEXT NOT NULL,                  -- the store the row is for (its identity)
    project_key TEXT NOT NULL,
    session_id TEXT NOT NULL,
    subpath TEXT NOT NULL,                 -- '' for the main transcript
    dedupe TEXT NOT NULL,                  -- the idempotency key
    payload TEXT NOT NULL,                 -- the entry as JSON, as the stores keep it
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
)
"""

_STORES: Final = """
CREATE TABLE stores (
    target TEXT PRIMARY KEY,               -- a store's identity (or label:<label>)
    label TEXT NOT NULL,                   -- how the last run that used it named it (never a password)
    seen REAL NOT NULL
)
"""


def _run(conn: sqlite3.Connection, script: str) -> None:
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


def _to_2(conn: sqlite3.Connection) -> None:
    _run(conn, _STORES)
    conn.execute(
        "INSERT OR IGNORE INTO stores (target, label, seen) SELECT ? || target, target, ? FROM "
        "(SELECT target FROM pending UNION SELECT target FROM sessions UNION SELECT target FROM fenced)",
        (LABEL, time.time()),
    )
    for table in ("pending", "sessions", "fenced"):
        conn.execute(f"UPDATE {table} SET target = ? || target", (LABEL,))


def prepare(conn: sqlite3.Connection, path: str) -> str:
    """Create the tables of an empty file or migrate an older layout, inside the caller's write
    transaction; the outbox's own id. `StoreError` for a file of another application or a newer layout."""
    if conn.execute("PRAGMA application_id").fetchone()[0] == 0:
        if conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            raise StoreError(f"{path} is a database of another application", path=path)
        _run(conn, _SCHEMA)
        _run(conn, _STORES)
        conn.execute("INSERT INTO meta VALUES ('id', ?)", (secrets.token_hex(6),))
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {VERSION}")
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version == 1:
        _to_2(conn)
        conn.execute(f"PRAGMA user_version = {VERSION}")
    elif version != VERSION:
        raise StoreError(f"{path} is an outbox of layout {version}; this flower reads {VERSION}", path=path)
    return str(conn.execute("SELECT value FROM meta WHERE key = 'id'").fetchone()[0])
