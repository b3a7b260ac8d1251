"""Running a fleet: one runner at a time per session, and files that follow the session.

`lease_session(options)` is what an app on `instrument()` wraps its run in; `Runtime` does the same for
every session it runs. For the session the options resume (or the one they start with `session_id`):

1. the session's lease is taken in the store (`flower.stores.lease`): a second runner waits up to
   `timeout` seconds, then gets a `LeaseError` naming the session and the holder;
2. when the store carries files (`PostgresSessionStore`), the session's workbench files are written
   into the local workbench where they are missing, and its history is served as if it had always run
   here (the project key it is stored under, the paths of the places it ran in moved to this one);
3. at the end, the workbench's new files are sent to the store and the lease is released.

A fork reads its source without leasing it (the source is not written) but still restores its files.
Stores without leases (the SDK's memory store, your own adapter) are used as they are.

Example::

    options = instrument(ClaudeAgentOptions(resume=session_id), workspace="repo",
                         store="postgresql://flower@db.internal/runs")
    async with lease_session(options, timeout=60):
        async for message in query(prompt="Go on.", options=options):
            ...
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions

from ._errors import SpecError
from .stores import Lease, PostgresSessionStore, PruningSessionStore, TrimmingSessionStore
from .stores.lease import check_timeout

__all__ = ["Holds", "attach_workbench", "innermost", "lease_session", "release_loop"]


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
        self, session_id: str, *, lease: bool = True, timeout: float | None = None
    ) -> Lease | None:
        """Lease `session_id` (unless `lease=False`) and restore its files; held until `aclose()`."""
        held: Lease | None = None
        if lease and callable(getattr(self.store, "lease", None)):
            wait = self.timeout if timeout is None else timeout
            held = await self._stack.enter_async_context(self.store.lease(session_id, timeout=wait))
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
        import uuid

        session_id = str(uuid.uuid4())
        await self.hold(session_id, timeout=0.0)
        return session_id

    async def aclose(self) -> None:
        """Send the workbench's new files and release every lease, last taken first."""
        await self._stack.aclose()


def lease_session(
    target: ClaudeAgentOptions | Any,
    session_id: str | None = None,
    *,
    timeout: float = 0.0,
    cwd: str | os.PathLike[str] | None = None,
) -> AbstractAsyncContextManager[Lease | None]:
    """Hold a session for the `async with` block: its lease, and its files when the store carries them.

    `target` is the `ClaudeAgentOptions` the run uses (their `session_store`, `resume`, `session_id`,
    `fork_session` and `cwd` say what to hold), or a store with `session_id` and `cwd`. The lease of a
    resumed session is waited for up to `timeout` seconds (default: not at all), then `LeaseError`.
    Yields the `Lease` (None when the store has no leases, or the options start a new session without
    `session_id`: give one, e.g. `str(uuid.uuid4())`, to lease a new session too).
    """
    wait = check_timeout(timeout, "lease_session")
    if isinstance(target, ClaudeAgentOptions):
        if session_id is not None:
            raise SpecError(
                "lease_session: with options, the session is options.resume or options.session_id"
            )
        store, where = target.session_store, cwd if cwd is not None else target.cwd
        source, new = target.resume, target.session_id
        fork = target.fork_session
    else:
        store, where, source, new, fork = target, cwd, session_id, None, False
        if not isinstance(session_id, str) or not session_id:
            raise SpecError(f"lease_session: give the session id to hold, got {session_id!r}")
    if store is None or not callable(getattr(store, "append", None)):
        raise SpecError("lease_session: the options have no session_store (instrument() adds one)")
    return _held(store, where or os.getcwd(), wait, source=source, new=new, fork=bool(fork))


@asynccontextmanager
async def _held(
    store: Any,
    cwd: str | os.PathLike[str],
    timeout: float,
    *,
    source: str | None,
    new: str | None,
    fork: bool,
) -> AsyncIterator[Lease | None]:
    holds = Holds(store, cwd=cwd, timeout=timeout)
    try:
        first: Lease | None = None
        if source:
            first = await holds.hold(source, lease=not fork)
        if new and new != source:
            leased = await holds.hold(new, timeout=0.0)
            first = first if first is not None and not fork else leased
        yield first
    finally:
        await holds.aclose()
