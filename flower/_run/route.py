"""Where a run's transcript entries go: the workspace's outbox file, or an outbox in memory once the file
cannot be written.

`Outboxes` is the run's outbox: the file (`<workspace>/.flower/outbox.db` by default), and, from the
first write it refuses (a full disk, a read-only file system, the file deleted or replaced while in use)
or when it cannot be opened at all, an outbox in memory. The run's rows still waiting in the file move
there, in order and with their idempotency keys; the deliverer sends them on from it, so the entries go
straight to the store. Rows still in memory at the end of the run are written back to the file when it
takes them again; otherwise they are counted as lost with the process (the next start here still
reconciles what the CLI wrote to its local transcript).

`SessionRoute` is what `PruningSessionStore.routes` holds for a session the run writes: its appends go
into the outbox in use and are never refused (a refusal would make the SDK drop the batch), and their
links are recorded for the check after the run (`chain.Links`).
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Any, Protocol

import anyio
from claude_agent_sdk import SessionKey, SessionStoreEntry

from .._errors import StoreError
from ..stores._identity import identity_of
from ..stores._outbox import LABEL, MEMORY, Outbox, Row
from .chain import Links

__all__ = ["Outboxes", "SessionRoute"]

logger = logging.getLogger("flower.runtime")


class Outboxes:
    """The outbox file of a run and, once it fails, the outbox in memory that replaces it."""

    def __init__(self, path: str) -> None:
        self.file = Outbox(path)
        self.current: Outbox = self.file
        """The outbox the run's entries go to now."""
        self.opened = False
        """The file could be opened (what earlier runs left in it can be recovered)."""
        self.why: StoreError | None = None
        """Why the file is not used, once it is not."""
        self._switching = anyio.Lock()

    @property
    def path(self) -> str:
        return self.file.path

    async def open(self) -> None:
        """Open the file, or start in memory when it cannot be (`why` says why)."""
        try:
            await anyio.to_thread.run_sync(self.file.open)
        except StoreError as exc:
            await self.to_memory(exc, "", ())
            return
        self.opened = True

    async def to_memory(self, exc: StoreError, target: str, sessions: Collection[str]) -> bool:
        """Replace the file by an outbox in memory, moving the rows of `sessions` there; False when that
        was done already."""
        async with self._switching:
            if self.current.in_memory:
                return False
            memory = Outbox(MEMORY)
            await anyio.to_thread.run_sync(memory.open)
            rows: list[Row] = []
            if self.opened:
                try:
                    rows = await anyio.to_thread.run_sync(self.file.take, target, list(sessions))
                except StoreError as failure:  # unreadable too: what it holds waits for the next start
                    logger.warning("flower: the outbox %s cannot be read: %s", self.path, failure)
            await anyio.to_thread.run_sync(memory.put_rows, target, rows)
            self.current, self.why = memory, exc
            logger.warning("flower: the outbox %s failed (%s): %d rows to memory", self.path, exc, len(rows))
            return True

    async def put(
        self,
        target: str,
        sessions: Collection[str],
        route: SessionRoute,
        key: SessionKey,
        entries: list[SessionStoreEntry],
    ) -> StoreError | None:
        """Keep a batch in the outbox in use; the file refusing it, move to memory and keep it there. The
        file's failure when this call moved to memory (the run tells it), else None."""
        switched: StoreError | None = None
        while True:
            outbox = self.current
            try:
                if route.prefixes != route.saved:  # a resume's copied lines, known before its first new one
                    prefixes = dict(route.prefixes)
                    await anyio.to_thread.run_sync(outbox.set_prefixes, target, route.session_id, prefixes)
                    route.saved = prefixes
                await anyio.to_thread.run_sync(outbox.put, target, key, entries)
                return switched
            except StoreError as exc:
                if outbox.in_memory:
                    raise
                if await self.to_memory(exc, target, sessions):
                    switched = exc

    async def known(self, label: str) -> str | None:
        """The identity of the store named `label` the last time a run here reached it, if any."""
        try:
            return await anyio.to_thread.run_sync(self.file.known, label)
        except StoreError as exc:
            logger.warning("flower: the outbox %s: %s", self.path, exc)
            return None

    async def settle(self, target: str, sessions: Collection[str], store: Any, label: str) -> str:
        """Rows kept under the store's label (it could not say who it is at the start) move under its
        identity when it says now, so that any DSN that reaches it delivers them; the target now."""
        if not self.opened or self.current.in_memory:
            return target
        identity = await identity_of(store)
        if identity is None or identity.startswith(LABEL):
            return target
        try:
            await anyio.to_thread.run_sync(self.file.rekey, target, identity, list(sessions))
            await anyio.to_thread.run_sync(self.file.remember, identity, label)
        except StoreError as exc:
            logger.warning("flower: the outbox %s: %s", self.path, exc)
            return target
        return identity

    async def close_memory(self, target: str, sessions: Collection[str]) -> int:
        """Write the rows left in memory back to the file when it takes them, and close the memory; the
        rows lost (0 when none was left, or all went back)."""
        lost = 0
        memory = self.current
        if memory.in_memory:
            rows = await anyio.to_thread.run_sync(memory.take, target, list(sessions))
            if rows:
                try:
                    if not self.opened:
                        await anyio.to_thread.run_sync(self.file.open)
                        self.opened = True
                    await anyio.to_thread.run_sync(self.file.put_rows, target, rows)
                except StoreError as exc:
                    logger.warning("flower: the outbox %s still cannot be written: %s", self.path, exc)
                    lost = len(rows)
            await anyio.to_thread.run_sync(memory.close)
        return lost


class Owner(Protocol):
    """What a route needs of its run (`DurableRun`)."""

    async def keep(self, route: SessionRoute, key: SessionKey, entries: list[SessionStoreEntry]) -> None: ...


class SessionRoute:
    """The appends of one session, into the run's outbox (what `PruningSessionStore.routes` holds)."""

    def __init__(self, run: Owner, session_id: str) -> None:
        self.run, self.session_id = run, session_id
        self.prefixes: dict[str, int] = {}
        """subpath -> lines a load gave the SDK to copy for a resume ('' is the main transcript)."""
        self.saved: dict[str, int] = {}
        """The prefixes the outbox's record has."""
        self.links = Links(session_id)

    def loaded(self, subpath: str, lines: int, stored: Collection[str] = ()) -> None:
        self.prefixes[subpath] = lines
        self.links.loaded(stored)

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        self.links.appended(key.get("subpath") or "", entries)
        await self.run.keep(self, key, entries)
