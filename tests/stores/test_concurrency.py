"""Several writers on one database: tasks, then real processes; and a process killed mid-append."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import anyio

from flower.stores import SqliteSessionStore
from flower.testing import hang_guard

SHARED = {"project_key": "proj", "session_id": "shared"}

WRITER = textwrap.dedent(
    """
    import sys, anyio
    from flower.stores import SqliteSessionStore
    from flower.testing import hang_guard

    async def main(path, name, batches, size):
        store = SqliteSessionStore(path, busy_timeout=hang_guard())
        own = {"project_key": "proj", "session_id": name}
        shared = {"project_key": "proj", "session_id": "shared"}
        for b in range(batches):
            batch = [{"type": "user", "uuid": f"{name}-{b}-{i}", "writer": name, "seq": b * size + i,
                      "body": "x" * 300} for i in range(size)]
            await store.append(shared, batch)
            await store.append(own, batch)
            if b == 0:
                print("started", flush=True)
        await store.aclose()

    anyio.run(main, sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    """
)


def _spawn(path: Path, name: str, batches: int, size: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), name, str(batches), str(size)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def test_concurrent_tasks_lose_nothing(tmp_path: Path) -> None:
    async with SqliteSessionStore(tmp_path / "s.db") as store:

        async def writer(name: str) -> None:
            for b in range(20):
                await store.append(SHARED, [{"type": "user", "uuid": f"{name}-{b}-{i}"} for i in range(10)])

        async with anyio.create_task_group() as tg:
            for name in ("a", "b", "c"):
                tg.start_soon(writer, name)
        loaded = await store.load(SHARED)
    assert loaded is not None and len(loaded) == 600 and len({e["uuid"] for e in loaded}) == 600


async def test_two_processes_appending_to_one_database_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    batches, size = 25, 40
    writers = [_spawn(path, name, batches, size) for name in ("alpha", "beta")]
    for process in writers:
        with process:
            _, stderr = await anyio.to_thread.run_sync(process.communicate)
        assert process.returncode == 0, stderr

    async with SqliteSessionStore(path) as store:
        shared = await store.load(SHARED)
        assert shared is not None and len(shared) == 2 * batches * size
        for name in ("alpha", "beta"):
            mine = [e["seq"] for e in shared if e["writer"] == name]
            assert mine == list(range(batches * size)), "each writer's order is kept"
            assert [
                e["seq"] for e in await store.load({"project_key": "proj", "session_id": name}) or []
            ] == mine
        assert sorted(s["session_id"] for s in await store.list_sessions("proj")) == [
            "alpha",
            "beta",
            "shared",
        ]
        assert await store.integrity_check() == "ok"


async def test_a_process_killed_during_an_append_leaves_a_consistent_database(tmp_path: Path) -> None:
    path = tmp_path / "killed.db"
    size = 2000
    with _spawn(path, "victim", 10_000, size) as process:
        assert process.stdout is not None
        assert await anyio.to_thread.run_sync(process.stdout.readline) == "started\n"
        deadline = time.monotonic() + hang_guard()
        landed = 0
        while landed < 4 * size and time.monotonic() < deadline:  # let a few batches land, then kill
            conn = sqlite3.connect(path, timeout=hang_guard())
            try:
                landed = conn.execute("SELECT count(*) FROM entries").fetchone()[0]
            finally:
                conn.close()
            await anyio.sleep(0.05)
        # the precondition: batches of both keys were kept before the kill, else nothing below is tested
        assert landed >= 4 * size, f"only {landed} entries landed before the hang guard"
        await anyio.sleep(0.013)  # then kill it in the middle of one
        os.kill(process.pid, signal.SIGKILL)
        await anyio.to_thread.run_sync(process.wait)
    assert process.returncode == -signal.SIGKILL, "the writer was still writing when it was killed"

    async with SqliteSessionStore(path) as store:
        assert await store.integrity_check() == "ok"
        for key in (SHARED, {"project_key": "proj", "session_id": "victim"}):
            loaded = await store.load(key) or []
            assert len(loaded) >= 2 * size, "what landed before the kill is still there"
            assert len(loaded) % size == 0, "a batch lands whole or not at all"
            assert [e["seq"] for e in loaded] == list(range(len(loaded)))
        await store.append(SHARED, [{"type": "user", "uuid": "after"}])
        assert (await store.load(SHARED) or [])[-1]["uuid"] == "after", "the file is usable after the kill"
