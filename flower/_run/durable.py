"""The durability of one Runtime run: every transcript line in the outbox at once, in the store within a
second, the leases kept, and every store failure told in the `StepResult` instead of raised.

`DurableRun` wraps a run:

1. `open()`: the workspace's outbox is opened (one that cannot be is a `StoreWarning`, and the SDK then
   appends straight to the store), and what earlier runs left in it is recovered (`recover.Recovery`).
2. `hold()` leases a resumed session; `new_session()` picks and leases a new one; `started()` routes
   the session's appends into the outbox, records it there, and sends `SessionStarted`.
3. `run(body)` runs the step beside the deliverer (outbox → store, `flower.stores.outbox`) and one
   keeper per lease (`keeper.Keeper`), then drains the outbox, bounded by `DeliveryPolicy.drain_timeout`.
4. `close()` ends the sessions' records and releases the leases: always after the drain.

`failure` is what spoiled the run (a `StoreError`; a `LeaseError` when another runner holds or took the
session), `stopped` says the run was cut short for it. Nothing here raises a store failure.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskGroup
from claude_agent_sdk import SessionKey, SessionStoreEntry

from .._errors import LeaseError, StoreError
from ..events import SessionStarted, StoreWarning
from ..result import StepResult
from ..stores import PostgresSessionStore, SqliteSessionStore
from ..stores.outbox import Deliverer, DeliveryPolicy, Outbox
from ..stores.outbox.reconcile import remove_resume_dirs
from .fleet import Holds, innermost
from .keeper import Keeper
from .recover import Recovery
from .stream import Tracker

__all__ = ["DurableRun", "store_label"]

logger = logging.getLogger("flower.runtime")

_QUICK_DRAIN = 5.0  # seconds: what a cancelled run still tries to deliver before it lets go


def store_label(store: Any) -> str:
    """The store as messages name it, and as the outbox tells its rows apart (never a password)."""
    if isinstance(store, PostgresSessionStore):
        return store.label
    if isinstance(store, SqliteSessionStore):
        return store.path
    return f"{type(store).__qualname__} at {id(store):#x}"


class _Route:
    """The appends of one session, into the outbox (what `PruningSessionStore.routes` holds)."""

    def __init__(self, run: DurableRun, session_id: str) -> None:
        self.run, self.session_id = run, session_id
        self.prefixes: dict[str, int] = {}
        self.saved: dict[str, int] = {}

    def loaded(self, subpath: str, lines: int) -> None:
        self.prefixes[subpath] = lines

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        outbox, target = self.run.outbox, self.run.target
        if outbox is None:  # the outbox failed since: straight to the store
            await self.run.store.append(key, entries)
            return
        if self.prefixes != self.saved:  # a resume's copied lines, known before its first new line
            self.saved = dict(self.prefixes)
            await anyio.to_thread.run_sync(outbox.set_prefixes, target, self.session_id, self.saved)
        await anyio.to_thread.run_sync(outbox.put, target, key, entries)
        if self.run.deliverer is not None:
            self.run.deliverer.wake()


class DurableRun:
    """See the module docstring."""

    def __init__(
        self, layer: Any, workspace: Path, tracker: Tracker, *, lease_timeout: float, policy: DeliveryPolicy
    ) -> None:
        self.layer = layer
        self.store = innermost(layer)
        self.workspace = workspace
        self.tracker = tracker
        self.policy = policy
        self.holds = Holds(layer, cwd=workspace, timeout=lease_timeout)
        self.target = store_label(self.store)
        self.outbox: Outbox | None = None
        self.deliverer: Deliverer | None = None
        self.sessions: set[str] = set()
        """The sessions this run writes (their appends go through the outbox)."""
        self.failure: StoreError | None = None
        """What spoiled the run, or None."""
        self.stopped = False
        """The run was cut short because of `failure` (another runner took its session over)."""
        self.undelivered = 0
        self.current: str | None = None
        """The session the run writes now (the latest `SessionStarted`)."""
        self._scope = anyio.CancelScope()
        self._group: TaskGroup | None = None
        self.keeper = Keeper(self)

    # -- warnings -------------------------------------------------------------------------------------

    async def say(self, message: str, pending: int, resolved: bool) -> None:
        """A `StoreWarning` of this run (and a log line)."""
        (logger.info if resolved else logger.warning)("flower: %s", message)
        await self.tracker.emit(
            StoreWarning(message=message, store=self.target, pending=pending, resolved=resolved)
        )

    async def _waiting(self, failure: StoreError, pending: int) -> None:
        await self.say(
            f"the session store does not take the run's entries now ({failure}); {pending} wait in the "
            "outbox and go as soon as it does",
            pending,
            False,
        )

    async def _back(self, pending: int) -> None:
        await self.say("the session store takes the run's entries again", pending, True)

    # -- before the run -------------------------------------------------------------------------------

    async def open(self) -> None:
        """Open the outbox and recover what earlier runs left; a failure is a warning."""
        path = self.policy.outbox or str(self.workspace / ".flower" / "outbox.db")
        outbox = Outbox(path)
        try:
            await anyio.to_thread.run_sync(outbox.open)
        except StoreError as exc:
            await self.say(
                f"the outbox cannot be used ({exc}): the run's entries go straight to the store, and what "
                "it does not take is lost",
                0,
                False,
            )
            return
        self.outbox = outbox
        self.deliverer = Deliverer(
            outbox,
            self.store,
            self.target,
            self.policy,
            sessions=self.sessions,
            blocked=self.keeper.blocked,
            on_wait=self._waiting,
            on_back=self._back,
            on_refused=self.keeper.refused,
        )
        await Recovery(
            self.layer, self.store, outbox, self.target, self.policy, self.workspace, self.say
        ).run()

    def fail(self, exc: StoreError, *, stop: bool = False) -> None:
        """Record what spoiled the run (the first cause wins); `stop`: cut the run short now."""
        if self.failure is None or (stop and not self.stopped):
            self.failure = exc
        if stop and not self.stopped:
            self.stopped = True
            self._scope.cancel()

    async def hold(self, session_id: str, *, lease: bool) -> bool:
        """Lease a resumed session (and restore its files); False, with `failure` set, when it cannot be."""
        try:
            await self.holds.hold(session_id, lease=lease)
        except StoreError as exc:
            self.fail(exc)
            return False
        return True

    async def new_session(self, session_id: str | None = None) -> str:
        """A new session's id, leased before the session exists; a store that cannot lease it now leaves
        the lease to the keeper (the entries wait in the outbox meanwhile)."""
        session_id = session_id or str(uuid.uuid4())
        try:
            await self.holds.hold(session_id, timeout=0.0)
        except LeaseError as exc:  # an id someone else uses: never write it
            self.fail(exc, stop=True)
        except StoreError as exc:
            if self.outbox is None:
                logger.warning("flower: the new session %s runs without a lease: %s", session_id, exc)
            else:
                await self.say(
                    f"the new session {session_id} cannot be leased now ({exc}); retrying", 0, False
                )
                self.keeper.unheld.add(session_id)
                self.keeper.why[session_id] = exc
        return session_id

    async def started(self, session_id: str, *, resumed: bool, fork_of: str | None, config_dir: str) -> None:
        """The run writes `session_id` from now on: route it into the outbox, record it, tell the caller."""
        if session_id not in self.sessions:
            if self.outbox is not None:
                await self._record(session_id, resumed=resumed, config_dir=config_dir)
            self.sessions.add(session_id)
            self.keeper.watch(session_id)
        if resumed:  # this run holds the session: any copy a killed resume of it left is stale
            removed = await anyio.to_thread.run_sync(remove_resume_dirs, session_id)
            if removed:
                logger.info(
                    "flower: removed what killed resumes of %s left: %s", session_id, ", ".join(removed)
                )
        self.current = session_id
        await self.tracker.emit(SessionStarted(session_id=session_id, resumed=resumed, fork_of=fork_of))

    async def _record(self, session_id: str, *, resumed: bool, config_dir: str) -> None:
        """Record the session in the outbox and route its appends there (a failing outbox: straight on)."""
        assert self.outbox is not None
        outbox, holding = self.outbox, self.keeper.holding(session_id)
        try:
            if await anyio.to_thread.run_sync(outbox.count, self.target, {session_id}):
                # rows no recovery could deliver before this run took the session: not under its lease
                reason = "left before a run took the session again"
                moved = await anyio.to_thread.run_sync(outbox.fence, self.target, session_id, reason)
                logger.warning(
                    "flower: %d undelivered entries of %s set aside in the outbox", moved, session_id
                )
            epoch = holding.epoch if holding is not None else 0
            await anyio.to_thread.run_sync(
                lambda: outbox.begin(
                    self.target, session_id, epoch=epoch, config_dir=config_dir, resumed=resumed
                )
            )
        except StoreError as exc:
            await self.say(f"the outbox failed ({exc}): the run's entries go straight to the store", 0, False)
            self.outbox = None
        else:
            self.layer.routes[session_id] = _Route(self, session_id)

    # -- the run --------------------------------------------------------------------------------------

    async def run(self, body: Callable[[], Awaitable[None]]) -> None:
        """Run `body` (the step) beside the deliverer and the keepers, then drain; `body`'s own exception
        is raised as it is, after the drain."""
        raised: list[BaseException] = []

        async def main() -> None:
            cancelled = False
            try:
                with self._scope:
                    await body()
            except anyio.get_cancelled_exc_class():  # the caller left: deliver what can go quickly
                cancelled = True
                raise
            except BaseException as exc:  # a missing CLI, a bad spec, a broken loop: raised after the drain
                raised.append(exc)
            finally:
                with anyio.CancelScope(shield=True):
                    await self._drain(cancelled=cancelled)
                group.cancel_scope.cancel()

        async with anyio.create_task_group() as group:
            self._group = group
            if self.deliverer is not None:
                group.start_soon(self.deliverer.run)
            self.keeper.start(group)
            group.start_soon(main)
        self._group = None
        if raised:
            raise raised[0]

    def spawn(self, task: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Start a background task of the run (a keeper), when the run is under way."""
        if self._group is not None:
            self._group.start_soon(task)

    async def _drain(self, *, cancelled: bool) -> None:
        if self.deliverer is None:
            return
        timeout = min(_QUICK_DRAIN, self.policy.drain_timeout) if cancelled else None
        left = await self.deliverer.drain(timeout)
        if left == 0:
            return
        self.undelivered = left
        cause = self.deliverer.failure or StoreError("the store did not answer")
        count = "an unknown number of" if left < 0 else str(left)
        sessions = ", ".join(sorted(self.sessions))
        where = self.outbox.path if self.outbox is not None else "the outbox"
        self.fail(
            StoreError(
                f"{count} transcript entries of session {sessions} were not stored in {self.target}: "
                f"{cause}. They are kept in {where} and delivered at the next run in this workspace",
                path=cause.path,
            )
        )

    def outcome(self, result: StepResult, resume: str | None) -> StepResult:
        """`result`, failed with the cause when the store spoiled the run (or the SDK dropped entries)."""
        failure = self.failure
        errors = self.tracker.mirror_errors
        if failure is None and errors:
            failure = StoreError(
                f"the SDK dropped {len(errors)} batch(es) of transcript entries its session store did not "
                f"take: {errors[-1]}"
            )
        if failure is None:
            return result
        alone = self.stopped or result.error is None or not self.tracker.results
        return dataclasses.replace(
            result,
            ok=False,
            error=str(failure) if alone else f"{result.error}; and {failure}",
            cause=failure,
            session_id=result.session_id or self.current or resume,
        )

    async def close(self) -> None:
        """End the sessions' records, stop routing them, and release the leases (after the drain)."""
        with anyio.CancelScope(shield=True):
            for session_id in self.sessions:
                self.layer.routes.pop(session_id, None)
                if self.outbox is not None:
                    try:
                        await anyio.to_thread.run_sync(self.outbox.end, self.target, session_id)
                    except StoreError as exc:
                        logger.warning("flower: the outbox %s: %s", self.outbox.path, exc)
            await self.holds.aclose()
            if self.outbox is not None:
                await anyio.to_thread.run_sync(self.outbox.close)
