"""A PostgreSQL store that stops, restarts or drops the lease mid-run: nothing is lost, and the run says so.

Each test that stops a server owns a throwaway cluster (never the suite's shared one); the CLI is real, on
the scripted model, and the store is checked against what the CLI wrote to its local transcript.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import asyncpg
import pytest
from claude_agent_sdk import project_key_for_directory

from flower import DeliveryPolicy, FailureReason, LeaseError, PostgresSessionStore, Runtime, worker
from flower.events import Event, SessionStarted, StoreWarning, ToolResult
from flower.testing import ScriptedModel, bash, hang_guard
from tests import postgres
from tests.durability.harness import loss
from tests.fleet.lease_queue import waiting_for_a_lease

pytestmark = pytest.mark.cli

STEPS = worker("runs steps", "You run the steps.", tools=["Bash"])


@pytest.fixture(scope="module")
def cluster() -> Iterator[postgres.Cluster]:
    """A PostgreSQL cluster of this module's own, which its tests stop and start."""
    started = postgres.start()
    if isinstance(started, str):
        pytest.skip(started)
    try:
        yield started
    finally:
        started.stop()


def runtime(
    workspace: Path, store: Any, model: ScriptedModel, config: Path | None = None, **kw: Any
) -> Runtime:
    workspace.mkdir(parents=True, exist_ok=True)
    env = {"CLAUDE_CONFIG_DIR": str(config)} if config is not None else None
    kw.setdefault("delivery", DeliveryPolicy(drain_timeout=hang_guard()))  # a busy machine is not an outage
    return Runtime(workspace, store=store, configure=model.attach, env=env, **kw)


async def test_a_server_restart_mid_run_loses_nothing_and_warns(
    scripted_model: ScriptedModel, tmp_path: Path, cluster: postgres.Cluster
) -> None:
    store = PostgresSessionStore(cluster.dsn, schema="restart", runner="machine-a")
    script = [bash("echo one"), bash("echo two; sleep 0.5"), bash("echo three; sleep 0.5"), "all done"]
    scripted_model.script("main", script)
    events: list[Event] = []
    down = threading.Event()

    back = threading.Event()

    def on_event(event: Event) -> None:
        events.append(event)
        if isinstance(event, ToolResult) and "one" in event.text and not down.is_set():
            cluster.halt("immediate")
            down.set()
        elif isinstance(event, StoreWarning) and not event.resolved and down.is_set() and not back.is_set():
            back.set()  # the run said the store is away: bring it back (in order, whatever the timing)
            threading.Thread(target=cluster.resume).start()

    rt = runtime(tmp_path / "a" / "repo", store, scripted_model)
    result = await rt.run(STEPS, "Run the steps.", on_event=on_event)
    assert down.is_set()
    assert result.ok, result.error
    warnings = [e for e in events if isinstance(e, StoreWarning)]
    assert any(not w.resolved for w in warnings) and any(w.resolved for w in warnings), warnings
    started = [e for e in events if isinstance(e, SessionStarted)]
    assert started and started[0].session_id == result.session_id
    assert events.index(started[0]) < next(i for i, e in enumerate(events) if isinstance(e, ToolResult))
    lost = await anyio.to_thread.run_sync(
        loss, cluster.dsn, "restart", scripted_model.config_dir, str(result.session_id)
    )
    assert lost.written > 10 and lost.missing == 0, lost

    # another machine (another workspace, another config directory) resumes it and sees every step
    scripted_model.script("main", ["resumed"])
    other = PostgresSessionStore(cluster.dsn, schema="restart", runner="machine-b")
    again = await runtime(tmp_path / "b" / "repo", other, scripted_model, tmp_path / "config-b").run(
        STEPS, "Go on.", resume=result.session_id
    )
    assert again.ok, again.error
    seen = [view.text for view in scripted_model.request("main", -1).tool_results]
    assert [text.split("\n")[0] for text in seen] == ["one", "two", "three"]
    for opened in (store, other):
        await opened.aclose()


async def test_a_server_down_at_the_end_fails_the_run_with_the_count_then_the_next_run_delivers(
    scripted_model: ScriptedModel, tmp_path: Path, cluster: postgres.Cluster
) -> None:
    store = PostgresSessionStore(cluster.dsn, schema="late", runner="machine-a")
    scripted_model.script("main", [bash("echo one"), bash("echo two"), "done", "next"])
    down = threading.Event()

    def on_event(event: Event) -> None:
        if isinstance(event, ToolResult) and "two" in event.text and not down.is_set():
            cluster.halt("immediate")
            down.set()

    workspace = tmp_path / "a" / "repo"
    rt = runtime(workspace, store, scripted_model, delivery=DeliveryPolicy(drain_timeout=1.0))
    try:
        result = await rt.run(STEPS, "Run the steps.", on_event=on_event)
    finally:
        cluster.resume()
    assert not result.ok and result.cause is not None and result.reason is FailureReason.STORE
    count = re.match(r"(\d+) transcript entries of session ", str(result.error))
    assert count and int(count[1]) > 0 and "outbox" in str(result.error), result.error
    assert "delivered at the next run in this workspace" in str(result.error)

    # the next run in the workspace delivers them first, then resumes the session whole
    again = await rt.run(STEPS, "Go on.", resume=result.session_id)
    assert again.ok, again.error
    assert [v.text.split("\n")[0] for v in scripted_model.request("main", -1).tool_results] == ["one", "two"]
    await store.aclose()


