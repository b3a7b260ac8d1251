"""Delivery: the outbox's rows to the store, in order, exactly once, with bounded backoff while it fails.

A `Deliverer` sends the oldest rows first, one key (one transcript) per append, and forgets them only
once the store has committed them. A flower store takes them with their idempotency keys
(`append_keyed`), so a batch sent again (its reply lost, a retry after a timeout, a restart) lands once;
any other `SessionStore` gets `append()` and its own uuid dedup. While the store fails, it waits
`backoff` seconds, doubling up to `max_backoff`, and tells its owner once per outage (`on_wait`) and
when the store took the rows again (`on_back`). An append that has waited `warn_after` seconds without
an answer (a network partition drops packets: nothing fails, everything waits) is an outage too, told
as soon as it is one, not when `attempt_timeout` ends it. A refusal by the store's fence (`LeaseError`:
another runner took the session over) is not retried: `on_refused` decides. Rows bound to a store's
identity are appended with it, and flower's stores refuse them in the append's own transaction when
they are another database (the DSN or path reaches another one now): they wait, never land there.
"""

from __future__ import annotations

import inspect
import json
import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio

from ..._errors import LeaseError, SpecError, StoreError
from ..._util.secrets import redact
from ._file import LABEL, Outbox, Row

__all__ = ["Deliverer", "DeliveryPolicy"]

logger = logging.getLogger("flower.stores")

Notify = Callable[[StoreError, int], Awaitable[None]]


@dataclass(frozen=True)
class DeliveryPolicy:
    """How a run's transcript entries reach the session store through the workspace's outbox.

    - `backoff`, `max_backoff`: seconds between attempts while the store fails (doubling from the first
      to the second).
    - `attempt_timeout`: seconds one append may take before it counts as failed (and is sent again: the
      store takes it once).
    - `drain_timeout`: at the end of a run, how long it waits for the store to take what is left before
      it returns `ok=False` with the count (the rows stay in the outbox for the next run).
    - `warn_after`: seconds an append may wait for the store before a `StoreWarning` says so (then
      another, `resolved=True`, when it lands).
    - `outbox`: the outbox file; None: `<workspace>/.flower/outbox.db`.
    """

    backoff: float = 0.2
    max_backoff: float = 2.0
    attempt_timeout: float = 30.0
    drain_timeout: float = 30.0
    outbox: str | None = None
    warn_after: float = 3.0

    def __post_init__(self) -> None:
        for name in ("backoff", "max_backoff", "attempt_timeout", "drain_timeout", "warn_after"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or math.isnan(value)
                or value <= 0
            ):
                raise SpecError(f"DeliveryPolicy: {name} must be a positive number of seconds, got {value!r}")
        if self.max_backoff < self.backoff:
            raise SpecError(
                f"DeliveryPolicy: max_backoff ({self.max_backoff!r}) must be >= backoff ({self.backoff!r})"
            )
        if self.outbox is not None and (not isinstance(self.outbox, str) or not self.outbox):
            raise SpecError(f"DeliveryPolicy: outbox must be a file path or None, got {self.outbox!r}")


def _takes_identity(store: Any) -> bool:
    """Whether `store.append_keyed` checks the identity it is given (flower's stores do)."""
    keyed = getattr(store, "append_keyed", None)
    if not callable(keyed):
        return False
    try:
        return "identity" in inspect.signature(keyed).parameters
    except (TypeError, ValueError):
        return False


