"""The Runtime installs layers 2 and 3: the workbench index reaches the coordinator, big outputs spill."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from flower import Runtime, SpillPolicy, coordinator, worker
from flower._demo.pause import pass_time
from flower.events import StoreReport
from flower.testing import ScriptedModel, agent, bash, tool_use

pytestmark = pytest.mark.cli

WRITER = worker("Writes scripts and runs commands.", "You write scripts.", tools=["Bash", "Read", "Write"])


def lead() -> object:
    return coordinator("lead", "Goal: count things.", {"writer": WRITER})


async def test_a_script_a_worker_writes_reaches_the_coordinators_index(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    script = workspace / ".flower" / "scripts" / "count_lines.sh"
    scripted_model.script(
        "main", [agent("writer", "Write a line counter to the workbench's scripts/."), "written"]
    )
    scripted_model.script(
        "writer",
        [
            tool_use("Write", file_path=str(script), content='# desc: count lines per file\nwc -l "$@"\n'),
            "done",
        ],
    )
    rt = Runtime(workspace, configure=scripted_model.attach)

    first = await rt.run(lead(), "Write the counter.")
    assert first.ok and script.exists()
    assert "count_lines.sh" not in scripted_model.request("main", 0).system_text
    assert "count_lines.sh" in (workspace / ".flower" / "INDEX.md").read_text()  # index_guard refreshed it

    scripted_model.script("main", ["I see the counter."])
    await rt.run(lead(), "What is in the workbench?")  # a new session: the block is in its system prompt
    system = scripted_model.request("main", -1).system_text
    assert "scripts/count_lines.sh" in system and "count lines per file" in system
    assert str(workspace.resolve() / ".flower") in system

    script.with_name("other.sh").write_text("# desc: written by Bash, seen at the next step\n")
    scripted_model.script("main", ["I see it too."])
    await rt.run(lead(), "And now?", resume=first.session_id)  # a resume: the fresh block precedes the prompt
    resumed = scripted_model.request("main", -1)
    assert "written by Bash, seen at the next step" in resumed.last_user_text
    assert resumed.last_user_text.rstrip().endswith("And now?")


async def test_a_big_output_spills_on_the_main_thread_and_in_workers(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    big = "python3 -c \"print('y' * 50000)\""
    scripted_model.script(
        "main", [tool_use("Read", file_path=str(workspace / "big.txt")), agent("writer", "Print it."), "ok"]
    )
    scripted_model.script("writer", [bash(big), "printed"])
    (workspace / "big.txt").write_text("z" * 20_000)

    result = await Runtime(workspace, configure=scripted_model.attach).run(lead(), "Go.")

    assert result.ok
    main_read = scripted_model.request("main", 1).tool_results[0].text
    assert "z" * 5000 not in main_read and ".flower/spill/" in main_read
    worker_bash = scripted_model.request("writer", 1).tool_results[0].text
    assert "y" * 5000 not in worker_bash and ".flower/spill/" in worker_bash
    assert len(list((workspace / ".flower" / "spill").glob("*.txt"))) == 2


async def test_layers_can_be_turned_off(scripted_model: ScriptedModel, workspace: Path) -> None:
    (workspace / "big.txt").write_text("z" * 20_000)
    scripted_model.script("main", [tool_use("Read", file_path=str(workspace / "big.txt")), "ok"])

    rt = Runtime(workspace, workbench=False, spill_threshold=None, configure=scripted_model.attach)
    await rt.run(lead(), "Go.")

    assert "z" * 5000 in scripted_model.request("main", 1).tool_results[0].text
    assert "Workbench" not in scripted_model.request("main", 0).system_text
    left = {p.name for p in (workspace / ".flower").iterdir()}
    databases = {f"{name}.db{suffix}" for name in ("sessions", "outbox") for suffix in ("", "-wal", "-shm")}
    assert left <= {*databases, "sessions.db-leases", ".gitignore"}, "the store and the outbox only"
    assert Runtime(workspace, spill_threshold=SpillPolicy(threshold=100, head=10, tail=0)).spill.head == 10


async def test_a_resume_goes_through_layer_4(scripted_model: ScriptedModel, workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    looks = [bash(f"ls -la && echo LOOK-{i}") for i in range(9)]
    scripted_model.script("main", [*looks, "looked nine times"])
    rt = Runtime(workspace, configure=scripted_model.attach)
    # a user who chose the 5-minute cache: a resume ten minutes later is cold, yet within `stale_after`
    five = dataclasses.replace(lead(), options={"env": {"CLAUDE_CODE_PROMPT_CACHE_TTL": "5m"}})
    first = await rt.run(five, "Look around.")
    assert first.ok

    events: list[object] = []
    pass_time(workspace / ".flower" / "sessions.db", 600)  # ten minutes later: the 5-minute cache is cold
    scripted_model.script("main", ["resumed"])
    again = await rt.run(five, "Go on.", resume=first.session_id, on_event=events.append)

    assert again.ok and again.session_id == first.session_id
    resumed = scripted_model.request("main", -1)
    results = resumed.tool_results
    assert len(results) == 9
    kept = [i for i, r in enumerate(results) if f"LOOK-{i}" in r.text and "a.txt" in r.text]
    assert kept == [3, 4, 5, 6, 7, 8]  # the 6 most recent glances keep their output
    assert all("expired" in r.text and "a.txt" not in r.text for r in results[:3])
    (report,) = [e.report for e in events if isinstance(e, StoreReport)]
    assert len(report.expired) == 3 and report.chars_saved > 0
    assert rt.store.last_report == report
