"""A store from a location: a `postgresql://` DSN opens a `PostgresSessionStore`, a path a SQLite file."""

from __future__ import annotations

import os

from claude_agent_sdk import SessionStore

from ._postgres._connection import is_dsn
from ._postgres.store import PostgresSessionStore
from ._sqlite.store import SqliteSessionStore

__all__ = ["open_store"]


def open_store(location: str | os.PathLike[str]) -> SessionStore:
    """`PostgresSessionStore(location)` for a `postgresql://` or `postgres://` URI, else a SQLite file."""
    if is_dsn(location):
        return PostgresSessionStore(os.fspath(location))
    return SqliteSessionStore(location)
