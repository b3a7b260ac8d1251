"""The durability of one Runtime run: every transcript line in the outbox at once, in the store within a
second, the leases kept, the stored chain checked, and every store failure told in the `StepResult`
instead of raised.

`DurableRun` wraps a run:

1. `open()`: the store says who it is (its identity keys the outbox's rows, `flower.stores._identity`;
   a store away at the start is taken to be the one its label reached last in this workspace, if any),
   the workspace's outbox is opened (one that cannot be is a `StoreWarning`, and the entries wait in
   memory, going straight to the store, `route.Outboxes`), and what earlier runs left in it is recovered
   (`recover.Recovery`).
2. `hold()` leases a resumed session; `new_session()` picks and leases a new one; `started()` routes
   the session's appends into the outbox (`route.SessionRoute`), records it there, and sends
   `SessionStarted`.
3. `run(body)` runs the step beside the deliverer (outbox -> store, `flower.stores._outbox`) and one
   keeper per lease (`keeper.Keeper`); then, when the SDK dropped batches, sends what the CLI's local
   transcript holds and the store lacks (`recover.Recovery.reconcile`); then drains the outbox, bounded
   by `DeliveryPolicy.drain_timeout`, and checks the links of the entries the run stored (`chain`).
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
from .._result import FailureReason, StepResult
from ..events import SessionStarted, StoreWarning
from ..stores._identity import identity_of, label_of
from ..stores._missing import session_not_found
from ..stores._outbox import LABEL, Deliverer, DeliveryPolicy, Outbox, Record
from ..stores._outbox.reconcile import remove_resume_dirs
from .keeper import Keeper
from .recover import Recovery
from .route import Outboxes, SessionRoute
from .session_holds import Holds, innermost
from .stream import Tracker

__all__ = ["DurableRun"]

logger = logging.getLogger("flower.runtime")

_QUICK_DRAIN = 5.0  # seconds: what a cancelled run still tries to deliver before it lets go


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
        self.label = label_of(self.store)
        """How messages name the store."""
        self.target = LABEL + self.label
        """What the outbox keeps the run's rows under: the store's identity once it said it."""
        self.outboxes = Outboxes(self.policy.outbox or str(workspace / ".flower" / "outbox.db"))
        self.deliverer: Deliverer | None = None
        self.sessions: set[str] = set()
        """The sessions this run writes (their appends go through the outbox)."""
        self.routes: dict[str, SessionRoute] = {}
        self.written: dict[str, tuple[str, bool]] = {}
        """session -> (the CLI's config directory, resumed) of each session the run writes."""
        self.failure: StoreError | None = None
        """What spoiled the run, or None."""
        self.stopped = False
        """The run was cut short because of `failure` (another runner took its session over)."""
        self.undelivered = 0
        self._cause: StoreError | None = None
        self.current: str | None = None
        """The session the run writes now (the latest `SessionStarted`)."""
        self._scope = anyio.CancelScope()
        self._group: TaskGroup | None = None
        self.keeper = Keeper(self)

    @property
    def outbox(self) -> Outbox:
        """The outbox the run's entries go to now (the file, or memory once the file failed)."""
        return self.outboxes.current

    # -- warnings -------------------------------------------------------------------------------------

    async def say(self, message: str, pending: int, resolved: bool) -> None:
        """A `StoreWarning` of this run (and a log line)."""
        (logger.info if resolved else logger.warning)("flower: %s", message)
        await self.tracker.emit(
            StoreWarning(message=message, store=self.label, pending=pending, resolved=resolved)
        )

    async def _waiting(self, failure: StoreError, pending: int) -> None:
        where = "in memory" if self.outbox.in_memory else "in the outbox"
        await self.say(
            f"the session store does not take the run's entries now ({failure}); {pending} wait {where} "
            "and go as soon as it does",
            pending,
            False,
        )

    async def _back(self, pending: int) -> None:
        await self.say("the session store takes the run's entries again", pending, True)

    # -- before the run -------------------------------------------------------------------------------

    async def open(self) -> None:
        """Learn the store's identity, open the outbox and recover what earlier runs left; a failure is
        a warning."""
        identity = await identity_of(self.store)
        await self.outboxes.open()
        if identity is not None:
            self.target = identity
        elif self.outboxes.opened:  # away now: the rows are for the database this workspace last reached
            self.target = await self.outboxes.known(self.label) or self.target
        if self.outboxes.why is not None:
            await self._in_memory(self.outboxes.why)
        self.deliverer = Deliverer(
            self.outbox,
            self.store,
            self.target,
            self.policy,
            sessions=self.sessions,
            label=self.label,
            blocked=self.keeper.blocked,
            on_wait=self._waiting,
            on_back=self._back,
            on_refused=self.keeper.refused,
        )
        if self.outboxes.opened and identity is not None:
            await self._recovery().run()

    def _recovery(self) -> Recovery:
        run = (self.layer, self.store, self.outbox, self.target, self.policy, self.workspace)
        return Recovery(*run, self.say, self.label)

    async def _in_memory(self, exc: StoreError) -> None:
        await self.say(
            f"the outbox {self.outboxes.path} cannot be written ({exc}): the run's entries go straight to "
            "the store, held in memory until it takes them",
            await anyio.to_thread.run_sync(self.outbox.count, self.target, self.sessions),
            False,
        )

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
            await self.say(f"the new session {session_id} cannot be leased now ({exc}); retrying", 0, False)
            self.keeper.unheld.add(session_id)
            self.keeper.why[session_id] = exc
        return session_id

    async def started(self, session_id: str, *, resumed: bool, fork_of: str | None, config_dir: str) -> None:
        """The run writes `session_id` from now on: route it into the outbox, record it, tell the caller."""
        if session_id not in self.sessions:
            self.written[session_id] = (config_dir, resumed)
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
        """Record the session in the outbox and route its appends there."""
        holding = self.keeper.holding(session_id)
        try:
            outbox = self.outbox
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
            await self.fall_back(exc)
        self.routes[session_id] = self.layer.routes[session_id] = SessionRoute(self, session_id)

    # -- the run's entries ----------------------------------------------------------------------------

    async def keep(self, route: SessionRoute, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        """Put a batch of the session's entries in the outbox in use; the file failing, in memory. Never
        raises: a refusal would make the SDK drop the batch."""
        try:
            switched = await self.outboxes.put(self.target, self.sessions, route, key, entries)
        except StoreError as exc:  # memory itself refused them: told in the result, never raised
            logger.error("flower: %d entries of %s kept nowhere: %s", len(entries), route.session_id, exc)
            self.fail(StoreError(f"{len(entries)} transcript entries could not be kept anywhere: {exc}"))
            return
        if switched is not None:
            await self._switched(switched)
        if self.deliverer is not None:
            self.deliverer.wake()

    async def fall_back(self, exc: StoreError) -> None:
        """The outbox file cannot be written: the run's rows move to memory, and go on from there."""
        if await self.outboxes.to_memory(exc, self.target, self.sessions):
            await self._switched(exc)

    async def _switched(self, exc: StoreError) -> None:
        if self.deliverer is not None:
            self.deliverer.outbox = self.outbox
            self.deliverer.wake()
        await self._in_memory(exc)

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
                    if not cancelled and self.tracker.mirror_errors:
                        await self._reconcile()
                    await self._drain(cancelled=cancelled)
                    if not cancelled:
                        self._check_chain()
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

    async def _reconcile(self) -> None:
        """The SDK dropped batches: send what the CLI's local transcripts hold and the store lacks."""
        recovery = self._recovery()
        for session_id in sorted(self.sessions):
            config_dir, resumed = self.written[session_id]
            route = self.routes.get(session_id)
            prefixes = dict(route.prefixes) if route is not None else {}
            record = Record(session_id, 0, 0, config_dir, resumed, prefixes, 0.0)
            try:
                added = await recovery.reconcile(record)
            except StoreError as exc:
                logger.warning("flower: reconciling %s with the CLI's transcript: %s", session_id, exc)
                continue
            if added and route is not None:
                for key, entries in added:
                    route.links.appended(key.get("subpath") or "", entries)
        if self.deliverer is not None:
            self.deliverer.wake()

    async def _drain(self, *, cancelled: bool) -> None:
        if self.deliverer is None:
            return
        timeout = min(_QUICK_DRAIN, self.policy.drain_timeout) if cancelled else None
        left = await self.deliverer.drain(timeout)
        if left == 0:
            return
        self.undelivered = left
        self._cause = self.deliverer.failure or StoreError("the store did not answer")
        if not self.outbox.in_memory:  # in memory: `close()` says where they went
            where = self.outbox.path
            self._not_stored(f"They are kept in {where} and delivered at the next run in this workspace")

    def _not_stored(self, where: str) -> None:
        count = "an unknown number of" if self.undelivered < 0 else str(self.undelivered)
        sessions = ", ".join(sorted(self.sessions))
        cause = self._cause
        self.fail(
            StoreError(
                f"{count} transcript entries of session {sessions} were not stored in {self.label}: "
                f"{cause}. {where}",
                path=cause.path if cause is not None else None,
            )
        )

    def _check_chain(self) -> None:
        """Every entry the run stored names a parent the store holds (`chain`); a gap fails the run."""
        for session_id in sorted(self.routes):
            gaps = self.routes[session_id].links.gaps()
            if gaps:
                first = gaps[0]
                more = f" (and {len(gaps) - 1} more)" if len(gaps) > 1 else ""
                logger.error("flower: a gap in the stored chain: %s%s", first.describe(), more)
                self.fail(
                    StoreError(
                        f"the stored history of session {session_id} has a gap: {first.describe()}, which "
                        f"the store never received{more}; a resume would not see the entries after it"
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
        if failure is None and resume and not result.ok and result.cause is None:
            missing = session_not_found(result.error, resume, self.store, self.label, str(self.workspace))
            if missing is not None:  # the CLI's bare "No conversation found": say where flower looked
                return dataclasses.replace(
                    result, error=str(missing), reason=FailureReason.STORE, cause=missing
                )
        if failure is None:
            return result
        alone = self.stopped or result.error is None or not self.tracker.results
        return dataclasses.replace(
            result,
            ok=False,
            error=str(failure) if alone else f"{result.error}; and {failure}",
            reason=FailureReason.LEASE if isinstance(failure, LeaseError) else FailureReason.STORE,
            cause=failure,
            session_id=result.session_id or self.current or resume,
        )

    async def close(self) -> None:
        """End the sessions' records, stop routing them, and release the leases (after the drain)."""
        with anyio.CancelScope(shield=True):
            for session_id in self.sessions:
                self.layer.routes.pop(session_id, None)
            if self.target.startswith(LABEL):  # the store could not say who it was at the start
                self.target = await self.outboxes.settle(self.target, self.sessions, self.store, self.label)
            lost = await self.outboxes.close_memory(self.target, self.sessions)
            if self.undelivered and self.outboxes.why is not None:
                path, why = self.outboxes.path, self.outboxes.why
                self._not_stored(
                    f"They were kept nowhere: {path} cannot be written ({why}); the next run in this "
                    "workspace recovers what the CLI's local transcript still holds"
                    if lost
                    else f"{path} could not be written ({why}) until the end of the run; they are kept "
                    "there now and delivered at the next run in this workspace"
                )
            for session_id in self.sessions:
                if lost or not self.outboxes.opened:
                    break  # lost: the records keep this process's pid, so the next start reconciles them
                try:
                    await anyio.to_thread.run_sync(self.outboxes.file.end, self.target, session_id)
                except StoreError as exc:
                    logger.warning("flower: the outbox %s: %s", self.outboxes.path, exc)
            await self.holds.aclose()
            await anyio.to_thread.run_sync(self.outboxes.file.close)
