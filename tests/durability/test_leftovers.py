"""`kill -9` of a runner during a Bash call leaves nothing of its run running: not the CLI, not the call's
command (which the CLI starts in a session of its own), whether the runner's process alone or its whole
process group is killed, for a `Runtime` and for an app that `instrument()`s its options, on either store.

Each runner process is real (`tests/durability/runner.py`), through the real CLI on the scripted model; the
held call (`sleep 600`, in the main thread or in a worker) is seen running before the kill. What the run
started is its process tree then; the test waits, within the hang guard, for every one of them to end.
How long that takes is `benchmarks/bench_leftovers.py`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from flower._run.tether import is_tethered
from tests.durability.harness import Runner
from tests.durability.processes import LINUX, Proc, tree, wait_for, wait_gone

pytestmark = [pytest.mark.cli, pytest.mark.skipif(not LINUX, reason="reads the process table in /proc")]

CASES = [  # each store meets each entry, each kill and each place of the held call
    ("runtime", "process", "main"),
    ("runtime", "group", "worker"),
    ("app", "group", "main"),
    ("app", "process", "worker"),
]
POSTGRES_CASES = [
    ("runtime", "group", "main"),
    ("runtime", "process", "worker"),
    ("app", "process", "main"),
    ("app", "group", "worker"),
]


def held(proc: Proc) -> bool:
    return proc.command == "sleep 600"


def start(entry: str, store: str, schema: str, workspace: Path, where: str) -> Runner:
    """A runner whose main thread (or its worker) is held in a Bash call (`sleep 600`)."""
    flags = (("--app",) if entry == "app" else ()) + (("--hold-sub",) if where == "worker" else ())
    worker = where == "worker"
    return Runner.start(
        store, schema, workspace, "start", 1, 0.1, subagent=worker, hold=0 if worker else 1, flags=flags
    )


@pytest.mark.parametrize(("entry", "kill", "where"), CASES)
async def test_a_killed_runner_leaves_nothing_of_its_run_running(
    tmp_path: Path, entry: str, kill: str, where: str
) -> None:
    await killed_leaves_nothing(entry, str(tmp_path / "sessions.db"), "-", tmp_path, kill, where)


@pytest.mark.parametrize(("entry", "kill", "where"), POSTGRES_CASES)
async def test_a_killed_postgres_runner_leaves_nothing_of_its_run_running(
    tmp_path: Path, postgres_dsn: str, pg_schema: Callable[[], str], entry: str, kill: str, where: str
) -> None:
    await killed_leaves_nothing(entry, postgres_dsn, pg_schema(), tmp_path, kill, where)


async def killed_leaves_nothing(
    entry: str, store: str, schema: str, tmp_path: Path, kill: str, where: str
) -> None:
    """Kill the runner (`kill`: its process or its group) while a call of `where` runs; wait for every
    process of its tree to end."""
    runner = start(entry, store, schema, tmp_path / "repo", where)
    try:
        root = runner.process.pid
        await anyio.to_thread.run_sync(wait_for, root, held, lambda: runner.process.poll() is not None)
        procs = tree(root)  # the runner, the CLI's supervisor, the CLI, the call's shell, its sleep
        assert any(is_tethered(word) for proc in procs for word in proc.command.split()[:3]), procs
        assert sum(held(proc) for proc in procs) == 1
        runner.kill(group=kill == "group")
        await anyio.to_thread.run_sync(wait_gone, procs)
    finally:
        if runner.process.poll() is None:
            runner.kill()
