"""Layer 4: session stores that keep every transcript line and rewrite only what a resume replays.

- `SqliteSessionStore`: the SDK's `SessionStore` protocol over one SQLite file.
- `TrimmingSessionStore`, `PruningSessionStore`: layers over any `SessionStore` whose `load()` expires
  stale command results, trims large ones to files, and prunes denied calls, API errors, interruption
  residue and orphan calls.
- The policies that tune them, and the `LoadReport` each load produces.

The pure rewrites live in `flower.stores.rewrite`. See docs/stores.md.
"""

from __future__ import annotations

from .layers import PruningSessionStore, TrimmingSessionStore
from .policies import CachePolicy, Change, EphemeralPolicy, LoadReport, PrunePolicy, TrimPolicy
from .sqlite import SqliteSessionStore

__all__ = [
    "CachePolicy",
    "Change",
    "EphemeralPolicy",
    "LoadReport",
    "PrunePolicy",
    "PruningSessionStore",
    "SqliteSessionStore",
    "TrimPolicy",
    "TrimmingSessionStore",
]
