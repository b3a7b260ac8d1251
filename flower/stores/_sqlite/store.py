"""`SqliteSessionStore`: the SDK's `SessionStore` protocol over one SQLite file.

Pass it as `ClaudeAgentOptions(session_store=...)` and the SDK mirrors every transcript line into it,
and loads it back on resume. It implements the whole protocol (the optional methods included) and passes
the SDK's `run_session_store_conformance`.

- Idempotent on the entry `uuid`: the SDK retries a failed batch, so an entry already stored (or repeated
  within the batch) is skipped; entries without a uuid are always appended.
- Never blocks the event loop: every call runs in a worker thread (`anyio.to_thread.run_sync`).
- Safe with several processes on one file: WAL mode, one transaction per call, a busy timeout.
- Honest about the file: a path that is a directory, a file that is not SQLite, or another
  application's database raises `StoreError` at first use, naming the path.
- Leases (`lease()`): a `flock` per session, and an epoch in the database that every append of the
  holder checks (fencing, see `Lease`). A file of an older layout is migrated in place.
- A session resumed from another directory (`follow()`): found under the project key it is stored
  under, whatever the CLI's new working directory.

The constructor does no I/O; the file (and its directory, 0700) is created at the first call.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import cast

import anyio
from claude_agent_sdk import (
    SessionKey,
    SessionListSubkeysKey,
    SessionStore,
    SessionStoreEntry,
    SessionStoreListEntry,
    SessionSummaryEntry,
    project_key_for_directory,
)

from ..._errors import SpecError, StoreError
from ..._util.check import checked
from .._closing import AsyncClosing
from .._lease import Holding, Lease, check_epoch, check_timeout, holder_name
from .._relocate import Moves, relocate
from .._target import not_this_store
from ._flock import FileLeases
from ._sql import Database

__all__ = ["SqliteSessionStore"]


class SqliteSessionStore(AsyncClosing, SessionStore):
    """A `SessionStore` in one SQLite file; see the module docstring.

    Example::

        store = SqliteSessionStore("runs/sessions.db")
        options = ClaudeAgentOptions(session_store=store)
        ...
        await store.aclose()
    """

    @checked
    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = 30.0) -> None:
        """`path` is the database file (`":memory:"` for a private in-memory one); `busy_timeout` is how
        many seconds a call waits for another process's write before failing."""
        text = os.fspath(path)
        if not isinstance(text, str) or not text:  # a path object may still give bytes, or nothing
            raise SpecError("SqliteSessionStore needs a non-empty str path")
        if busy_timeout < 0:
            raise SpecError(f"busy_timeout must be a number of seconds >= 0, got {busy_timeout!r}")
        self._db = Database(text, busy_timeout=float(busy_timeout))
        self._leases = FileLeases(text)
        self._holdings: dict[str, Holding] = {}  # session -> the lease this store holds, while it does
        self._homes: dict[str, tuple[str, str]] = {}  # session -> (local project key, home project key)
        self._moves: dict[str, Moves] = {}  # session -> path moves applied to what load() returns

    @property
    def path(self) -> str:
        """The database file."""
        return self._db.path

    def __repr__(self) -> str:
        return f"SqliteSessionStore({self.path!r})"

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        """Store a batch of transcript entries, in order, skipping uuids already stored; atomic. A session
        this store holds the lease of is fenced: `LeaseError` once another runner took it over."""
        await anyio.to_thread.run_sync(self._db.append, self._key(key), entries, self._epoch(key))

    async def append_keyed(
        self, key: SessionKey, rows: Sequence[tuple[str, str]], *, identity: str | None = None
    ) -> None:
        """Store `(idempotency key, entry JSON)` rows in order, skipping keys already stored; atomic and
        fenced as `append()`. The outbox's delivery: an entry without a uuid gets a key of its own, so a
        batch sent again after a lost reply lands once. With `identity`, only when this store is the one
        of that identity (checked in the append's transaction; `StoreError` otherwise)."""
        store_id: str | None = None
        if identity is not None:
            if self.path == ":memory:" or not identity.startswith("sqlite:"):
                mine = await self.identity()
                if identity != mine:
                    raise not_this_store(identity, mine, self.path, path=self.path)
            else:
                store_id = identity.removeprefix("sqlite:")
        stored = self._key(key)
        await anyio.to_thread.run_sync(self._db.append_keyed, stored, rows, self._epoch(key), store_id)

    def _epoch(self, key: SessionKey) -> int | None:
        holding = self._holdings.get(key.get("session_id", "")) if isinstance(key, dict) else None
        return holding.epoch if holding is not None else None

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """Every entry of the transcript, in append order; `None` for a key never written."""
        entries = await anyio.to_thread.run_sync(self._db.load, self._key(key))
        moves = self._moves.get(key["session_id"]) if isinstance(key, dict) else None
        return cast(list[SessionStoreEntry], relocate(entries, moves)) if entries and moves else entries

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """The main transcripts of a project with their last write time (epoch ms)."""
        _check_project(project_key)
        return await anyio.to_thread.run_sync(self._db.list_sessions, project_key)

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        """The summaries folded at each main-transcript append (`fold_session_summary`), one per session."""
        _check_project(project_key)
        return await anyio.to_thread.run_sync(self._db.list_session_summaries, project_key)

    async def delete(self, key: SessionKey) -> None:
        """Delete a transcript; a main key (no `subpath`) takes its subagent transcripts and summary along."""
        await anyio.to_thread.run_sync(self._db.delete, self._key(key))

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        """The subpaths (subagent transcripts) stored under a session."""
        if not isinstance(key, dict) or not all(
            isinstance(key.get(n), str) for n in ("project_key", "session_id")
        ):
            raise StoreError(f"list_subkeys needs a key with project_key and session_id, got {key!r:.120}")
        stored = self._key(cast(SessionKey, key))
        return await anyio.to_thread.run_sync(self._db.list_subkeys, stored["project_key"], key["session_id"])

    def _key(self, key: SessionKey) -> SessionKey:
        """`key` as stored: a session followed from another directory keeps its home project key."""
        home = self._homes.get(key.get("session_id", "")) if isinstance(key, dict) else None
        if home is not None and key.get("project_key") == home[0] and home[0] != home[1]:
            return cast(SessionKey, {**key, "project_key": home[1]})
        return key

    @asynccontextmanager
    @checked
    async def follow(self, session_id: str, *, cwd: str | os.PathLike[str]) -> AsyncIterator[Lease]:
        """For the block: serve `session_id` to a CLI started in `cwd` even when it ran in another
        directory (the CLI's project key is derived from its working directory, and the SDK loads the
        session under the new one): its history is read from, and its appends go to, the project key it
        is stored under. When the directory it ran in is gone (the workspace was moved), the paths of
        the old place in its history are moved to `cwd`. The Runtime calls
        it for every session it resumes."""
        workspace = os.path.realpath(os.fspath(cwd))
        local = project_key_for_directory(workspace)
        home = await anyio.to_thread.run_sync(self._db.home, session_id, local)
        if home is not None and home[0] != local:
            self._homes[session_id] = (local, home[0])
            old = home[1]
            if old and os.path.realpath(old) != workspace and not os.path.exists(old):
                self._moves[session_id] = [(old.rstrip("/"), workspace)]
        try:
            yield Lease(session_id, holder_name(None), self.path)
        finally:
            self._homes.pop(session_id, None)
            self._moves.pop(session_id, None)

    def lease(
        self, session_id: str, *, timeout: float = 0.0, if_epoch: int | None = None
    ) -> AbstractAsyncContextManager[Lease]:
        """Hold the lease of `session_id` for the `async with` block (see `Lease`).

        Another process (or store) holding it: wait up to `timeout` seconds (default: do not wait), then
        `LeaseError` naming the session and the holder. The lock files live in `<path>-leases/`; the
        operating system releases a lock when its process ends. With `if_epoch`, the lease is taken only
        if nobody leased the session since that epoch (0: never leased), else `LeaseError`.
        """
        if not isinstance(session_id, str) or not session_id:
            raise SpecError(
                f"SqliteSessionStore.lease: session_id must be a non-empty str, got {session_id!r}"
            )
        wait = check_timeout(timeout, "SqliteSessionStore.lease")
        return self._lease(session_id, wait, check_epoch(if_epoch, "SqliteSessionStore.lease"))

    @asynccontextmanager
    async def _lease(self, session_id: str, timeout: float, if_epoch: int | None) -> AsyncIterator[Lease]:
        async with self._leases.lease(session_id, timeout) as held:
            epoch = await anyio.to_thread.run_sync(self._db.take_epoch, session_id, held.holder, if_epoch)
            holding = _SqliteHolding(self._db, session_id, held.holder, epoch)
            self._holdings[session_id] = holding
            try:
                yield dataclasses.replace(held, epoch=epoch)
            finally:
                if self._holdings.get(session_id) is holding:
                    del self._holdings[session_id]

    @checked
    def holding(self, session_id: str) -> Holding | None:
        """The lease of `session_id` this store holds now, or None (appends of a held session are fenced)."""
        return self._holdings.get(session_id)

    async def identity(self) -> str | None:
        """The store's identity, whatever path names it: `sqlite:<id>`, the id drawn when the file was made
        and kept in it (so a moved or renamed file, a workspace copied elsewhere or a backup restored in its
        place is still this store; a private `:memory:` store is this object). None when the file is of
        an older layout it could not migrate (read-only). The outbox keys waiting entries by it."""
        if self.path == ":memory:":
            return f"sqlite:memory:{id(self):x}"
        found = await anyio.to_thread.run_sync(self._db.store_id)
        return f"sqlite:{found}" if found is not None else None

    async def integrity_check(self) -> str:
        """SQLite's own check of the file: `"ok"` when it is sound."""
        return await anyio.to_thread.run_sync(self._db.integrity)

    def close(self) -> None:
        """Release the connection (blocking); a later call opens it again."""
        self._db.close()

    async def aclose(self) -> None:
        """Release the connection; a later call opens it again."""
        await anyio.to_thread.run_sync(self._db.close)


class _SqliteHolding(Holding):
    """A SQLite lease: the `flock` stays with the process, so it is never lost; its epoch can be overtaken
    by a runner that took the lock all the same (a lock file deleted under its holder)."""

    def __init__(self, db: Database, session_id: str, holder: str, epoch: int) -> None:
        super().__init__(session_id, epoch)
        self._db = db
        self._holder = holder

    async def reacquire(self) -> None:
        self.epoch = await anyio.to_thread.run_sync(
            self._db.take_epoch, self.session_id, self._holder, self.epoch
        )
        self.lost = anyio.Event()


def _check_project(project_key: object) -> None:
    if not isinstance(project_key, str) or not project_key:
        raise StoreError(f"project_key must be a non-empty str, got {project_key!r}")
