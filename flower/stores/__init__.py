"""Layer 4: session stores that keep every transcript line and rewrite only what a resume replays.

- `SqliteSessionStore`: the SDK's `SessionStore` protocol over one SQLite file.
- `PostgresSessionStore`: the same in PostgreSQL, for a fleet of runners (the `postgres` extra), with
  files that follow the session to another machine.
- `Lease`: a session held by one runner at a time (`SqliteSessionStore.lease`, `PostgresSessionStore.lease`).
- `TrimmingSessionStore`, `PruningSessionStore`: layers over any `SessionStore` whose `load()` expires
  stale command results, trims large ones to files, and prunes denied calls, API errors, interruption
  residue and orphan calls.
- The policies that tune them, and the `LoadReport` each load produces.
- `DeliveryPolicy`: how a run's entries go through the workspace's outbox to the store (`deliver_outbox`,
  exported by `flower`, delivers what an outbox holds now).
- `Change`: one rewrite a load made, as a `LoadReport` lists it.

See docs/stores.md.
"""

from __future__ import annotations

from ._lease import Lease
from ._outbox import DeliveryPolicy
from ._policies import CachePolicy, Change, EphemeralPolicy, LoadReport, PrunePolicy, TrimPolicy
from ._postgres.store import PostgresSessionStore
from ._rewriting_stores import PruningSessionStore, TrimmingSessionStore
from ._sqlite.store import SqliteSessionStore

__all__ = [
    "CachePolicy",
    "Change",
    "DeliveryPolicy",
    "EphemeralPolicy",
    "Lease",
    "LoadReport",
    "PostgresSessionStore",
    "PrunePolicy",
    "PruningSessionStore",
    "SqliteSessionStore",
    "TrimPolicy",
    "TrimmingSessionStore",
]
