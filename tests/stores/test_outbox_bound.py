"""An outbox row bound to a store's identity lands only in that store: the store checks the identity in
the append's own transaction (SQLite and a real PostgreSQL server), and a deliverer's rows for another
database wait, never land."""

from __future__ import annotations

from pathlib import Path

import pytest

from flower import DeliveryPolicy, PostgresSessionStore, SqliteSessionStore, StoreError
from flower.stores._outbox import Deliverer, Outbox

KEY = {"project_key": "-repo", "session_id": "6f1d7c1e-0000-4000-8000-00000000b0b0"}
ROWS = [("u1", '{"type":"user","uuid":"u1"}'), ("~x:2", '{"type":"queue-operation"}')]


async def test_a_sqlite_append_for_another_identity_is_refused_in_its_transaction(tmp_path: Path) -> None:
    store = SqliteSessionStore(tmp_path / "a.db")
    other = SqliteSessionStore(tmp_path / "b.db")
    mine, theirs = await store.identity(), await other.identity()
    assert mine and theirs and mine != theirs
    with pytest.raises(StoreError, match=r"not sqlite:.* the entries were written for"):
        await store.append_keyed(KEY, ROWS, identity=theirs)  # type: ignore[arg-type]
    assert await store.load(KEY) is None  # type: ignore[arg-type]
    await store.append_keyed(KEY, ROWS, identity=mine)  # type: ignore[arg-type]
    await store.append_keyed(KEY, ROWS, identity=mine)  # type: ignore[arg-type]  # again: lands once
    assert len(await store.load(KEY) or []) == 2  # type: ignore[arg-type]
    memory = SqliteSessionStore(":memory:")
    with pytest.raises(StoreError):
        await memory.append_keyed(KEY, ROWS, identity=mine)  # type: ignore[arg-type]
    await memory.append_keyed(KEY, ROWS, identity=await memory.identity())  # type: ignore[arg-type]
    for each in (store, other, memory):
        await each.aclose()


async def test_a_postgres_append_for_another_identity_is_refused_in_its_transaction(
    postgres_dsn: str, pg_schema: object
) -> None:
    store = PostgresSessionStore(postgres_dsn, schema=pg_schema())  # type: ignore[operator]
    mine = await store.identity()
    elsewhere = mine.rsplit("/", 1)[0] + "/another_schema"
    with pytest.raises(StoreError, match="the entries were written for"):
        await store.append_keyed(KEY, ROWS, identity=elsewhere)  # type: ignore[arg-type]
    assert await store.load(KEY) is None  # type: ignore[arg-type]
    subagent = {**KEY, "subpath": "subagents/agent-a"}
    with pytest.raises(StoreError):  # a subagent's append is checked too
        await store.append_keyed(subagent, ROWS, identity=elsewhere)  # type: ignore[arg-type]
    assert await store.load(subagent) is None  # type: ignore[arg-type]
    await store.append_keyed(KEY, ROWS, identity=mine)  # type: ignore[arg-type]
    assert len(await store.load(KEY) or []) == 2  # type: ignore[arg-type]
    await store.aclose()


async def test_rows_bound_to_another_database_wait_in_the_outbox(tmp_path: Path) -> None:
    store = SqliteSessionStore(tmp_path / "now.db")
    outbox = Outbox(tmp_path / "outbox.db")
    outbox.open()
    written_for = await SqliteSessionStore(tmp_path / "then.db").identity()
    assert written_for is not None
    outbox.put(written_for, KEY, [{"type": "user", "uuid": "u1"}])  # type: ignore[arg-type]
    deliverer = Deliverer(outbox, store, written_for, DeliveryPolicy(backoff=0.01, max_backoff=0.01))
    assert deliverer.bound
    assert await deliverer.drain(timeout=0.2) == 1
    assert deliverer.failure is not None and "the entries were written for" in str(deliverer.failure)
    assert await store.load(KEY) is None  # type: ignore[arg-type]
    outbox.close()
    await store.aclose()