async def terminate_leases(dsn: str, runner: str) -> int:
    """`pg_terminate_backend` of every lease connection of `runner`; how many were ended."""
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch(
            "SELECT pg_terminate_backend(pid) AS gone FROM pg_stat_activity WHERE application_name LIKE $1",
            f"flower lease: {runner} %",
        )
    finally:
        await conn.close()
    return sum(1 for row in rows if row["gone"])


def forks(entries: list[dict[str, Any]]) -> list[str]:
    """Entries with more than one user or assistant child: two writers wrote after them."""
    children: dict[str, int] = {}
    for entry in entries:
        if entry.get("type") in ("user", "assistant") and isinstance(entry.get("parentUuid"), str):
            children[entry["parentUuid"]] = children.get(entry["parentUuid"], 0) + 1
    return [parent for parent, count in children.items() if count > 1]


async def test_a_terminated_lease_connection_is_taken_back(
    scripted_model: ScriptedModel, tmp_path: Path, postgres_dsn: str, pg_schema: Any
) -> None:
    runner = f"keeper-{uuid.uuid4().hex[:8]}"
    store = PostgresSessionStore(postgres_dsn, schema=pg_schema(), runner=runner)
    scripted_model.script("main", [bash("echo one; sleep 0.5"), bash("echo two"), "done"])
    events: list[Event] = []
    ended: list[int] = []

    async def on_event(event: Event) -> None:
        events.append(event)
        if isinstance(event, ToolResult) and not ended:
            ended.append(await terminate_leases(postgres_dsn, runner))

    result = await runtime(tmp_path / "a" / "repo", store, scripted_model).run(
        STEPS, "Go.", on_event=on_event
    )
    assert ended == [1], "the lease connection was found and terminated"
    assert result.ok, result.error
    texts = [w.message for w in events if isinstance(w, StoreWarning)]
    assert any("was lost" in t for t in texts) and any("held again" in t for t in texts), texts
    await store.aclose()


async def test_a_lease_taken_over_stops_the_first_runner_and_the_session_never_forks(
    scripted_model: ScriptedModel, tmp_path: Path, postgres_dsn: str, pg_schema: Any
) -> None:
    schema, first, second = pg_schema(), f"first-{uuid.uuid4().hex[:8]}", f"second-{uuid.uuid4().hex[:8]}"
    store_a = PostgresSessionStore(postgres_dsn, schema=schema, runner=first)
    store_b = PostgresSessionStore(postgres_dsn, schema=schema, runner=second)
    scripted_model.script("main", ["Started."])
    a_repo = tmp_path / "a" / "repo"
    start = await runtime(a_repo, store_a, scripted_model).run(STEPS, "Start.")
    assert start.ok, start.error
    session = str(start.session_id)
    results: dict[str, Any] = {}
    steps = [bash(f"echo a-{k}; sleep 0.4") for k in range(1, 8)]
    async with (
        ScriptedModel(main=[*steps, "a finished"], strict=False) as model_a,
        ScriptedModel(main=[bash("echo b-1"), "b finished"], strict=False) as model_b,
    ):
        a_holds = anyio.Event()

        async def on_event(event: Event) -> None:
            if isinstance(event, SessionStarted):
                a_holds.set()
            if isinstance(event, ToolResult) and "a-2" in event.text:
                await waiting_for_a_lease(postgres_dsn, schema, session)  # B queues behind A in the server
                assert await terminate_leases(postgres_dsn, first) == 1

        async def resume_a() -> None:
            rt = runtime(a_repo, store_a, model_a)
            results["a"] = await rt.run(STEPS, "A goes on.", resume=session, on_event=on_event)

        async def resume_b() -> None:
            rt = runtime(tmp_path / "b" / "repo", store_b, model_b, lease_timeout=hang_guard())
            results["b"] = await rt.run(STEPS, "B goes on.", resume=session)

        async with anyio.create_task_group() as group:
            group.start_soon(resume_a)
            await a_holds.wait()  # A leased the session before it said it started: B comes second
            group.start_soon(resume_b)

    a, b = results["a"], results["b"]
    assert not a.ok and isinstance(a.cause, LeaseError) and a.cause.taken_over, a.error
    assert a.reason is FailureReason.LEASE
    assert b.ok, b.error
    key = {"project_key": project_key_for_directory(str(a_repo.resolve())), "session_id": session}
    entries = await store_b.load(key)  # type: ignore[arg-type]
    assert entries and not forks(entries), "one writer at a time: the history is one chain"
    said = [str(e["message"]["content"])[-60:] for e in entries if e.get("type") in ("user", "assistant")]
    assert said[0] == "Start." and "A goes on." in str(said) and "b finished" in said[-1], said
    a_results = [s for s in said if "tool_result" in s and "'a-" in s]
    assert a_results and not any(f"'a-{k}'" in s for s in a_results for k in range(3, 8)), a_results
    for opened in (store_a, store_b):
        await opened.aclose()
