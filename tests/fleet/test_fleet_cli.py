"""Two machines, one PostgreSQL store, the real CLI: a session moves with its files, and never forks.

Each "machine" is a workspace directory of its own (at another path, so the project key and every
absolute path differ) and a store object naming its runner. Machine A's workspace is deleted before
machine B resumes: whatever B's model reads, it got through the store.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from flower import (
    DeliveryPolicy,
    FailureReason,
    LeaseError,
    PostgresSessionStore,
    Runtime,
    coordinator,
    worker,
)
from flower._cli import main
from flower.events import ToolCall
from flower.report._fleet_report import build_fleet_report
from flower.testing import ScriptedModel, bash, hang_guard, read
from flower.testing._requests import RecordedRequest
from tests.fleet.lease_queue import waiting_for_a_lease

pytestmark = pytest.mark.cli

ANALYST = worker("Reads logs.", "You read logs.", tools=["Read", "Bash"])
LEAD = coordinator("lead", "Goal: find the failing test in data/.", {"analyst": ANALYST})
BIG = "".join(f"line {n}: test_{n} passed\n" for n in range(400)) + "line 400: test_checkout FAILED\n"
POINTER = re.compile(r"to `?([^` ]+/\.flower/spill/[0-9a-f]{16}-bash\.txt)`? \(")


def machine(root: Path, name: str) -> Path:
    workspace = root / name / "repo"
    workspace.mkdir(parents=True)
    return workspace


def runtime(
    workspace: Path, dsn: str, schema: str, runner: str, model: ScriptedModel, **kw: object
) -> Runtime:
    store = PostgresSessionStore(dsn, schema=schema, runner=runner)
    kw.setdefault("delivery", DeliveryPolicy(drain_timeout=hang_guard()))  # a busy machine is not an outage
    return Runtime(workspace, store=store, configure=model.attach, **kw)  # type: ignore[arg-type]


async def test_a_session_resumes_on_another_machine_with_its_files_and_never_forks(
    scripted_model: ScriptedModel,
    tmp_path: Path,
    postgres_dsn: str,
    pg_schema: Callable[[], str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    schema = pg_schema()
    a, b, c = (machine(tmp_path, name) for name in ("machine-a", "machine-b", "machine-c"))
    (a / "data").mkdir()
    (a / "data" / "test.log").write_text(BIG)
    for part, text in (
        ("notes/decision.md", "# Decision: run the tests one by one\n"),
        ("scripts/t.sh", "# desc: t\n"),
    ):
        (a / ".flower" / part).parent.mkdir(parents=True, exist_ok=True)
        (a / ".flower" / part).write_text(text)

    # machine A: the coordinator glances at the log; layer 3 spills it, the history keeps a pointer
    scripted_model.script("main", [bash("cat data/test.log"), "The log is long; I will look into it."])
    rt_a = runtime(a, postgres_dsn, schema, "machine-a", scripted_model)
    first = await rt_a.run(LEAD, "Find the failure.")
    await rt_a.store.inner.aclose()
    assert first.ok, first.error
    session = first.session_id
    seen_on_a = POINTER.search(scripted_model.request("main", 1).tool_results[0].text)
    assert seen_on_a and seen_on_a.group(1).startswith(str(a)), "spilled on machine A"
    spill_name = Path(seen_on_a.group(1)).name
    shutil.rmtree(tmp_path / "machine-a")  # machine A is gone

    # machine B resumes it: the pointer, moved to B's workbench, resolves; the model reads the log
    on_b = b / ".flower" / "spill" / spill_name

    def read_the_pointer(request: RecordedRequest) -> object:
        found = POINTER.search(str(request.messages))
        assert found and found.group(1) == str(on_b), f"the replayed pointer is B's path: {found}"
        return read(found.group(1))

    holding = anyio.Event()
    go_on = anyio.Event()

    async def pause_b(event: object) -> None:
        if isinstance(event, ToolCall) and not holding.is_set():
            holding.set()
            await go_on.wait()  # machine B keeps its lease while machine C tries

    scripted_model.script("main", [read_the_pointer, "Found it: test_checkout FAILED.", "All there."])
    rt_b = runtime(b, postgres_dsn, schema, "machine-b", scripted_model)
    rt_c = runtime(c, postgres_dsn, schema, "machine-c", scripted_model)
    rt_queued = runtime(c, postgres_dsn, schema, "machine-c", scripted_model, lease_timeout=hang_guard())
    results: dict[str, object] = {}

    async def resume_on_b() -> None:
        results["b"] = await rt_b.run(LEAD, "Go on from machine B.", resume=session, on_event=pause_b)

    async def resume_queued() -> None:
        results["queued"] = await rt_queued.run(LEAD, "Anything left?", resume=session)

    async with anyio.create_task_group() as group:
        group.start_soon(resume_on_b)
        await holding.wait()
        refused = await rt_c.run(LEAD, "Me too.", resume=session)  # refused, naming the holder
        group.start_soon(resume_queued)  # another one queues behind machine B
        await waiting_for_a_lease(postgres_dsn, schema, session)
        go_on.set()

    assert not refused.ok and isinstance(refused.cause, LeaseError), refused.error
    assert refused.reason is FailureReason.LEASE
    assert refused.cause.session_id == session and "machine-b" in (refused.cause.holder or "")
    assert refused.session_id == session and "machine-b" in str(refused.error)
    b_result, queued = results["b"], results["queued"]
    assert b_result.ok and b_result.text == "Found it: test_checkout FAILED.", b_result.error  # type: ignore[attr-defined]
    read_back = scripted_model.request("main", 3).tool_results[-1]
    assert read_back.tool_name == "Read" and "test_checkout FAILED" in read_back.text, (
        "the model got the content"
    )
    assert (b / ".flower" / "notes" / "decision.md").read_text().startswith("# Decision"), "notes travel"
    assert (b / ".flower" / "scripts" / "t.sh").exists()
    assert str(a) not in str(scripted_model.request("main", 2).messages), "no path of machine A is replayed"

    # the queued runner resumed after B: nothing lost, B's turns are in its history
    assert queued.ok and queued.text == "All there.", queued.error  # type: ignore[attr-defined]
    last = scripted_model.request("main", -1)
    assert "Go on from machine B." in last and "Found it: test_checkout FAILED." in last
    assert "Find the failure." in last and str(c) in str(last.messages)

    # the fleet report shows the session and every runner it ran on
    report = await build_fleet_report(postgres_dsn, schema=schema)
    (row,) = [s for s in report.sessions if s.session_id == session]
    assert set(row.runners) >= {"machine-a", "machine-b", "machine-c"}
    assert report.total.turns.main >= 4 and report.total.spills.count == 1
    argv = ["report", postgres_dsn, "--schema", schema, "--json", "--since", "2000-01-01"]
    argv += ["--plots", str(tmp_path / "plots")]
    assert await anyio.to_thread.run_sync(main, argv) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [s["session_id"] for s in printed["sessions"]] == [session]
    assert printed["runners"] == ["machine-a", "machine-b", "machine-c"]
    assert (tmp_path / "plots" / "context.png").stat().st_size > 0
    assert await anyio.to_thread.run_sync(main, ["report", postgres_dsn, "--schema", schema]) == 0
    text = capsys.readouterr().out
    assert "1 session(s) on 3 runner(s): machine-a, machine-b, machine-c" in text and session[:8] in text
    for rt in (rt_b, rt_c, rt_queued):
        await rt.store.inner.aclose()


async def test_two_runtimes_on_one_sqlite_store_never_write_one_session_at_once(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", ["Started.", bash("ls"), "Resumed once.", "Resumed after."])
    first = await Runtime(workspace, configure=scripted_model.attach).run(LEAD, "Start.")
    holding, go_on = anyio.Event(), anyio.Event()

    async def pause(event: object) -> None:
        if isinstance(event, ToolCall) and not holding.is_set():
            holding.set()
            await go_on.wait()

    async def resume() -> None:
        rt = Runtime(workspace, configure=scripted_model.attach)
        assert (await rt.run(LEAD, "Go on.", resume=first.session_id, on_event=pause)).ok

    async with anyio.create_task_group() as group:
        group.start_soon(resume)
        await holding.wait()
        refused = await Runtime(workspace, configure=scripted_model.attach).run(
            LEAD, "Me too.", resume=first.session_id
        )
        assert (
            not refused.ok and isinstance(refused.cause, LeaseError) and refused.reason is FailureReason.LEASE
        )
        assert re.search(f"session {first.session_id} is leased by .* pid", str(refused.error))
        go_on.set()
    after = await Runtime(workspace, configure=scripted_model.attach).run(
        LEAD, "And now?", resume=first.session_id
    )
    assert after.ok and "Resumed once." in scripted_model.request("main", -1), "nothing lost"
