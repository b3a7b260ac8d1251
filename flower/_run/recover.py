"""At the start of a run: what earlier runs in this workspace left in the outbox, delivered first.

The outbox keeps rows by the identity of the store they are for, and delivers them only there (the
store checks it in the append's transaction). Rows of any other store are reported (a `StoreWarning`
naming it), never delivered here, never dropped: a run on that store delivers them. Rows kept under a
store's label (a run that never reached its store, in a workspace that had never learned who it was; or
an older flower's) belong to no known database: they wait until a person names their store
(`flower doctor --deliver-outbox`, `deliver_outbox`).

A run that ended with entries the store did not take, or a runner killed mid-run, leaves rows (and the
record of its session) in the workspace's outbox. Before the new run touches the store, each such
session whose writer is gone is taken back under its lease, on the epoch its rows were written under:

- the lease is still on that epoch (nobody wrote the session since): the rows are delivered; if the
  writer died mid-run, what the CLI wrote to its local transcript and no store got is found and sent
  too (`flower.stores._outbox.reconcile`); the SDK's temporary copy of a resumed session (which holds a
  copy of the CLI's credentials) is deleted;
- another runner took the session since: its rows would fork the session; they are set aside in the
  outbox (`fenced`), never delivered, and a warning says how many;
- the lease is busy, or the store cannot be reached: nothing is done now; a later start tries again.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import anyio
from claude_agent_sdk import SessionKey, SessionStoreEntry

from .._errors import LeaseError, StoreError
from ..stores._outbox import LABEL, Deliverer, DeliveryPolicy, Outbox, Record, Waiting
from ..stores._outbox.reconcile import find_transcript, local_entries, metadata, missing, remove_resume_dirs
from .session_holds import Holds

__all__ = ["Recovery"]

logger = logging.getLogger("flower.runtime")

Say = Callable[[str, int, bool], Awaitable[None]]
"""(message, entries waiting, resolved) -> a `StoreWarning` of the run."""


def alive(pid: int) -> bool:
    """Whether process `pid` runs on this machine (a pid reused by another process counts as alive)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process
    return True


def waiting_elsewhere(path: str, other: Waiting, count: int) -> str:
    """The warning for `count` rows an outbox keeps for a store other than the run's."""
    if other.target.startswith(LABEL):
        return (
            f"{count} transcript entries in the outbox {path} were written by a run that never reached its "
            f"session store ({other.label}), so which database they belong to is unknown: they are not "
            "delivered to this one. `flower doctor` lists them; `flower doctor --deliver-outbox STORE` "
            "delivers them to the store you name"
        )
    return (
        f"{count} transcript entries in the outbox {path} wait for another session store, {other.label} "
        f"({other.target}): not the database this run reached, so they stay there until a run on that "
        "store delivers them (`flower doctor` lists them)"
    )