class Deliverer:
    """Sends one outbox's rows for one store (see the module docstring).

    `target` is the store's identity the rows are kept under, `label` how messages name the store
    (default: `target`). `sessions` limits it to those sessions (None: every session of the target).
    `blocked(session)` says why rows of a session cannot go now (its lease not held), or None; such rows
    wait. `outbox` may be replaced between two sends (the run's outbox fell back to memory).
    """

    def __init__(
        self,
        outbox: Outbox,
        store: Any,
        target: str,
        policy: DeliveryPolicy,
        *,
        sessions: set[str] | None = None,
        label: str | None = None,
        blocked: Callable[[str], StoreError | None] | None = None,
        on_wait: Notify | None = None,
        on_back: Callable[[int], Awaitable[None]] | None = None,
        on_refused: Callable[[str, LeaseError], Awaitable[None]] | None = None,
    ) -> None:
        self.outbox, self.store, self.target, self.policy = outbox, store, target, policy
        self.label = label or target
        self.sessions = sessions
        self._blocked = blocked
        self._on_wait, self._on_back, self._on_refused = on_wait, on_back, on_refused
        self._wake = anyio.Event()
        self._lock = anyio.Lock()
        self.failure: StoreError | None = None
        """Why the last attempt failed, while the store fails (None once it takes rows again)."""
        self.delivered = 0
        """Rows delivered so far."""
        self.waited = False  # an outage was announced and has not ended yet
        self.bound = not target.startswith(LABEL) and _takes_identity(store)
        """Each append names the store's identity the rows are for, and the store refuses another one."""

    def wake(self) -> None:
        """New rows: deliver them now (unless a backoff is under way)."""
        self._wake.set()

    async def pending(self) -> int:
        """Rows waiting for this deliverer."""
        return await anyio.to_thread.run_sync(self.outbox.count, self.target, self._scope())

    def _scope(self) -> set[str] | None:
        return set(self.sessions) if self.sessions is not None else None

    async def send(self) -> bool:
        """Deliver everything pending now, in order; False when the store (or a lease) stopped it."""
        async with self._lock:
            while True:
                outbox = self.outbox  # the rows are acknowledged where they were read
                rows = await anyio.to_thread.run_sync(outbox.head, self.target, self._scope())
                if not rows:
                    await self._recovered()
                    return True
                session_id = rows[0].key["session_id"]
                why = self._blocked(session_id) if self._blocked is not None else None
                if why is not None:
                    self.failure = why
                    return False
                try:
                    with anyio.fail_after(self.policy.attempt_timeout):
                        await self._watched(rows)
                except LeaseError as exc:
                    self.failure = exc
                    if self._on_refused is not None:
                        await self._on_refused(session_id, exc)
                    return False
                except TimeoutError:
                    self.failure = StoreError(
                        f"an append to {self.label} took longer than DeliveryPolicy.attempt_timeout "
                        f"({self.policy.attempt_timeout:g} s)"
                    )
                    return False
                except Exception as exc:  # any store failure: the rows stay, the next attempt sends them
                    self.failure = (
                        exc
                        if isinstance(exc, StoreError)
                        else StoreError(redact(f"{type(exc).__name__}: {exc}"))
                    )
                    return False
                await anyio.to_thread.run_sync(outbox.ack, [row.id for row in rows])
                self.delivered += len(rows)
                await self._recovered()

    async def _watched(self, rows: list[Row]) -> None:
        """The append, told as an outage once it has waited `warn_after` seconds. Its own exception is
        raised as it is (a `LeaseError` stays one), never wrapped in the watch's task group."""

        async def watch() -> None:
            await anyio.sleep(self.policy.warn_after)
            if not self.waited:
                self.failure = StoreError(
                    f"an append to {self.label} has waited {self.policy.warn_after:g} s for an answer "
                    "(DeliveryPolicy.warn_after)"
                )
                await self._failed()

        failed: Exception | None = None
        async with anyio.create_task_group() as group:
            group.start_soon(watch)
            try:
                await self._append(rows)
            except Exception as exc:
                failed = exc
            group.cancel_scope.cancel()
        if failed is not None:
            raise failed

    async def _append(self, rows: list[Row]) -> None:
        key = rows[0].key
        keyed = getattr(self.store, "append_keyed", None)
        if callable(keyed):
            pairs = [(row.dedupe, row.payload) for row in rows]
            if self.bound:  # the store checks it is the one the rows were written for, in the append
                await keyed(key, pairs, identity=self.target)
            else:
                await keyed(key, pairs)
        else:
            await self.store.append(key, [json.loads(row.payload) for row in rows])

    async def _recovered(self) -> None:
        if self.failure is None and not self.waited:
            return
        self.failure = None
        if self.waited:
            self.waited = False
            if self._on_back is not None:
                await self._on_back(await self.pending())

    async def _failed(self) -> None:
        if not self.waited and self.failure is not None:
            self.waited = True
            logger.warning("flower.stores: %s; the entries wait in %s", self.failure, self.outbox.path)
            if self._on_wait is not None:
                await self._on_wait(self.failure, await self.pending())

    async def run(self) -> None:
        """Deliver as rows come, until cancelled; back off while the store fails. Never raises."""
        delay = self.policy.backoff
        while True:
            try:
                sent = await self.send()
            except StoreError as exc:  # the outbox itself failed: tell, and try again later
                self.failure, sent = exc, False
            if sent:
                delay = self.policy.backoff
                await self._wake.wait()
                self._wake = anyio.Event()
                continue
            await self._failed()
            await anyio.sleep(delay)  # new rows do not shorten a backoff
            self._wake = anyio.Event()
            delay = min(delay * 2, self.policy.max_backoff)

    async def drain(self, timeout: float | None = None) -> int:
        """Deliver what is pending, retrying with backoff for up to `timeout` seconds (default the
        policy's `drain_timeout`); the number of rows left."""
        delay = self.policy.backoff
        with anyio.move_on_after(self.policy.drain_timeout if timeout is None else timeout):
            while True:
                try:
                    if await self.send():
                        break
                except StoreError as exc:
                    self.failure = exc
                await self._failed()
                await anyio.sleep(delay)
                delay = min(delay * 2, self.policy.max_backoff)
        try:
            return await self.pending()
        except StoreError:
            return -1
