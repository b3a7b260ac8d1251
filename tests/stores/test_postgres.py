"""`PostgresSessionStore` against a real PostgreSQL server: the SDK's contracts, bytes, errors, loops."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
import asyncpg
import pytest
from claude_agent_sdk.testing import run_session_store_conformance

from flower import PostgresSessionStore, Runtime, StoreError
from flower._errors import SpecError
from flower.stores import PruningSessionStore, TrimmingSessionStore
from flower.stores._postgres._connection import SCHEMA_VERSION, redact

KEY = {"project_key": "proj", "session_id": "sess"}


@pytest.fixture
async def fresh(
    postgres_dsn: str, pg_schema: Callable[[], str]
) -> AsyncIterator[Callable[[], PostgresSessionStore]]:
    """A factory of stores, each on a schema of its own (the conformance suite wants empty stores)."""
    made: list[PostgresSessionStore] = []

    def make() -> PostgresSessionStore:
        made.append(PostgresSessionStore(postgres_dsn, schema=pg_schema()))
        return made[-1]

    yield make
    for store in made:
        await store.aclose()


async def test_conformance(fresh: Callable[[], PostgresSessionStore]) -> None:
    await run_session_store_conformance(fresh)


async def test_conformance_under_the_layers(
    fresh: Callable[[], PostgresSessionStore], tmp_path: Path
) -> None:
    await run_session_store_conformance(lambda: PruningSessionStore(fresh()))
    await run_session_store_conformance(
        lambda: PruningSessionStore(fresh(), trim=True, spill_dir=tmp_path / "spill")
    )
    await run_session_store_conformance(lambda: TrimmingSessionStore(fresh(), spill_dir=tmp_path / "spill"))


async def test_entries_are_kept_byte_for_byte(
    fresh: Callable[[], PostgresSessionStore], postgres_dsn: str
) -> None:
    store = fresh()
    odd = {
        "uuid": "odd",
        "type": "user",  # not first: jsonb would move it; the store must not
        "zeta": 1,
        "alpha": "分析员 \U0001f600 \ud800 lone \x00 nul",
        "big": 12345678901234567890123,
        "float": 0.1,
        "nested": [1, 2.5, None, True, {"b": [], "a": {}}],
    }
    await store.append(KEY, [odd, {"type": "mode", "n": 1}])
    loaded = await store.load(KEY)
    assert loaded == [odd, {"type": "mode", "n": 1}]
    written = json.dumps(odd, separators=(",", ":"))
    assert json.dumps(loaded[0], separators=(",", ":")) == written, "same keys in the same order"
    conn = await asyncpg.connect(postgres_dsn)
    try:
        stored = await conn.fetchval(f"SELECT payload FROM {store.schema}.entries ORDER BY id LIMIT 1")
    finally:
        await conn.close()
    assert stored == written, "the row holds exactly the serialised entry"


async def test_appends_are_idempotent_and_atomic(fresh: Callable[[], PostgresSessionStore]) -> None:
    store = fresh()
    entry = lambda n, **f: {"type": "user", "uuid": f"u{n}", "n": n, **f}  # noqa: E731
    await store.append(KEY, [entry(1), entry(2)])
    await store.append(KEY, [entry(1), entry(2), entry(3)])  # an SDK retry resends a batch
    await store.append(KEY, [entry(4), entry(4, changed=True)])  # repeated within a batch: the first wins
    await store.append(KEY, [{"type": "mode"}, {"type": "mode"}])  # no uuid: always appended
    with pytest.raises(StoreError, match="entry 1 is not JSON-serialisable"):
        await store.append(KEY, [entry(5), {"type": "x", "bad": object()}])
    assert await store.load(KEY) == [
        entry(1),
        entry(2),
        entry(3),
        entry(4),
        {"type": "mode"},
        {"type": "mode"},
    ]


async def test_two_event_loops_one_store(postgres_dsn: str, pg_schema: Callable[[], str]) -> None:
    """`Runtime.run_sync` runs each call on a new loop: the store opens a pool per loop."""
    store = PostgresSessionStore(postgres_dsn, schema=pg_schema())

    def in_new_loop(n: int) -> list | None:
        async def go() -> list | None:
            await store.append(KEY, [{"type": "user", "uuid": f"u{n}"}])
            try:
                return await store.load(KEY)
            finally:
                await store.aclose()  # this loop's pool: closed with the loop that opened it

        return anyio.run(go)

    first = await anyio.to_thread.run_sync(in_new_loop, 1)
    second = await anyio.to_thread.run_sync(in_new_loop, 2)
    assert len(first or []) == 1 and len(second or []) == 2
    await store.aclose()


async def test_an_unreachable_server_is_a_store_error_with_its_cause() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens there once the socket is closed
    store = PostgresSessionStore(f"postgresql://flower:s3cret@127.0.0.1:{port}/runs", connect_timeout=5)
    with pytest.raises(StoreError) as raised:
        await store.load(KEY)
    assert f"127.0.0.1:{port}" in str(raised.value) and "s3cret" not in str(raised.value)
    assert isinstance(raised.value.__cause__, OSError)
    assert "s3cret" not in repr(store)
    await store.aclose()


async def test_a_newer_schema_is_refused(postgres_dsn: str, pg_schema: Callable[[], str]) -> None:
    schema = pg_schema()
    store = PostgresSessionStore(postgres_dsn, schema=schema)
    await store.append(KEY, [{"type": "user"}])
    await store.aclose()
    conn = await asyncpg.connect(postgres_dsn)
    try:
        await conn.execute(f"UPDATE {schema}.meta SET value = $1", str(SCHEMA_VERSION + 1))
    finally:
        await conn.close()
    async with PostgresSessionStore(postgres_dsn, schema=schema) as again:
        with pytest.raises(StoreError, match=f"schema version {SCHEMA_VERSION + 1}; this version reads"):
            await again.load(KEY)


async def test_a_schema_of_another_application_is_refused(
    postgres_dsn: str, pg_schema: Callable[[], str]
) -> None:
    schema = pg_schema()
    conn = await asyncpg.connect(postgres_dsn)
    try:
        await conn.execute(f"CREATE SCHEMA {schema}; CREATE TABLE {schema}.orders (id int)")
    finally:
        await conn.close()
    async with PostgresSessionStore(postgres_dsn, schema=schema) as store:
        with pytest.raises(StoreError, match="holds tables of another application"):
            await store.load(KEY)


async def test_runners_creating_the_schema_at_once_create_it_once(
    postgres_dsn: str, pg_schema: Callable[[], str]
) -> None:
    schema = pg_schema()
    stores = [PostgresSessionStore(postgres_dsn, schema=schema) for _ in range(6)]
    async with anyio.create_task_group() as group:
        for n, store in enumerate(stores):
            group.start_soon(store.append, {"project_key": "p", "session_id": f"s{n}"}, [{"type": "user"}])
    assert len(await stores[0].list_sessions("p")) == 6
    for store in stores:
        await store.aclose()


def test_arguments_are_checked() -> None:
    with pytest.raises(SpecError, match="postgresql:// DSN or an asyncpg pool"):
        PostgresSessionStore("sessions.db")
    with pytest.raises(SpecError, match="schema must be a lower-case SQL name"):
        PostgresSessionStore("postgresql://h/db", schema="x; DROP TABLE y")
    assert redact("postgresql://u:pw@h:5/db") == "postgresql://u:***@h:5/db"


def test_without_asyncpg_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "asyncpg", None)  # what `import asyncpg` meets when it is not installed
    with pytest.raises(StoreError, match=r"pip install 'flower-context\[postgres\]'") as raised:
        PostgresSessionStore("postgresql://h/db")
    assert isinstance(raised.value.__cause__, ImportError)


async def test_a_dsn_is_a_store_for_the_runtime_and_the_layers(postgres_dsn: str, tmp_path: Path) -> None:
    rt = Runtime(tmp_path, store=postgres_dsn)
    assert isinstance(rt.store.inner, PostgresSessionStore)
    layer = PruningSessionStore(postgres_dsn.replace("postgresql://", "postgres://"))
    assert isinstance(layer.inner, PostgresSessionStore)
    await layer.aclose()


async def test_a_pool_is_used_and_left_open(postgres_dsn: str, pg_schema: Callable[[], str]) -> None:
    pool = await asyncpg.create_pool(postgres_dsn, min_size=1, max_size=3)
    try:
        store = PostgresSessionStore(pool, schema=pg_schema())
        await store.append(KEY, [{"type": "user", "uuid": "a"}])
        async with store.lease("sess"):
            assert await store.load(KEY) == [{"type": "user", "uuid": "a"}]
        await store.aclose()
        assert await pool.fetchval("SELECT 1") == 1, "the caller's pool stays open"
    finally:
        await pool.close()
