"""The leases of a run, kept: one lost is taken back at once, or the run stops (fencing).

For each session a run writes, a keeper task waits for its lease to be lost (a PostgreSQL lease
connection that ended: the backend terminated, the server restarted) or for the store to refuse one of
its writes (another runner took the session over). It then takes the lease back on the same epoch,
retrying with the delivery backoff while the store cannot be reached; deliveries of the session pause
meanwhile. When another runner took the session since, the run stops: its pending rows are set aside
(delivering them would fork the session), and the run's `StepResult` fails with the `LeaseError`.

A new session whose lease could not be taken at its start (the store was down) is leased by its
keeper as soon as the store answers, and only if it is the database the run's rows are for: when the
run knows the store's identity (an earlier run here reached it), a store that answers as another one
(the path or DSN reaches another database now) is not leased, and the session's entries keep waiting in
the outbox, as its deliveries would refuse them there anyway.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

import anyio
from anyio.abc import TaskGroup

from .._errors import LeaseError, StoreError
from ..stores._identity import identity_of
from ..stores._lease import Holding
from ..stores._outbox import LABEL, Deliverer, DeliveryPolicy, Outbox
from ..stores._target import not_this_store
from .session_holds import Holds

__all__ = ["Keeper", "KeptRun"]

logger = logging.getLogger("flower.runtime")


class KeptRun(Protocol):
    """What a keeper needs of its run (`durable.DurableRun`)."""

    store: Any
    layer: Any
    holds: Holds
    policy: DeliveryPolicy
    target: str
    label: str
    sessions: set[str]
    deliverer: Deliverer | None

    @property
    def outbox(self) -> Outbox: ...

    async def say(self, message: str, pending: int, resolved: bool) -> None: ...

    def fail(self, exc: StoreError, *, stop: bool = False) -> None: ...

    def spawn(self, task: Callable[[], Coroutine[Any, Any, None]]) -> None: ...


class Keeper:
    """The leases of one `DurableRun` (see the module docstring)."""

    def __init__(self, run: KeptRun) -> None:
        self.run = run
        self.unheld: set[str] = set()
        """New sessions whose lease is still to be taken."""
        self.why: dict[str, StoreError] = {}
        """session -> the store's last refusal while its lease is not held (what the run's result says)."""
        self._watched: list[str] = []
        self._started = False

    def holding(self, session_id: str) -> Holding | None:
        """The lease of `session_id` the run's store holds, if any."""
        method = getattr(self.run.store, "holding", None)
        found = method(session_id) if callable(method) else None
        return found if isinstance(found, Holding) else None

    def blocked(self, session_id: str) -> StoreError | None:
        """Why the session's rows cannot go now (its lease not held, or lost), or None when they can."""
        if not self.run.holds.leases_store():
            return None
        holding = self.holding(session_id)
        if holding is not None and not holding.lost.is_set():
            return None
        state = "is not held" if holding is None else "was lost and is not back"
        return self.why.get(session_id) or StoreError(f"the lease of session {session_id} {state}")

    async def refused(self, session_id: str, exc: LeaseError) -> None:
        """The store's fence refused a write of the session: its lease is treated as lost."""
        holding = self.holding(session_id)
        if holding is not None:
            holding.mark_lost()
        else:
            await self._taken_over(session_id, exc)

    def watch(self, session_id: str) -> None:
        """Keep the lease of `session_id` from now on (once the run is under way)."""
        if session_id in self._watched:
            return
        self._watched.append(session_id)
        if self._started:
            self.run.spawn(lambda: self._keep(session_id))

    def start(self, group: TaskGroup) -> None:
        """The run begins: a keeper task for every session watched so far."""
        self._started = True
        for session_id in self._watched:
            group.start_soon(self._keep, session_id)

    async def _keep(self, session_id: str) -> None:
        if session_id in self.unheld and not await self._lease_late(session_id):
            return
        while True:
            holding = self.holding(session_id)
            if holding is None:
                return  # a store without leases, or a fork's source: nothing to keep
            await holding.lost.wait()
            if not await self._take_back(session_id, holding):
                return

    async def _pause(self, delay: float) -> float:
        await anyio.sleep(delay)
        return min(delay * 2, self.run.policy.max_backoff)

    async def _lease_late(self, session_id: str) -> bool:
        delay = self.run.policy.backoff
        while True:
            try:
                await self._same_store()
                lease = await self.run.holds.hold(session_id, timeout=0.0)
            except LeaseError as exc:
                await self._taken_over(session_id, exc)
                return False
            except StoreError as exc:
                self.why[session_id] = exc
                delay = await self._pause(delay)
                continue
            self.unheld.discard(session_id)
            self.why.pop(session_id, None)
            await self._epoch(session_id, lease.epoch if lease is not None else 0)
            await self.run.say(f"the new session {session_id} is leased", 0, True)
            return True

    async def _same_store(self) -> None:
        """Refuse (`StoreError`) a store that answers as another database than the one the run's rows
        are for; a run that never learned its store's identity has nothing to compare with."""
        run = self.run
        if run.target.startswith(LABEL):
            return
        found = await identity_of(run.store)
        if found is None:
            raise StoreError(f"{run.label} cannot say which database it is now")
        if found != run.target:
            raise not_this_store(run.target, found, run.label)

    async def _take_back(self, session_id: str, holding: Holding) -> bool:
        await self.run.say(f"the lease of session {session_id} was lost; taking it back", 0, False)
        delay = self.run.policy.backoff
        while True:
            try:
                await holding.reacquire()
            except LeaseError as exc:
                await self._taken_over(session_id, exc)
                return False
            except StoreError as exc:
                logger.info("flower: the lease of %s is not back yet: %s", session_id, exc)
                self.why[session_id] = exc
                delay = await self._pause(delay)
                continue
            self.why.pop(session_id, None)
            await self._epoch(session_id, holding.epoch)
            await self.run.say(f"the lease of session {session_id} is held again", 0, True)
            return True

    async def _epoch(self, session_id: str, epoch: int) -> None:
        run = self.run
        try:
            await anyio.to_thread.run_sync(run.outbox.set_epoch, run.target, session_id, epoch)
        except StoreError as exc:
            logger.warning("flower: the outbox %s: %s", run.outbox.path, exc)
        if run.deliverer is not None:
            run.deliverer.wake()

    async def _taken_over(self, session_id: str, exc: LeaseError) -> None:
        """Another runner has the session: stop the run, and set its rows aside."""
        run = self.run
        moved: Any = 0
        try:
            moved = await anyio.to_thread.run_sync(run.outbox.fence, run.target, session_id, str(exc))
        except StoreError as failure:
            logger.warning("flower: the outbox %s: %s", run.outbox.path, failure)
        run.sessions.discard(session_id)
        run.layer.routes.pop(session_id, None)
        run.fail(exc, stop=True)
        aside = f"; {moved} entries not delivered are kept aside in the outbox" if moved else ""
        await run.say(f"{exc}: the run stops{aside}", 0, False)
