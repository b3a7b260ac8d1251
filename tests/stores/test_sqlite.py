"""`SqliteSessionStore` beyond the conformance suite: idempotency, file checks, WAL, the event loop."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from contextlib import closing
from pathlib import Path

import anyio
import pytest

from flower._errors import SpecError, StoreError
from flower.stores import SqliteSessionStore
from flower.testing import hang_guard

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


@pytest.mark.parametrize(
    ("call", "args"),
    [
        ("append", (KEY, [entry(1)])),
        ("load", (KEY,)),
        ("list_sessions", ("proj",)),
        ("list_session_summaries", ("proj",)),
        ("list_subkeys", ("proj", "sess")),
        ("delete", (KEY,)),
    ],
)
async def test_calls_never_block_the_event_loop(
    store: SqliteSessionStore, call: str, args: tuple[object, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    # each call's blocking half is held until the event loop runs another task: a call made on the loop's
    # own thread would never let that task run (the wait below would time out and fail)
    await store.append(KEY, [entry(0)])
    real = getattr(store._db, call)
    loop_thread = threading.get_ident()
    entered, released = threading.Event(), threading.Event()
    threads: list[int] = []

    def held(*arguments: object) -> object:
        threads.append(threading.get_ident())
        entered.set()
        assert released.wait(hang_guard()), (
            "the event loop did not run while the store's call was in progress"
        )
        return real(*arguments)

    monkeypatch.setattr(store._db, call, held)
    public = {"list_subkeys": lambda: store.list_subkeys({"project_key": "proj", "session_id": "sess"})}
    async with anyio.create_task_group() as tg:
        tg.start_soon(public.get(call, lambda: getattr(store, call)(*args)))
        assert await anyio.to_thread.run_sync(entered.wait, 120), f"{call} never reached the database"
        released.set()  # the loop runs this while the call is still inside its worker thread

    assert threads and threads[0] != loop_thread


_APPEND_ONE = (
    "import anyio, gc, sqlite3, sys\n"
    "from flower.stores import SqliteSessionStore\n"
    "store = SqliteSessionStore(sys.argv[1])\n"
    "anyio.run(store.append, {'project_key': 'p', 'session_id': 's'}, [{'type': 'user', 'uuid': 'u'}])\n"
)


def run_python(script: str, database: Path) -> subprocess.CompletedProcess[str]:
    """`script` (after `_APPEND_ONE`) in an interpreter of its own, in development mode, every warning an
    error (Python 3.13+ warns "unclosed database" when a connection is collected or left open at exit)."""
    return subprocess.run(
        [sys.executable, "-X", "dev", "-W", "error", "-c", _APPEND_ONE + script, str(database)],
        capture_output=True,
        text=True,
        timeout=hang_guard(),
        check=False,
    )


def test_a_store_nobody_closes_is_closed_with_it(tmp_path: Path) -> None:
    # in an interpreter of its own: the full collection then finds this store, not whatever garbage the
    # suite's other tests left in a long-lived pytest worker
    done = run_python(
        "connection = store._db._conn\n"
        "assert connection is not None\n"
        "del store\n"
        "gc.collect()\n"
        "try:\n"
        "    connection.execute('SELECT 1')\n"
        "except sqlite3.ProgrammingError as exc:\n"
        "    print(exc)\n",
        tmp_path / "s.db",
    )
    assert done.returncode == 0, done.stderr
    assert "closed" in done.stdout, (done.stdout, done.stderr)


def test_a_store_left_open_at_exit_is_closed_without_a_warning(tmp_path: Path) -> None:
    done = run_python("KEEP = store\n", tmp_path / "s.db")
    assert done.returncode == 0 and "ResourceWarning" not in done.stderr, done.stderr
