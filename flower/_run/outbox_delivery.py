"""`flower doctor`'s look at a workspace's outbox, and the delivery of what waits to a store a person names.

An outbox keeps the entries a store has not taken yet, bound to the identity of the store they were
written for, and a run delivers only those of its own store. Those of another store (a workspace that
once ran against another database) stay, reported by every run's `StoreWarning`, until a run on that
store delivers them. Those of a run that never reached its store, in a workspace that had never learned
who that store was, belong to no known database: no run delivers them. `outbox_state` lists them all,
with the store's label and identity, and the entries set aside (`fenced`: another runner took their
session over; never delivered, kept for a person to look at).

`deliver_outbox` (`flower doctor --deliver-outbox STORE`) delivers to the store a person names what
waits for it: the entries bound to its identity (reached through any DSN or path), and the entries
whose store is unknown, which are bound to it first. The delivery is a run's recovery: each session
under its lease, only if nobody leased it since its entries were written (else they are set aside),
in order, each entry once (idempotency keys, the store's identity checked in every append).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from .._errors import StoreError
from .._run.recover import Recovery, alive
from ..stores._identity import identity_of, label_of
from ..stores._open import open_store
from ..stores._outbox import LABEL, DeliveryPolicy, Outbox, Waiting

__all__ = ["OutboxDelivery", "OutboxState", "deliver_outbox", "outbox_state"]

_DELIVER = "flower doctor --deliver-outbox STORE"


@dataclass(frozen=True, kw_only=True)
class OutboxState:
    """What a workspace's outbox holds."""

    path: str
    """The outbox file."""
    stores: tuple[Waiting, ...] = ()
    """Per store, the entries waiting for it and those set aside; empty when it holds none."""
    error: str = ""
    """Why the file could not be read, when it could not."""

    def render(self) -> list[str]:
        """The lines `flower doctor` prints."""
        if self.error:
            return [f"  outbox            {self.path}: cannot be read ({self.error})"]
        if not self.stores:
            return [f"  outbox            {self.path}: empty"]
        lines = [f"  outbox            {self.path}:"]
        for store in self.stores:
            aside = f", {store.fenced} set aside (fenced)" if store.fenced else ""
            if store.target.startswith(LABEL):
                lines.append(
                    f"    {store.pending} entries of a run that never reached {store.label}: their database "
                    f"is unknown, no run delivers them{aside}; `{_DELIVER}` delivers them to the store "
                    "you name"
                )
            else:
                lines.append(f"    {store.pending} entries wait for {store.label} [{store.target}]{aside}")
        return lines


def outbox_path(workspace: str | os.PathLike[str]) -> Path:
    """The default outbox of `workspace`."""
    return Path(workspace) / ".flower" / "outbox.db"


def outbox_state(workspace: str | os.PathLike[str]) -> OutboxState | None:
    """The outbox of `workspace` (`<workspace>/.flower/outbox.db`), or None when it has none."""
    path = outbox_path(workspace)
    if not path.is_file():
        return None
    outbox = Outbox(path)
    try:
        return OutboxState(path=str(path), stores=tuple(outbox.waiting()))
    except StoreError as exc:
        return OutboxState(path=str(path), error=str(exc))
    finally:
        outbox.close()


@dataclass(frozen=True, kw_only=True)
class OutboxDelivery:
    """What `deliver_outbox` did."""

    path: str
    """The outbox file."""
    store: str
    """The store delivered to: its label and identity."""
    bound: int = 0
    """Entries whose store was unknown, bound to this store before the delivery."""
    delivered: int = 0
    """Entries the store took."""
    left: int = 0
    """Entries for this store still in the outbox (their session's lease is busy, or the store failed)."""
    messages: tuple[str, ...] = field(default=())
    """What the delivery said, session by session (deliveries, sessions set aside)."""

    @property
    def ok(self) -> bool:
        """Nothing for this store is left in the outbox."""
        return self.left == 0

    def render(self) -> list[str]:
        """The lines `flower doctor --deliver-outbox` prints."""
        lines = [f"flower doctor: the outbox {self.path} to {self.store}"]
        if self.bound:
            lines.append(f"  {self.bound} entries of a run that never reached its store bound to this one")
        lines.extend(f"  {message}" for message in self.messages)
        lines.append(f"  {self.delivered} entries delivered, {self.left} left for this store")
        return lines


async def deliver_outbox(
    workspace: str | os.PathLike[str], store: Any, *, outbox: str | os.PathLike[str] | None = None
) -> OutboxDelivery:
    """Deliver to `store` (a flower store, or a DSN or path) what the outbox of `workspace` (or the file
    `outbox`) holds for it, and the entries whose store is unknown (module docstring). `StoreError`
    when the store cannot say who it is (unreachable) or the outbox cannot be read."""
    opened = isinstance(store, str | os.PathLike)
    target_store: Any = open_store(store) if opened else store
    try:
        return await _deliver(Path(workspace), target_store, outbox)
    finally:
        if opened:
            await target_store.aclose()


async def _deliver(workspace: Path, store: Any, outbox_file: str | os.PathLike[str] | None) -> OutboxDelivery:
    label = label_of(store)
    identity = await identity_of(store)
    if identity is None or identity.startswith(LABEL):
        raise StoreError(f"{label} cannot say which database it is now (unreachable?): nothing was delivered")
    path = Path(outbox_file) if outbox_file is not None else outbox_path(workspace)
    if not path.is_file():
        raise StoreError(f"there is no outbox at {path}", path=str(path))
    box = Outbox(path)
    try:
        bound = await anyio.to_thread.run_sync(_bind_unknown, box, identity, label)
        before = await anyio.to_thread.run_sync(_counts, box, identity)
        said: list[str] = []

        async def say(message: str, pending: int, resolved: bool) -> None:
            said.append(message)

        await Recovery(store, store, box, identity, DeliveryPolicy(), workspace, say, label).run()
        after = await anyio.to_thread.run_sync(_counts, box, identity)
        return OutboxDelivery(
            path=str(path),
            store=f"{label} [{identity}]",
            bound=bound,
            delivered=max(0, before[0] - after[0] - (after[1] - before[1])),
            left=after[0],
            messages=tuple(said),
        )
    finally:
        await anyio.to_thread.run_sync(box.close)


def _counts(box: Outbox, identity: str) -> tuple[int, int]:
    """(pending, fenced) entries the outbox holds for `identity`."""
    found = [w for w in box.waiting() if w.target == identity]
    return (found[0].pending, found[0].fenced) if found else (0, 0)


def _bind_unknown(box: Outbox, identity: str, label: str) -> int:
    """Bind the entries of every unknown store to `identity` (one transaction per store), but those of a
    run still under way (it delivers them itself); how many."""
    bound = 0
    for other in box.waiting():
        if not other.target.startswith(LABEL):
            continue
        live = {r.session_id for r in box.records(other.target) if r.pid and alive(r.pid)}
        sessions = box.sessions_of(other.target) - live
        bound += box.rekey(other.target, identity, sessions)
    box.remember(identity, label)
    return bound
