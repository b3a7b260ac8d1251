"""A store written by the flower before lease epochs (schema 1) is migrated in place, and reads the same.

The two fixtures in `data/` were made by that flower itself (a SQLite dump, a pg_dump), one session of a
main transcript (three entries, one without a uuid) and a subagent's.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg

from flower import PostgresSessionStore, SqliteSessionStore
from flower.stores._postgres._schema import SCHEMA_VERSION as PG_VERSION
from flower.stores._sqlite._schema import SCHEMA_VERSION as SQLITE_VERSION

DATA = Path(__file__).parent / "data"
SESSION = "11111111-1111-4111-8111-111111111111"
KEY: Any = {"project_key": "-repo", "session_id": SESSION}
SUB: Any = {**KEY, "subpath": "subagents/agent-a1"}


async def check_migrated(store: Any) -> None:
    main = await store.load(KEY)
    assert [e.get("uuid") for e in main] == ["u1", None, "a1"] and main[1]["type"] == "queue-operation"
    assert [e["uuid"] for e in await store.load(SUB)] == ["s1"]
    assert await store.list_subkeys(KEY) == ["subagents/agent-a1"]
    async with store.lease(SESSION) as lease:  # leases get epochs, and the holder's appends are checked
        assert lease.epoch >= 1
        await store.append(KEY, [{"type": "user", "uuid": "u2", "message": {"content": "again"}}])
    async with store.lease(SESSION) as later:
        assert later.epoch > lease.epoch
    assert [e.get("uuid") for e in await store.load(KEY)] == ["u1", None, "a1", "u2"]


async def test_a_sqlite_store_of_schema_1_is_migrated_in_place(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with sqlite3.connect(path) as conn:
        conn.executescript((DATA / "schema1.sqlite.sql").read_text())
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 1
    async with SqliteSessionStore(path) as store:
        await check_migrated(store)
        identity = await store.identity()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SQLITE_VERSION == 3
        assert conn.execute("SELECT count(*) FROM leases").fetchone()[0] == 1
    moved = tmp_path / "elsewhere" / "renamed.db"
    moved.parent.mkdir()
    path.rename(moved)  # the store's id is in the file: moved, it is still the same store
    async with SqliteSessionStore(moved) as store:
        assert identity is not None and identity.startswith("sqlite:") and await store.identity() == identity
    async with SqliteSessionStore(tmp_path / "other.db") as other:
        assert await other.identity() not in (None, identity)


async def test_a_postgres_store_of_schema_1_is_migrated_in_place(
    postgres_dsn: str, pg_schema: Callable[[], str]
) -> None:
    schema = pg_schema()
    conn = await asyncpg.connect(postgres_dsn)
    try:
        await conn.execute((DATA / "schema1.postgres.sql").read_text().replace("{schema}", schema))
        async with PostgresSessionStore(postgres_dsn, schema=schema) as store:
            await check_migrated(store)
        version = await conn.fetchval(f"SELECT value FROM {schema}.meta WHERE key = 'schema_version'")
        assert int(version) == PG_VERSION == 2
        row = await conn.fetchrow(
            f"SELECT epoch, backend_pid FROM {schema}.leases WHERE session_id = $1", SESSION
        )
        assert row["epoch"] >= 2 and row["backend_pid"] == 0, "the row stays after the lease, its epoch too"
    finally:
        await conn.close()
