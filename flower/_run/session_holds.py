"""The fleet machinery shared by `Runtime`, `instrument()` and `lease_session`: holds and attachments.

A run holds every session it resumes or starts (`Holds`): the lease, and, when the store carries files,
the session's files restored and its history moved to this place. `attach_workbench` lets a store carry
the files of a workbench; `release_loop` closes what a store holds on an event loop that ends.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import uuid
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from .._errors import LeaseError, StoreError

# the defining modules, not the package: `flower.stores` exports `deliver_outbox`, which runs on this module
from ..stores._lease import Lease
from ..stores._postgres.store import PostgresSessionStore
from ..stores._rewriting_stores import PruningSessionStore, TrimmingSessionStore

__all__ = ["Holds", "attach_workbench", "innermost", "release_loop"]

logger = logging.getLogger("flower.fleet")


def innermost(store: Any) -> Any:
    """The store beneath flower's rewriting layers (the one that holds the entries)."""
    while isinstance(store, TrimmingSessionStore | PruningSessionStore):
        store = store.inner
    return store


def attach_workbench(store: Any, cwd: str | os.PathLike[str], root: str | os.PathLike[str]) -> None:
    """Let the store carry the files under `root` for sessions run in `cwd`, when it can."""
    inner = innermost(store)
    if callable(getattr(inner, "attach_workbench", None)):
        inner.attach_workbench(cwd, root)


async def release_loop(store: Any) -> None:
    """Close what the store holds on the running event loop (it reopens on the next call): the layer's
    own store, and a PostgreSQL pool, which belongs to the loop that opened it."""
    await store.aclose()
    inner = innermost(store)
    if isinstance(inner, PostgresSessionStore):
        await inner.aclose()


class Holds:
    """The sessions one run holds: leases taken and files restored, all released by `aclose()`."""

    def __init__(self, store: Any, *, cwd: str | os.PathLike[str], timeout: float) -> None:
        self.store = innermost(store)
        self.cwd = Path(cwd)
        self.timeout = timeout
        self.leases: list[Lease] = []
        """Every lease taken, in order (with the files restored for it)."""
        self._stack = AsyncExitStack()

    async def hold(
        self,
        session_id: str,
        *,
        lease: bool = True,
        timeout: float | None = None,
        if_epoch: int | None = None,
    ) -> Lease | None:
        """Lease `session_id` (unless `lease=False`; with `if_epoch`, only if nobody leased it since that
        epoch) and restore its files; held until `aclose()`."""
        held: Lease | None = None
        if lease and callable(getattr(self.store, "lease", None)):
            wait = self.timeout if timeout is None else timeout
            conditional = {} if if_epoch is None else {"if_epoch": if_epoch}
            held = await self._stack.enter_async_context(
                self.store.lease(session_id, timeout=wait, **conditional)
            )
        if callable(getattr(self.store, "follow", None)):
            followed: Lease = await self._stack.enter_async_context(
                self.store.follow(session_id, cwd=self.cwd)
            )
            base = held or followed
            held = dataclasses.replace(base, restored=followed.restored, kept=followed.kept)
        if held is not None:
            self.leases.append(held)
        return held

    async def new_session(self) -> str:
        """A fresh session id, leased before the session exists (no one else can resume it meanwhile)."""
        session_id = str(uuid.uuid4())
        try:
            await self.hold(session_id, timeout=0.0)
        except LeaseError:
            raise
        except StoreError as exc:
            # nobody can resume a session that does not exist yet: a store that cannot hold leases (a
            # read-only disk) must not end the run; its own failures surface where the store is used
            logger.warning("flower: the new session %s runs without a lease: %s", session_id, exc)
        return session_id

    def leases_store(self) -> bool:
        """Whether the store has leases (flower's stores do; an SDK or app store may not)."""
        return callable(getattr(self.store, "lease", None))

    async def aclose(self) -> None:
        """Send the workbench's new files and release every lease, last taken first; never raises a store
        failure (it is logged: the leases end with their connections or processes anyway)."""
        try:
            await self._stack.aclose()
        except StoreError as exc:
            logger.warning("flower: releasing the run's sessions: %s", exc)
