"""One SQLite connection shared by threads under a lock, opened on first use: the session store's file
and the outbox's alike.

A subclass gives `_open()`; `_connection()` yields the open connection with the lock held and turns every
failure into a `StoreError` naming the file (`_db_file.explain`), `_write()` is one `BEGIN IMMEDIATE`
transaction on it, and `close()` drops it (the next call opens it again).
"""

from __future__ import annotations

import sqlite3
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

from ..._errors import FlowerError
from ._db_file import explain, immediate

__all__ = ["LockedConnection"]


class LockedConnection:
    """See the module docstring. `busy_timeout` (seconds) is how long a write waits for another
    process, named when it expires."""

    def __init__(self, path: str, *, busy_timeout: float) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._finalizer: weakref.finalize[[], LockedConnection] | None = None

    def _open(self) -> sqlite3.Connection:
        raise NotImplementedError

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                if self._conn is None:
                    self._conn = self._open()
                    # the safety net of a store nobody closed: the connection closes with this object, or
                    # at exit, without the ResourceWarning Python 3.13+ gives an unclosed connection
                    self._finalizer = weakref.finalize(self, self._conn.close)
                yield self._conn
            except FlowerError:
                raise
            except (sqlite3.Error, OSError, ValueError, RecursionError) as exc:
                # every failure names the file and its cause (_db_file.explain), the original chained
                raise explain(self.path, exc, busy_timeout=self.busy_timeout) from exc

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._connection() as conn, immediate(conn):
            yield conn

    def close(self) -> None:
        """Close the connection; the next call opens it again."""
        with self._lock:
            if self._finalizer is not None:
                self._finalizer.detach()
                self._finalizer = None
            if self._conn is not None:
                self._conn.close()
                self._conn = None
