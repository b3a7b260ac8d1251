"""Reading a fleet back: every session of a PostgreSQL store, where each ran, and what layer 3 spilled.

The sessions are read through the store's own protocol calls (`load_source` per project key), as for
one store; the store's extra tables give the project keys, the places each session ran in (runner,
workspace, workbench) and the spill manifests' rows the runners published. Nothing is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..stores._postgres import _files as files
from ..stores._postgres.store import PostgresSessionStore
from ._load import Loaded, SessionData
from ._sources import load_source
from ._time import parse_time, within

__all__ = ["FleetData", "load_fleet", "parse_time", "within"]


@dataclass(frozen=True)
class FleetData:
    """The sessions read (oldest first), where each ran, and the spill rows."""

    loaded: Loaded
    places: dict[str, list[files.Place]]


async def load_fleet(
    store: PostgresSessionStore,
    *,
    project_key: str | None = None,
    sessions: Sequence[str] | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> FleetData:
    """Every session of the store (or of `project_key`, or only `sessions`) active in [since, until]."""
    conns = store.connections
    async with conns.connection("reading the fleet") as conn:
        keys = [project_key] if project_key is not None else await files.project_keys(conn, store.schema)
    found: list[SessionData] = []
    for key in keys:
        loaded = await load_source(store, project_key=key, sessions=sessions)
        found.extend(s for s in loaded.sessions if within(s, since, until))
    found.sort(key=lambda s: s.started)
    ids = [s.session_id for s in found]
    async with conns.connection("reading the fleet") as conn:
        places = await files.places(conn, store.schema, ids)
        spills: list[dict[str, Any]] = await files.spill_rows(conn, store.schema, ids)
    return FleetData(Loaded(store.label, found, spills, None), places)
