"""Two machines, one PostgreSQL store: a session moves to another machine with its files, and never forks.

Machine A starts a session: its coordinator glances at a long test log, which layer 3 spills to the
workbench (the history keeps a pointer). Machine A's workspace is then deleted. Machine B, a workspace
at another path, resumes the session: the store restores the spilled file into B's workbench and moves
the pointer to B's path, so B's model reads the log back. Meanwhile machine C tries to resume the same
session and is refused, the lease naming machine B. Last, the fleet report shows both runners.

    FLOWER_POSTGRES_DSN=postgresql://user@host/db python examples/fleet.py    # offline model, real server

It needs `pip install 'flower-context[postgres]'` and a PostgreSQL server; it works in a schema of its
own (`flower_example_<pid>`) and drops it at the end.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import anyio

from flower import Heartbeat, LeaseError, PostgresSessionStore, Runtime, coordinator, worker
from flower.events import Event, ToolCall
from flower.report import build_fleet_report
from flower.testing import RecordedRequest, ScriptedModel, ToolUse, bash, read

analyst = worker("Reads logs.", "You read logs and say what failed.", tools=["Read", "Bash"])
lead = coordinator("lead", "Goal: find the failing test.", {"analyst": analyst})
LOG = "".join(f"test_{n} passed\n" for n in range(400)) + "test_checkout FAILED: expected 3 items, got 2\n"
POINTER = re.compile(r"to `?([^` ]+/\.flower/spill/[^` ]+-bash\.txt)`? \(")


def read_the_pointer(request: RecordedRequest) -> ToolUse:
    """Machine B's model reads the file its history points to."""
    found = POINTER.search(str(request.messages))
    assert found, "no spill pointer in the history"
    print(f"machine B: the history points to {found.group(1)}")
    return read(found.group(1))


async def main(dsn: str) -> None:
    schema = f"flower_example_{os.getpid()}"
    root = Path(tempfile.mkdtemp(prefix="flower-fleet-"))
    machines = {name: root / name / "repo" for name in ("machine-a", "machine-b", "machine-c")}
    for workspace in machines.values():
        workspace.mkdir(parents=True)
    (machines["machine-a"] / "test.log").write_text(LOG)
    stores = {name: PostgresSessionStore(dsn, schema=schema, runner=name) for name in machines}

    with ScriptedModel() as model:

        def runtime(name: str) -> Runtime:
            return Runtime(machines[name], store=stores[name], configure=model.attach)

        model.script("main", [bash("cat test.log"), "The log is long: it is in the workbench."])
        first = await runtime("machine-a").run(lead, "Find the failing test.")
        print(f"machine A: session {first.session_id[:8]}, ok={first.ok}")
        shutil.rmtree(root / "machine-a")  # machine A is gone

        holding, go_on = anyio.Event(), anyio.Event()

        async def pause(event: Event) -> None:
            if isinstance(event, ToolCall) and not holding.is_set():
                holding.set()
                await go_on.wait()

        async def on_b() -> None:
            result = await runtime("machine-b").run(lead, "Go on.", resume=first.session_id, on_event=pause)
            print(f"machine B: {result.text} (ok={result.ok})")

        model.script("main", [read_the_pointer, "test_checkout FAILED: expected 3 items, got 2."])
        async with anyio.create_task_group() as group:
            group.start_soon(on_b)
            await holding.wait()
            refused = await runtime("machine-c").run(lead, "Me too.", resume=first.session_id)
            if isinstance(refused.cause, LeaseError):  # "machine-b on <host> pid <n>"
                runner = str(refused.cause.holder).split(" pid")[0].split(" on ")[0]
                print(f"machine C: refused, the session is leased by {runner}")
            go_on.set()

    report = await build_fleet_report(dsn, schema=schema)
    (row,) = report.sessions
    print(f"fleet report: {len(report.sessions)} session, runners {', '.join(row.runners)}")
    print(f"              {report.total.turns.main} main-thread turns, {report.total.spills.count} spill")
    for store in stores.values():
        await store.aclose()
    await _drop(dsn, schema)
    shutil.rmtree(root)


async def _drop(dsn: str, schema: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(f"DROP SCHEMA {schema} CASCADE")
    finally:
        await conn.close()


if __name__ == "__main__":
    dsn = os.environ.get("FLOWER_POSTGRES_DSN") or (sys.argv[1] if len(sys.argv) > 1 else "")
    if not dsn:
        sys.exit(
            "give a PostgreSQL DSN: FLOWER_POSTGRES_DSN=postgresql://user@host/db python examples/fleet.py"
        )
    # a line on stderr at once, then one whenever the run has been silent for 15 s
    with Heartbeat(f"{Path(__file__).name}: {__doc__.splitlines()[0]}"):
        anyio.run(main, dsn)
