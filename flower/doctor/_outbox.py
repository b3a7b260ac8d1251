"""`flower doctor`'s look at a workspace's outbox: the transcript entries it still holds, by store.

An outbox keeps the entries a store has not taken yet, by the store's identity. A run delivers those of
its own store first; those of another store (a workspace that once ran against another database, or a
store moved to a new identity) stay, reported by every run's `StoreWarning`, until a run on that store
delivers them. This lists them, with the store's label and identity, and the entries set aside
(`fenced`: another runner took their session over; never delivered, kept for a person to look at).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .._errors import StoreError
from ..stores.outbox import Outbox, Waiting

__all__ = ["OutboxState", "outbox_state"]


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
            lines.append(f"    {store.pending} entries wait for {store.label} [{store.target}]{aside}")
        return lines


def outbox_state(workspace: str | os.PathLike[str]) -> OutboxState | None:
    """The outbox of `workspace` (`<workspace>/.flower/outbox.db`), or None when it has none."""
    path = Path(workspace) / ".flower" / "outbox.db"
    if not path.is_file():
        return None
    outbox = Outbox(path)
    try:
        return OutboxState(path=str(path), stores=tuple(outbox.waiting()))
    except StoreError as exc:
        return OutboxState(path=str(path), error=str(exc))
    finally:
        outbox.close()
