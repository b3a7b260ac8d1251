"""Layer 4: session stores that keep every transcript line and rewrite only what a resume replays.

- `SqliteSessionStore`: the SDK's `SessionStore` protocol over one SQLite file.
- `PostgresSessionStore`: the same in PostgreSQL, for a fleet of runners (the `postgres` extra), with
  files that follow the session to another machine.
- `Lease`: a session held by one runner at a time (`SqliteSessionStore.lease`, `PostgresSessionStore.lease`).
- `TrimmingSessionStore`, `PruningSessionStore`: layers over any `SessionStore` whose `load()` expires
  stale command results, trims large ones to files, and prunes denied calls, API errors, interruption
  residue and orphan calls.
- The policies that tune them, and the `LoadReport` each load produces.
- `DeliveryPolicy`: how a run's entries go through the workspace's outbox to the store;
  `deliver_outbox` delivers what an outbox holds now (`flower doctor --deliver`), an `OutboxDelivery`.
- `Change`: one rewrite a load made, as a `LoadReport` lists it.

See docs/stores.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._lease import Lease
from ._outbox import DeliveryPolicy
from ._policies import CachePolicy, Change, EphemeralPolicy, LoadReport, PrunePolicy, TrimPolicy
from ._postgres.store import PostgresSessionStore
from ._rewriting_stores import PruningSessionStore, TrimmingSessionStore
from ._sqlite.store import SqliteSessionStore

if TYPE_CHECKING:
    from .._run.outbox_delivery import OutboxDelivery, deliver_outbox

__all__ = [
    "CachePolicy",
    "Change",
    "DeliveryPolicy",
    "EphemeralPolicy",
    "Lease",
    "LoadReport",
    "OutboxDelivery",
    "PostgresSessionStore",
    "PrunePolicy",
    "PruningSessionStore",
    "SqliteSessionStore",
    "TrimPolicy",
    "TrimmingSessionStore",
    "deliver_outbox",
]


def __getattr__(name: str) -> Any:
    """`deliver_outbox` and `OutboxDelivery` on first use: the delivery runs on the run machinery, which
    imports this package."""
    if name in ("deliver_outbox", "OutboxDelivery"):
        from .._run import outbox_delivery

        return getattr(outbox_delivery, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
