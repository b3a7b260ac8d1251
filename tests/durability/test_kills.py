"""`kill -9` of a runner's whole process group, for real: at most the call in flight is lost, another runner
resumes the session at once, the next start on the same machine recovers what the store lacks, and a
resume after the kill leaves one unbroken chain that the next resume walks whole.

"At most the call in flight" is checked without a clock (`harness.Cut`): against the CLI's own files, the
store holds the first lines of each, the dead runner's outbox holds the committed lines after them, and
only the tail after the last committed line is missing.

The campaign (30 kills at random points, both stores) is `benchmarks/bench_durability.py`; these are two.
"""

from __future__ import annotations

import glob
import random
import signal
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import asyncpg
import pytest

from flower import PostgresSessionStore, Runtime, StepResult, worker
from flower.stores._outbox.reconcile import mirrored
from flower.testing import ScriptedModel, bash, hang_guard
from tests.durability.harness import Runner, cut, main_key, shape, stored, stored_results, wait_stored

pytestmark = pytest.mark.cli

STEPS = worker("runs steps", "You run the steps.", tools=["Bash"])


def resume_dirs(session: str) -> list[str]:
    return glob.glob(f"{tempfile.gettempdir()}/claude-resume-*/projects/*/{session}.jsonl")


async def test_a_killed_postgres_runner_loses_at_most_the_call_in_flight_and_resumes_elsewhere(
    tmp_path: Path, postgres_dsn: str, pg_schema: Callable[[], str]
) -> None:
    schema = pg_schema()
    a = tmp_path / "a" / "repo"
    # the final answer waits the hang guard: whatever the load, the kill lands before the run can end (with
    # a 2 s wait, at load 20-31 the run sometimes ended first, taking its CLI's files: `Cut(written=0)`)
    killed = Runner.start(postgres_dsn, schema, a, "start", 3, 0.4, subagent=True, linger=hang_guard())
    config, session = killed.follow()  # the session's id comes before its first tool call
    while killed.process.poll() is None and not await anyio.to_thread.run_sync(
        stored_results, postgres_dsn, schema, config, session
    ):
        await anyio.sleep(0.1)  # a result in the store first, so that the resume below has one to see
    killed.kill_at_random(6, 0.4, random.Random(26))
    assert killed.process.returncode == -signal.SIGKILL, ("the run ended before the kill", killed.events)

    # what the store and the outbox hold against the CLI's own files, with no clock: the store has the
    # first lines of each file, the outbox's rows continue them, and only the tail after is missing
    outbox = a / ".flower" / "outbox.db"
    at = await anyio.to_thread.run_sync(cut, postgres_dsn, schema, config, session, outbox)
    assert at.written > 0 and at.stored > 0 and not at.faults, at

    written = await anyio.to_thread.run_sync(stored_results, postgres_dsn, schema, config, session)
    other = Runner.start(postgres_dsn, schema, tmp_path / "b" / "repo", f"resume:{session}", 1, 0)
    result = await anyio.to_thread.run_sync(other.finish)
    assert result["ok"], result
    seen = [text.split("\n")[0] for text in result["seen"] if text.startswith("step-")]
    steps = [text for text in written if text.startswith("step-")]  # an Agent's result is reframed
    assert steps and seen == steps, "the model saw every result the store had"


def drop_last_commits(store: str, schema: str, count: int) -> set[str]:
    """Delete the store's last `count` entries (a store that lost its last commits, restored from a backup
    ...); their uuids."""
    if store.startswith("postgres"):

        async def drop() -> set[str]:
            conn = await asyncpg.connect(store)
            try:
                rows = await conn.fetch(
                    f"DELETE FROM {schema}.entries WHERE id IN "
                    f"(SELECT id FROM {schema}.entries ORDER BY id DESC LIMIT {count}) RETURNING uuid"
                )
            finally:
                await conn.close()
            return {row["uuid"] for row in rows}

        return anyio.run(drop)
    with sqlite3.connect(store) as conn:
        last = f"SELECT id FROM entries ORDER BY id DESC LIMIT {count}"
        lost = {u for (u,) in conn.execute(f"SELECT uuid FROM entries WHERE id IN ({last})")}
        conn.execute(f"DELETE FROM entries WHERE id IN ({last})")
    return lost


async def test_a_killed_resume_is_reconciled_and_its_copy_removed_at_the_next_start(tmp_path: Path) -> None:
    await killed_resume_reconciled(str(tmp_path / "sessions.db"), "-", tmp_path)


async def test_a_killed_postgres_resume_is_reconciled_at_the_next_start(
    tmp_path: Path, postgres_dsn: str, pg_schema: Callable[[], str]
) -> None:
    await killed_resume_reconciled(postgres_dsn, pg_schema(), tmp_path)


