"""`SqliteSessionStore`'s leases: an exclusive `flock` per session, on a file beside the database.

The lock belongs to the open file description, so the operating system drops it when the process
ends, however it ends (no expiry, no heartbeat, no stale lease to clean up). Two stores in one process
open the file twice and exclude each other too. Lock files are named by a hash of the session id and
are never deleted (deleting a lock file while another process waits on it would let two processes
hold "the" lock); each holds the holder's name while it is held.

For an in-memory database (`":memory:"`, one process by definition) the leases are kept in memory, and
so they are on a system without `flock` (Windows), where they hold within one process only.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Final

import anyio

from ..._errors import LeaseError, StoreError
from ..._util.private_dirs import make_private_dirs
from .._lease import Lease, busy, holder_name

__all__ = ["FileLeases"]

try:
    import fcntl
except ImportError:  # not a POSIX system: leases hold within this process only
    fcntl = None  # type: ignore[assignment]

_POLL: Final = 0.05
_FLAGS: Final = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_IN_MEMORY: dict[tuple[int | str, str], str] = {}  # (store id or file, session) -> holder, in-process leases


class FileLeases:
    """The leases of one SQLite store; `directory` is None for an in-memory database."""

    def __init__(self, database: str) -> None:
        self.database = database
        local = database == ":memory:" or fcntl is None
        self.directory = None if local else Path(f"{database}-leases")
        self._slot = id(self) if database == ":memory:" else os.path.abspath(database)

    @asynccontextmanager
    async def lease(self, session_id: str, timeout: float) -> AsyncIterator[Lease]:
        """Hold the lease of `session_id`; wait up to `timeout` seconds for it, then `LeaseError`."""
        if self.directory is None:
            async with self._memory(session_id, timeout) as held:
                yield held
            return
        path = await anyio.to_thread.run_sync(self._path, session_id)
        started = time.monotonic()
        fd = await anyio.to_thread.run_sync(self._open, path)
        try:
            while not _try_lock(fd):
                if time.monotonic() - started >= timeout:
                    raise self._busy(session_id, timeout, _read_holder(fd))
                await anyio.sleep(_POLL)
            me = holder_name()
            _write_holder(fd, session_id, me)
            try:
                yield Lease(session_id, me, self.database, waited=time.monotonic() - started)
            finally:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, 0)
                    fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _busy(self, session_id: str, timeout: float, holder: str | None) -> LeaseError:
        return busy(session_id, timeout, holder, self.database, path=self.database)

    def _path(self, session_id: str) -> Path:
        assert self.directory is not None
        try:
            make_private_dirs(self.directory)  # a .gitignore where it creates flower's directory
        except OSError as exc:
            raise StoreError(f"cannot create the lease directory {self.directory}: {exc}") from exc
        if self.directory.is_symlink() or not self.directory.is_dir():
            raise StoreError(f"the lease directory {self.directory} is not a directory", path=self.database)
        name = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return self.directory / f"{name}.lock"

    def _open(self, path: Path) -> int:
        try:
            return os.open(path, _FLAGS, 0o600)
        except OSError as exc:
            raise StoreError(f"cannot open the lease file {path}: {exc}", path=self.database) from exc

    @asynccontextmanager
    async def _memory(self, session_id: str, timeout: float) -> AsyncIterator[Lease]:
        slot = (self._slot, session_id)
        started = time.monotonic()
        while slot in _IN_MEMORY:
            if time.monotonic() - started >= timeout:
                raise self._busy(session_id, timeout, _IN_MEMORY[slot])
            await anyio.sleep(_POLL)
        me = holder_name()
        _IN_MEMORY[slot] = me
        try:
            yield Lease(session_id, me, self.database, waited=time.monotonic() - started)
        finally:
            _IN_MEMORY.pop(slot, None)


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _write_holder(fd: int, session_id: str, holder: str) -> None:
    text = json.dumps({"session_id": session_id, "holder": holder, "since": time.time()})
    with contextlib.suppress(OSError):  # the name is for messages only: the lock is what counts
        os.ftruncate(fd, 0)
        os.pwrite(fd, text.encode(), 0)


def _read_holder(fd: int) -> str | None:
    try:
        data = json.loads(os.pread(fd, 4096, 0) or b"null")
    except (OSError, ValueError):
        return None
    holder = data.get("holder") if isinstance(data, dict) else None
    return holder if isinstance(holder, str) and holder else None
