"""`SqliteSessionStore` beyond the conformance suite: idempotency, file checks, WAL, the event loop."""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing
from pathlib import Path

import anyio
import pytest

from flower._errors import SpecError, StoreError
from flower.stores import SqliteSessionStore

KEY = {"project_key": "proj", "session_id": "sess"}


def entry(n: int, **fields: object) -> dict:
    return {"type": "user", "uuid": f"u{n}", "n": n, **fields}


@pytest.fixture
async def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    async with SqliteSessionStore(tmp_path / "db" / "sessions.db") as opened:
        yield opened


async def test_appends_are_idempotent_on_uuid(store: SqliteSessionStore) -> None:
    await store.append(KEY, [entry(1), entry(2)])
    await store.append(KEY, [entry(1), entry(2), entry(3)])  # an SDK retry resends a batch
    await store.append(KEY, [entry(4), entry(4, changed=True)])  # repeated within a batch: first wins
    await store.append(KEY, [{"type": "mode"}, {"type": "mode"}])  # no uuid: always appended

    loaded = await store.load(KEY)

    assert loaded == [entry(1), entry(2), entry(3), entry(4), {"type": "mode"}, {"type": "mode"}]


async def test_the_same_uuid_may_live_in_two_transcripts(store: SqliteSessionStore) -> None:
    sub = {**KEY, "subpath": "subagents/agent-1"}
    await store.append(KEY, [entry(1)])
    await store.append(sub, [entry(1)])
    assert await store.load(KEY) == await store.load(sub) == [entry(1)]


async def test_entries_round_trip_deep_equal(store: SqliteSessionStore) -> None:
    odd = {
        "type": "user",
        "uuid": "odd",
        "text": "分析员 \U0001f600 \ud800 lone",
        "nested": [1, 2.5, None, True, {"a": []}],
    }
    await store.append(KEY, [odd])
    assert await store.load(KEY) == [odd]


async def test_mtimes_grow_strictly_and_summaries_follow(store: SqliteSessionStore) -> None:
    seen = []
    for n in range(5):
        await store.append(KEY, [entry(n, timestamp="2026-11-29T10:00:00.000Z", customTitle=f"title {n}")])
        (listed,) = await store.list_sessions("proj")
        seen.append(listed["mtime"])
    assert seen == sorted(set(seen)) and seen[0] > 1e12
    (summary,) = await store.list_session_summaries("proj")
    assert summary["mtime"] == seen[-1] and summary["data"]["custom_title"] == "title 4"


async def test_the_file_is_created_lazily_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "sessions.db"
    store = SqliteSessionStore(path)
    assert not path.exists() and not path.parent.exists(), "the constructor does no I/O"
    await store.append(KEY, [entry(1)])
    assert path.parent.stat().st_mode & 0o777 == 0o700
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert await store.integrity_check() == "ok"
    await store.aclose()
    assert await store.load(KEY) == [entry(1)], "a closed store opens again"
    store.close()


async def test_bad_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a directory") as caught:
        await SqliteSessionStore(tmp_path).load(KEY)
    assert caught.value.path == str(tmp_path)

    text_file = tmp_path / "notes.db"
    text_file.write_text("these are my notes, not a database\n" * 50)
    with pytest.raises(StoreError, match="not a SQLite database"):
        await SqliteSessionStore(text_file).load(KEY)

    foreign = tmp_path / "foreign.db"
    with closing(sqlite3.connect(foreign)) as conn:
        conn.execute("CREATE TABLE t (x)")
        conn.commit()
    with pytest.raises(StoreError, match="another application"):
        await SqliteSessionStore(foreign).append(KEY, [entry(1)])
    with closing(sqlite3.connect(foreign)) as conn:
        assert conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 1, "left as it was"

    newer = tmp_path / "newer.db"
    await SqliteSessionStore(newer).append(KEY, [entry(1)])
    with closing(sqlite3.connect(newer)) as conn:
        conn.execute("PRAGMA user_version = 99")
        conn.commit()
    with pytest.raises(StoreError, match="schema 99"):
        await SqliteSessionStore(newer).load(KEY)


async def test_bad_input_is_refused_and_nothing_lands(store: SqliteSessionStore) -> None:
    await store.append(KEY, [entry(1)])
    with pytest.raises(StoreError, match="entry 1 is a list"):
        await store.append(KEY, [entry(2), ["not", "a", "dict"]])  # type: ignore[list-item]
    with pytest.raises(StoreError, match="not JSON-serialisable"):
        await store.append(KEY, [entry(3), {"type": "x", "when": object()}])
    with pytest.raises(StoreError, match="session_id"):
        await store.append({"project_key": "proj"}, [entry(4)])  # type: ignore[typeddict-item]
    with pytest.raises(StoreError, match="project_key"):
        await store.list_sessions("")
    assert await store.load(KEY) == [entry(1)]
    with pytest.raises(SpecError):
        SqliteSessionStore("")
    with pytest.raises(SpecError):
        SqliteSessionStore(42)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="busy_timeout"):
        SqliteSessionStore("x.db", busy_timeout=-1)


async def test_delete_cascades_and_targets(store: SqliteSessionStore) -> None:
    sub = {**KEY, "subpath": "subagents/agent-1"}
    await store.append(KEY, [entry(1)])
    await store.append(sub, [entry(2)])
    await store.delete(sub)
    assert await store.list_subkeys(KEY) == [] and await store.load(KEY) == [entry(1)]
    await store.append(sub, [entry(2)])
    await store.delete(KEY)
    assert await store.load(sub) is None and await store.list_session_summaries("proj") == []


async def test_calls_never_block_the_event_loop(store: SqliteSessionStore) -> None:
    batch = [entry(n, body="x" * 200) for n in range(20_000)]
    ticks = 0

    async def heartbeat() -> None:
        nonlocal ticks
        while True:
            await anyio.sleep(0.002)
            ticks += 1

    async with anyio.create_task_group() as tg:
        tg.start_soon(heartbeat)
        started = time.perf_counter()
        await store.append(KEY, batch)
        loaded = await store.load(KEY)
        elapsed = time.perf_counter() - started
        tg.cancel_scope.cancel()

    assert loaded is not None and len(loaded) == 20_000
    assert ticks >= max(3, elapsed / 0.002 / 10), f"the loop ticked {ticks} times in {elapsed:.2f}s"
