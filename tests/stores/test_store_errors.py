"""Every failure of `SqliteSessionStore` is a `StoreError` naming the file and the cause, original chained."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from contextlib import closing
from pathlib import Path
from typing import Any

import anyio
import pytest

from flower import PruningSessionStore, SqliteSessionStore, StoreError
from tests.hostile import finishes, on_tmpfs

KEY: Any = {"project_key": "proj", "session_id": "sess"}
ENTRY = {"type": "user", "uuid": "u1", "message": {"content": "hello"}}


def deep(levels: int) -> dict[str, Any]:
    value: Any = "bottom"
    for _ in range(levels):
        value = {"n": value}
    return {"type": "user", "uuid": "deep", "message": value}


def too_deep() -> int:
    """Levels of nesting this interpreter's json refuses (RecursionError). Python 3.12 and earlier refuse
    5,000; 3.13 and 3.14 (whose limit follows the C stack) go past 5,000 and refuse 200,000."""
    for levels in (5_000, 200_000, 2_000_000):
        try:
            json.dumps(deep(levels))
        except RecursionError:
            return levels
    pytest.skip("this interpreter's json serialises 2,000,000 levels: nothing is too deep for it")


async def failure(store: SqliteSessionStore, call: str, *args: Any) -> StoreError:
    """The StoreError `store.<call>(*args)` raises, checked to name the file and chain the original."""
    with pytest.raises(StoreError) as caught:
        await getattr(store, call)(*args)
    error = caught.value
    assert error.path == store.path and store.path in str(error), str(error)
    return error


async def test_a_changed_payload_byte(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    async with SqliteSessionStore(path) as store:
        await store.append(KEY, [ENTRY])
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("UPDATE entries SET payload = '#' || substr(payload, 2)")  # one byte changed
        conn.commit()
    async with SqliteSessionStore(path) as store:
        error = await failure(store, "load", KEY)  # raised JSONDecodeError before
        assert "not valid JSON" in str(error) and isinstance(error.__cause__, json.JSONDecodeError)
        pruning = PruningSessionStore(store)
        with pytest.raises(StoreError, match="not valid JSON"):
            await pruning.load(KEY)


async def test_a_changed_summary_byte(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    async with SqliteSessionStore(path) as store:
        await store.append(KEY, [ENTRY])
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("UPDATE summaries SET data = '{broken'")
        conn.commit()
    async with SqliteSessionStore(path) as store:
        error = await failure(store, "list_session_summaries", "proj")
        assert isinstance(error.__cause__, json.JSONDecodeError)


async def test_a_parent_path_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "runs").write_text("a file where a directory should be")
    store = SqliteSessionStore(tmp_path / "runs" / "sessions.db")
    error = await failure(store, "append", KEY, [ENTRY])  # raised FileExistsError before
    assert "a file stands where a directory is needed" in str(error)
    assert isinstance(error.__cause__, FileExistsError | NotADirectoryError)


async def test_an_entry_nested_too_deep_for_json(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    levels = too_deep()
    async with SqliteSessionStore(path) as store:
        error = await failure(store, "append", KEY, [deep(levels)])  # raised RecursionError before
        assert "entry 0 is not JSON-serialisable" in str(error)
        assert isinstance(error.__cause__, RecursionError)
        await store.append(KEY, [ENTRY])
    with closing(sqlite3.connect(path)) as conn:  # written deep by another program
        conn.execute("UPDATE entries SET payload = ?", ("[" * levels + "]" * levels,))
        conn.commit()
    async with SqliteSessionStore(path) as store:
        error = await failure(store, "load", KEY)
        assert "nested too deeply" in str(error) and isinstance(error.__cause__, RecursionError)


async def test_a_locked_database(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    async with SqliteSessionStore(path) as store:
        await store.append(KEY, [ENTRY])
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        async with SqliteSessionStore(path, busy_timeout=0.2) as store:
            error = await failure(store, "append", KEY, [{**ENTRY, "uuid": "u2"}])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "database is locked" in str(error) and "busy_timeout (0.2 s)" in str(error)
    assert isinstance(error.__cause__, sqlite3.OperationalError)


async def test_a_symlink_in_place_of_the_database_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.db"
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "sessions.db").symlink_to(elsewhere)
    store = SqliteSessionStore(tmp_path / "ws" / "sessions.db")
    error = await failure(store, "append", KEY, [ENTRY])
    assert "is a symbolic link" in str(error) and not elsewhere.exists(), "nothing written through it"


async def test_a_symlink_in_place_of_the_wal_is_explained(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    (tmp_path / "sessions.db-wal").symlink_to(tmp_path / "stolen-wal")
    error = await failure(SqliteSessionStore(path), "append", KEY, [ENTRY])
    assert "sessions.db-wal is not a regular file" in str(error) and not (tmp_path / "stolen-wal").exists()


def test_a_fifo_in_place_of_the_database_does_not_block(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    os.mkfifo(path)

    async def load() -> str:
        store = SqliteSessionStore(path)
        return str(await failure(store, "load", KEY))

    try:
        message = str(finishes(lambda: anyio.run(load)))
    finally:
        threading.Thread(target=lambda: os.close(os.open(path, os.O_WRONLY)), daemon=True).start()
    assert "is not a regular file" in message


def test_a_read_only_file_system(tmp_path: Path) -> None:
    result = on_tmpfs(
        tmp_path / "mnt",
        """
        import anyio
        from flower import SqliteSessionStore, StoreError
        KEY = {"project_key": "proj", "session_id": "sess"}
        async def append(path):
            store = SqliteSessionStore(path)
            await store.append(KEY, [{"type": "user", "uuid": "u1"}])
            await store.aclose()
        anyio.run(append, MOUNT / "existing.db")
        """,
        """
        async def attempt(path, call):
            try:
                store = SqliteSessionStore(path)
                entries = [{"type": "user", "uuid": "u2"}]
                await (store.append(KEY, entries) if call == "append" else store.load(KEY))
                return "no error"
            except StoreError as exc:
                return [str(exc), type(exc.__cause__).__name__]
        result = {
            "new": anyio.run(attempt, MOUNT / "runs" / "new.db", "append"),
            "append": anyio.run(attempt, MOUNT / "existing.db", "append"),
            "load": anyio.run(attempt, MOUNT / "existing.db", "load"),
        }
        """,
        read_only=True,
    )
    for case, outcome in result.items():
        assert outcome != "no error", case
        message, _ = outcome
        assert "the file system is read-only" in message, (case, message)
        assert "not a SQLite database" not in message, (case, message)
