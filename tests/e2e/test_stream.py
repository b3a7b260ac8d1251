"""`Runtime.stream()` through the real CLI: the same events and result as `run()`, and early exits that end
the CLI; `run_sync` inside a running loop."""

from __future__ import annotations

import asyncio
from pathlib import Path

import anyio
import pytest

from flower import Runtime, SpecError, coordinator, worker
from flower.events import (
    Event,
    Result,
    SessionStarted,
    SubagentFinished,
    SubagentStarted,
    ToolCall,
    ToolResult,
)
from flower.testing import ScriptedModel, agent, bash, hang_guard, reply
from tests.e2e.processes import cli_processes

pytestmark = pytest.mark.cli

ANALYST = worker("Counts lines.", "You count lines with the command line.", tools=["Bash", "Read"])
LEAD = coordinator("lead", "Goal: count the lines of data.txt.", {"analyst": ANALYST})


def script(model: ScriptedModel) -> None:
    model.script("main", [agent("analyst", "Count the lines of data.txt."), "data.txt has 3 lines."])
    model.script("analyst", [bash("wc -l data.txt"), "3 data.txt"])


async def test_stream_yields_the_runs_events_and_then_holds_its_result(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "data.txt").write_text("a\nb\nc\n")
    rt = Runtime(workspace, configure=scripted_model.attach)
    script(scripted_model)
    stream = rt.stream(LEAD, "Start.")
    assert stream.result is None and not stream.done and stream.session_id is None

    events: list[Event] = []
    async for event in stream:
        if isinstance(event, ToolCall):  # the session's id is known before the first tool call
            assert stream.session_id is not None and isinstance(events[0], SessionStarted)
        events.append(event)

    result = stream.result
    assert result is not None and stream.done and result.ok and result.text == "data.txt has 3 lines."
    assert stream.session_id == result.session_id
    assert rt.results == [result]
    kinds = [type(e) for e in events]
    assert kinds.index(SubagentStarted) < kinds.index(SubagentFinished) < kinds.index(Result)
    (wc,) = [e for e in events if isinstance(e, ToolResult) and e.agent == "analyst"]
    assert "3 data.txt" in wc.text
    assert "3 data.txt" in scripted_model.request("main", 1).tool_results[0].text  # what the model saw

    # the same run through run(on_event=...): the same events, in the same order
    script(scripted_model)
    seen: list[Event] = []
    again = await rt.run(LEAD, "Start.", on_event=seen.append)
    assert again.ok and [type(e) for e in seen] == kinds
    with pytest.raises(SpecError, match="iterated once"):
        stream.__aiter__()


async def test_breaking_out_of_the_loop_ends_the_cli(scripted_model: ScriptedModel, workspace: Path) -> None:
    scripted_model.script("main", [bash("echo first"), reply("never seen", delay=hang_guard())])
    rt = Runtime(workspace, configure=scripted_model.attach)

    async for event in rt.stream(LEAD, "Go."):
        if isinstance(event, ToolResult):
            assert cli_processes() != []
            break
    with anyio.fail_after(hang_guard()):  # asyncio closes the abandoned iterator at once, which stops the CLI
        while cli_processes():
            await anyio.sleep(0.05)

    # inside `async with`, the CLI is gone when the block ends
    scripted_model.script("main", [bash("echo second"), reply("never seen", delay=hang_guard())])
    async with rt.stream(LEAD, "Go.") as stream:
        async for event in stream:
            if isinstance(event, ToolCall):
                break
    assert cli_processes() == [] and stream.result is None
    scripted_model.script("main", [])  # the delayed replies were never delivered


async def test_a_cancelled_consumer_ends_the_cli(scripted_model: ScriptedModel, workspace: Path) -> None:
    scripted_model.script("main", [reply("never seen", delay=hang_guard())])
    rt = Runtime(workspace, configure=scripted_model.attach)
    stream = rt.stream(LEAD, "Go.")

    async def consume() -> None:
        async for _ in stream:
            pass

    async with anyio.create_task_group() as group:
        group.start_soon(consume)
        await scripted_model.wait_for(1, caller="main")  # the CLI waits on the model: cancel now
        group.cancel_scope.cancel()

    assert group.cancel_scope.cancelled_caught and cli_processes() == [] and stream.result is None
    scripted_model.script("main", [])


async def test_errors_of_the_run_are_raised_by_the_iteration(workspace: Path) -> None:
    rt = Runtime(workspace, check_credentials=False)
    with pytest.raises(SpecError, match=r"Runtime\.stream: prompt"):
        rt.stream(LEAD, "  ")
    workspace.rmdir()  # gone after the Runtime was made: the run says so
    with pytest.raises(SpecError, match="does not exist"):
        async for _ in rt.stream(LEAD, "Go."):
            pass


async def test_run_sync_inside_a_running_loop_says_to_await(workspace: Path) -> None:
    rt = Runtime(workspace)
    with pytest.raises(SpecError, match=r"await rt\.run\(\.\.\.\)"):
        rt.run_sync(LEAD, "Go.")
    assert asyncio.get_running_loop().is_running()
