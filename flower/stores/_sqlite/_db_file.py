"""The file behind a `SqliteSessionStore`: checked before SQLite opens it, and every failure explained.

- Before SQLite opens the file: a missing file is created 0600 (its missing directories 0700, the topmost
  with a `.gitignore` holding `*`: transcripts can hold secrets); anything but a regular file is refused,
  a symlink included (an agent that can write in the workspace could plant one to send every transcript
  elsewhere, and a FIFO would block the open). SQLite itself opens its `-wal` and `-shm` files with
  `O_NOFOLLOW` (measured with SQLite 3.40: a symlink there fails with "unable to open database file").
- `immediate()` wraps statements in one `BEGIN IMMEDIATE` transaction (rolled back on any exception).
- `explain()` turns whatever a store call raised (an `sqlite3.Error`, an `OSError`, a stored payload that
  is not JSON, an entry nested too deep) into one `StoreError` that names the file and the cause; the
  original is chained by the caller (`raise explain(...) from exc`).
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from ..._errors import StoreError
from ..._util.private_dirs import make_private_dirs

__all__ = ["explain", "immediate", "prepare_file"]

_KINDS: Final = (
    (stat.S_ISLNK, "is a symbolic link; flower does not follow one (give the real path of the database)"),
    (stat.S_ISDIR, "is a directory, not a database file"),
)
_CREATE: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
_ACCESS: Final = (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_PERM)
_SIDE_FILES: Final = ("-wal", "-shm", "-journal")


@contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction: `BEGIN IMMEDIATE` (the write lock taken at once, waiting up to the busy
    timeout), `COMMIT` at the end of the block, `ROLLBACK` on any exception."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def prepare_file(path: str) -> None:
    """Create the database file (and its directories) when missing; refuse what is not a regular file.

    Raises `StoreError` for something other than a regular file at `path`, `OSError` when a directory or
    the file cannot be created (`explain()` words it).
    """
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        make_private_dirs(os.path.dirname(os.path.abspath(path)))
        try:
            os.close(os.open(path, _CREATE, 0o600))  # 0600: SQLite gives -wal and -shm the same mode
        except FileExistsError:
            return prepare_file(path)  # another process created it meanwhile: check what it is
        return None
    if not stat.S_ISREG(found.st_mode):
        why = next((text for test, text in _KINDS if test(found.st_mode)), None)
        raise StoreError(
            f"session store {path} {why or 'is not a regular file (a FIFO, a socket or a device)'}", path=path
        )
    return None


def _read_only(path: str) -> bool:
    """Whether the file system that holds `path` (or its nearest existing parent) is mounted read-only."""
    probe = os.path.abspath(path)
    while not os.path.exists(probe) and os.path.dirname(probe) != probe:
        probe = os.path.dirname(probe)
    try:
        return bool(os.statvfs(probe).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def _side_file_in_the_way(path: str) -> str | None:
    for suffix in _SIDE_FILES:
        side = path + suffix
        try:
            found = os.lstat(side)
        except OSError:
            continue
        if not stat.S_ISREG(found.st_mode):
            return f"{side} is not a regular file (SQLite does not follow a symlink there); remove it"
    return None


def _sqlite_cause(path: str, exc: sqlite3.Error, busy_timeout: float) -> str:
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    if primary in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return (
            f"{exc}: another connection held the database for longer than busy_timeout ({busy_timeout:g} s); "
            "raise busy_timeout, or look for a process that keeps a write transaction open"
        )
    if primary == sqlite3.SQLITE_NOTADB:
        return f"not a SQLite database (a corrupt or foreign file): {exc}"
    if primary == sqlite3.SQLITE_CORRUPT:
        return f"the database file is corrupt: {exc}"
    if primary == sqlite3.SQLITE_FULL:
        return f"the disk is full: {exc}"
    if primary in _ACCESS:
        if _read_only(path):
            return f"the file system is read-only: {exc}"
        in_the_way = _side_file_in_the_way(path)
        if in_the_way:
            return f"{exc}: {in_the_way}"
        if primary != sqlite3.SQLITE_IOERR:
            return f"{exc} (check that the file and its directory are writable)"
    return str(exc)


def _os_cause(path: str, exc: OSError) -> str:
    where = f" ({exc.filename})" if exc.filename else ""
    reason = exc.strerror or str(exc)
    if exc.errno == errno.EROFS or _read_only(path):
        return f"the file system is read-only{where}: {reason}"
    if exc.errno in (errno.EEXIST, errno.ENOTDIR):
        return f"a file stands where a directory is needed{where}: {reason}"
    if exc.errno == errno.ENOSPC:
        return f"the disk is full{where}: {reason}"
    return f"{reason}{where}"


def explain(path: str, exc: BaseException, *, busy_timeout: float = 0.0) -> StoreError:
    """The `StoreError` for `exc` raised by a store call on `path`: the file, then the cause in words."""
    if isinstance(exc, StoreError):
        return exc
    if isinstance(exc, sqlite3.Error):
        cause = _sqlite_cause(path, exc, busy_timeout)
    elif isinstance(exc, OSError):
        cause = _os_cause(path, exc)
    elif isinstance(exc, json.JSONDecodeError | UnicodeDecodeError):
        cause = f"a stored entry is not valid JSON (the file was changed outside flower?): {exc}"
    elif isinstance(exc, RecursionError):
        cause = f"an entry is nested too deeply to encode or decode ({exc})"
    else:
        cause = f"{type(exc).__name__}: {exc}"
    return StoreError(f"session store {path}: {cause}", path=path)
