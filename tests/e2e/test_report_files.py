"""Through the real CLI: a subagent may not Write a `REPORT*.md` (and kin), and flower says so.

The CLI refuses a subagent's Write of a file whose name matches `^(REPORT|SUMMARY|FINDINGS|ANALYSIS).*\\.md$`
in any case ("Subagents should return findings as text"). flower never asks a worker for one, and when a
worker tries, the run's events and the economy report show a refusal, not a success.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_agent_sdk import AgentDefinition

from flower import Runtime, build_report, coordinator, worker
from flower._demo.scenario import STEP_1, STEP_2
from flower._wall._tools import SUBAGENT_REFUSED_WRITE
from flower._wall.rules import COORDINATOR_RULES, WORKER_RULES
from flower._workbench import WORKBENCH_RULES
from flower.events import Event, ToolCall, ToolResult
from flower.testing import ScriptedModel, agent, tool_use
from tests.facts import fact

NAMES = {
    "REPORT.md": True,
    "summary.md": True,
    "Findings-2026.MD": True,
    "analysis_v2.md": True,
    "summary.txt": False,
    "audit-summary.md": False,
    "reports.txt": False,
}


@pytest.mark.cli
async def test_the_cli_refuses_a_subagents_report_file(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    writes = [tool_use("Write", file_path=str(workspace / "notes" / name), content="x") for name in NAMES]
    scripted_model.script("main", [agent("w", "Write the notes.", background=False), "done"])
    scripted_model.script("w", [*writes, "written"])
    helper = AgentDefinition(description="Writes.", prompt="You write.", tools=["Write"], model="inherit")
    run = await scripted_model.run("go", cwd=workspace, tools=["Agent", "Write"], agents={"w": helper})
    assert run.text == "done", run.error

    results = scripted_model.request("w", -1).tool_results
    refused = {
        name: r.is_error and "Subagents should return findings as text" in r.text
        for name, r in zip(NAMES, results, strict=True)
    }
    on_disk = {name: (workspace / "notes" / name).exists() for name in NAMES}
    fact(
        refused == NAMES and on_disk == {n: not r for n, r in NAMES.items()},
        "Later findings (outside checks)",
        "the CLI refuses a subagent's Write of ^(REPORT|SUMMARY|FINDINGS|ANALYSIS).*\\.md$ in any case, and "
        "only that",
    )
    assert all(bool(SUBAGENT_REFUSED_WRITE.match(name)) == expected for name, expected in NAMES.items())


@pytest.mark.cli
async def test_a_workers_refused_write_is_a_refusal_in_the_events_and_the_report(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    target = workspace / ".flower" / "notes" / "SUMMARY.md"
    scripted_model.script("main", [agent("writer", "Write the summary.", background=False), "done"])
    scripted_model.script(
        "writer", [tool_use("Write", file_path=str(target), content="# Summary\n"), "tried"]
    )
    lead = coordinator(
        "lead", "Summarise.", {"writer": worker("Writes files.", "You write.", tools=["Write"])}
    )
    events: list[Event] = []

    result = await Runtime(workspace, configure=scripted_model.attach).run(
        lead, "Go.", on_event=events.append
    )

    assert result.ok and not target.exists()
    (call,) = [e for e in events if isinstance(e, ToolCall) and e.agent == "writer"]
    (answer,) = [e for e in events if isinstance(e, ToolResult) and e.tool_use_id == call.tool_use_id]
    assert answer.refused and answer.is_error and answer.agent == "writer"
    assert not any(e.refused for e in events if isinstance(e, ToolResult) and e is not answer)
    report = await build_report(workspace)
    assert (report.refusals.main, report.refusals.subagents) == (0, 1)
    assert "refused by CLI" in report.render_text()


def test_flower_never_asks_a_worker_for_a_refused_file() -> None:
    """Every file a model-facing text or the demo's scenario names is one a worker may write."""
    tasks = [task for move in (*STEP_1, *STEP_2) for task in move.tasks]
    paths = [task.path for task in tasks if task.path]
    assert paths and all(not SUBAGENT_REFUSED_WRITE.match(Path(p).name) for p in paths), paths
    texts = [COORDINATOR_RULES, WORKER_RULES, *WORKBENCH_RULES, *(t.goal for t in tasks)]
    for text in texts:
        for word in text.replace("`", " ").split():
            assert not SUBAGENT_REFUSED_WRITE.match(Path(word.strip(".,:;()")).name), word