class Recovery:
    """Delivers, reconciles or sets aside what dead runs of this workspace left (module docstring)."""

    def __init__(
        self,
        layer: Any,
        store: Any,
        outbox: Outbox,
        target: str,
        policy: DeliveryPolicy,
        cwd: Path,
        say: Say,
        label: str,
    ) -> None:
        self.layer, self.store, self.outbox, self.target = layer, store, outbox, target
        self.policy, self.cwd, self.say, self.label = policy, cwd, say, label

    async def run(self) -> None:
        """Recover every session a dead writer left; never raises a store failure."""
        try:
            await self._stores()
            records = await anyio.to_thread.run_sync(self.outbox.records, self.target)
        except StoreError as exc:
            logger.warning("flower: cannot read the outbox %s: %s", self.outbox.path, exc)
            return
        for record in records:
            if record.pid and alive(record.pid):
                continue  # its run goes on (in this process or another): its own deliverer sends them
            try:
                await self._one(record)
            except StoreError as exc:
                logger.warning(
                    "flower: what session %s left in %s waits: %s", record.session_id, self.outbox.path, exc
                )

    async def _stores(self) -> None:
        """Remember this store's identity under its label; report the rows of other stores. Rows are
        delivered only to the store they were written for: rows kept under a label (a run that never
        learned its store's identity) are never taken by whatever store that label reaches now."""
        outbox = self.outbox
        await anyio.to_thread.run_sync(outbox.remember, self.target, self.label)
        for other in await anyio.to_thread.run_sync(outbox.waiting):
            if other.target == self.target or not other.pending:
                continue
            records = await anyio.to_thread.run_sync(outbox.records, other.target)
            live = {r.session_id for r in records if r.pid and alive(r.pid)}  # their own runs send them
            waiting = other.pending - await anyio.to_thread.run_sync(outbox.count, other.target, live)
            if waiting <= 0:
                continue
            await self.say(waiting_elsewhere(outbox.path, other, waiting), waiting, False)

    async def _one(self, record: Record) -> None:
        session_id = record.session_id
        holds = Holds(self.layer, cwd=self.cwd, timeout=0.0)
        try:
            try:
                lease = await holds.hold(session_id, if_epoch=record.epoch if holds.leases_store() else None)
            except LeaseError as exc:
                if exc.taken_over:
                    await self._set_aside(session_id, exc)
                return  # busy: a live runner elsewhere holds it
            if lease is not None:
                await anyio.to_thread.run_sync(self.outbox.set_epoch, self.target, session_id, lease.epoch)
            if record.pid:  # the writer died mid-run: what its CLI wrote and no store got
                await self.reconcile(record)
            deliverer = Deliverer(
                self.outbox, self.store, self.target, self.policy, sessions={session_id}, label=self.label
            )
            before = await deliverer.pending()
            if not await deliverer.send():
                await anyio.to_thread.run_sync(self.outbox.end, self.target, session_id)
                raise deliverer.failure or StoreError("the store did not take the entries")
            removed = await anyio.to_thread.run_sync(remove_resume_dirs, session_id)
            await anyio.to_thread.run_sync(self.outbox.forget, self.target, session_id)
            if before:
                await self.say(
                    f"delivered {before} transcript entries of session {session_id} that an earlier run in "
                    "this workspace left in its outbox",
                    0,
                    True,
                )
            if removed:
                logger.info("flower: removed the temporary copies a killed run left: %s", ", ".join(removed))
        finally:
            await holds.aclose()

    async def _set_aside(self, session_id: str, exc: LeaseError) -> None:
        count = await anyio.to_thread.run_sync(self.outbox.fence, self.target, session_id, str(exc))
        await anyio.to_thread.run_sync(remove_resume_dirs, session_id)
        if count:
            await self.say(
                f"{count} transcript entries of session {session_id} that an earlier run in this workspace "
                f"left were not delivered: {exc}. They are kept aside in {self.outbox.path} (table fenced)",
                0,
                False,
            )

    async def reconcile(self, record: Record) -> list[tuple[SessionKey, list[SessionStoreEntry]]]:
        """Put what the run's local transcript holds and the store lacks into the outbox; what was put,
        by transcript. Also at the end of a run whose SDK dropped batches (`DurableRun`)."""
        if record.resumed and record.prefixes is None:
            return []  # killed before it knew which lines of its copy came from the store: none is trusted
        main = await anyio.to_thread.run_sync(
            find_transcript, record.session_id, record.config_dir, record.resumed
        )
        if main is None:
            return []
        key = cast(SessionKey, {"project_key": main.parent.name, "session_id": record.session_id})
        files = await anyio.to_thread.run_sync(local_entries, main, key, record.prefixes or {})
        # the rows still waiting count as stored: they are delivered before anything found here
        waiting = await self._waiting(record.session_id)
        added = 0
        put: list[tuple[SessionKey, list[SessionStoreEntry]]] = []
        for file_key, path, local in files:
            stored = (await self.store.load(file_key) or []) + waiting.get(file_key.get("subpath") or "", [])
            found = missing(local, stored)
            if file_key.get("subpath"):
                meta = metadata(path, stored + found)
                if meta is not None:
                    found = [meta, *found] if not stored else [*found, meta]
            if found:
                batch = cast(list[SessionStoreEntry], found)
                added += await anyio.to_thread.run_sync(self.outbox.put, self.target, file_key, batch)
                put.append((file_key, batch))
        if added:
            logger.info(
                "flower: session %s: %d entries from the CLI's local transcript %s",
                record.session_id,
                added,
                main,
            )
        return put

    async def _waiting(self, session_id: str) -> dict[str, list[dict[str, Any]]]:
        found: dict[str, list[dict[str, Any]]] = {}
        rows = await anyio.to_thread.run_sync(self.outbox.rows, self.target, session_id)
        for row in rows:
            found.setdefault(row.key.get("subpath") or "", []).append(json.loads(row.payload))
        return found