async def killed_resume_reconciled(store: str, schema: str, tmp_path: Path) -> None:
    """A resume killed mid-run, then its store loses its last commits: the next start in the workspace
    sends back what the killed CLI wrote (from the SDK's temporary copy) and deletes that copy."""
    workspace = tmp_path / "repo"
    first = Runner.start(store, schema, workspace, "start", 1, 0)
    done = await anyio.to_thread.run_sync(first.finish)
    assert done["ok"], done
    session = done["session_id"]

    killed = Runner.start(store, schema, workspace, f"resume:{session}", 4, 0.4)
    killed.until(lambda e: e["ev"] == "tool_result" and e["n"] >= 2)
    killed.kill()
    (copy,) = resume_dirs(session)  # the SDK's copy of the session, with the CLI's credentials beside it
    written = {e["uuid"] for e in mirrored(Path(copy)) if isinstance(e.get("uuid"), str)}
    outbox = workspace / ".flower" / "outbox.db"
    at = await anyio.to_thread.run_sync(cut, store, schema, str(Path(copy).parents[2]), session, outbox)
    assert at.written > 0 and not at.faults, at  # a resume's file starts with the store's lines
    lost = await anyio.to_thread.run_sync(drop_last_commits, store, schema, 3)
    assert lost & written

    again = Runner.start(store, schema, workspace, f"resume:{session}", 0, 0)
    result = await anyio.to_thread.run_sync(again.finish)
    assert result["ok"], result
    assert not resume_dirs(session) and not Path(copy).exists(), "the killed run's copy is gone"
    key = {"project_key": Path(copy).parent.name, "session_id": session}
    stored_now = await stored(store, schema, key)  # type: ignore[arg-type]
    assert written <= {e.get("uuid") for e in stored_now}, "every line the killed CLI wrote is back"
    uuids = [e["uuid"] for e in stored_now if isinstance(e.get("uuid"), str)]
    assert len(uuids) == len(set(uuids)), "each once"
    results = [e["text"].split("\n")[0] for e in killed.events if e["ev"] == "tool_result"]
    seen = [text.split("\n")[0] for text in result["seen"]]
    assert seen[0] == "step-1" and seen[1 : len(results)] == results[:-1], (seen, results)


async def test_a_kill_right_after_a_call_is_sent_hides_nothing_from_the_second_resume(
    tmp_path: Path, scripted_model: ScriptedModel
) -> None:
    await killed_mid_call_then_resumed_twice(str(tmp_path / "sessions.db"), "-", tmp_path, scripted_model)


async def test_a_postgres_kill_right_after_a_call_is_sent_hides_nothing_from_the_second_resume(
    tmp_path: Path, scripted_model: ScriptedModel, postgres_dsn: str, pg_schema: Callable[[], str]
) -> None:
    await killed_mid_call_then_resumed_twice(postgres_dsn, pg_schema(), tmp_path, scripted_model)


async def killed_mid_call_then_resumed_twice(
    store: str, schema: str, tmp_path: Path, scripted_model: ScriptedModel
) -> None:
    """Killed while a call runs (its `tool_use` stored, its result not), the session is resumed, then resumed
    again: the second resume's model sees the killed run's results (the cut call answered by a note) and
    the first resume's, and the store holds one chain, unbroken, with one leaf. (It used to hang the first
    resume's work off the answer the load gave the cut call, which the store never received: the second
    resume replayed the older branch and saw none of it.)"""
    kind = "postgresql" if store.startswith("postgres") else "sqlite"
    first = tmp_path / "a" / "repo"
    killed = Runner.start(store, schema, first, "start", 3, 0.1, config=tmp_path / "config-a", hold=2)
    config, session = killed.follow()
    killed.until(lambda event: event["ev"] == "tool_result")
    key = main_key(config, session)
    await anyio.to_thread.run_sync(wait_stored, store, schema, key, "echo step-2")
    killed.kill()  # step-2 runs: its call is stored, its result does not exist yet

    async def resume(where: str, script: list[object]) -> StepResult:
        scripted_model.script("main", script)
        # SQLite: the same workspace (its next start recovers what the killed CLI wrote); PostgreSQL:
        # another workspace and config directory each time, another machine
        workspace = first if kind == "sqlite" else tmp_path / where / "repo"
        workspace.mkdir(parents=True, exist_ok=True)
        opened: Any = PostgresSessionStore(store, schema=schema) if kind == "postgresql" else store
        env = {"CLAUDE_CONFIG_DIR": str(tmp_path / f"config-{where}")}
        rt = Runtime(workspace, store=opened, configure=scripted_model.attach, env=env)
        try:
            return await rt.run(STEPS, "Go on.", resume=session)
        finally:
            await rt.store.aclose()
            if kind == "postgresql":
                await opened.aclose()

    once = await resume("b", [bash("echo more-1"), "resumed once"])
    assert once.ok, once.error
    twice = await resume("c", ["resumed twice"])
    assert twice.ok, twice.error

    seen = [view.text.split("\n")[0] for view in scripted_model.request("main", -1).tool_results]
    assert len(seen) == 3 and seen[0] == "step-1" and seen[2] == "more-1", seen
    assert "step-2" not in seen[1], "the cut call's answer is a note, not a result it never had"
    chain = shape(await stored(store, schema, key))
    assert not chain.broken and len(chain.leaves) == 1, chain
