"""Background workers through the real CLI: the coordinator reads every report before `run()` returns.

A worker the Agent tool runs in the background and that ends while the coordinator's turn goes on is
reported to the coordinator in a later request: in the same turn when the turn still calls tools, else
in a turn the CLI starts after the turn's result. The run must not end in between.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from pathlib import Path

import anyio
import pytest
from claude_agent_sdk import ClaudeSDKClient, ResultMessage, SystemMessage, TaskNotificationMessage

from flower import FailureReason, Runtime, SpecError
from flower._run.settle import STATE_ENV
from flower.events import Event, SubagentFinished
from flower.testing import ScriptedModel, agent, bash, hang_guard, reply
from tests.e2e.background import REPORT, STATES, lead, notified, once, reports_late
from tests.e2e.processes import cli_processes
from tests.facts import fact

pytestmark = pytest.mark.cli


@STATES
async def test_a_worker_that_ends_during_the_last_reply_is_read_before_the_run_returns(
    scripted_model: ScriptedModel, workspace: Path, states: str
) -> None:
    finished = threading.Event()
    events: list[Event] = []

    def on_event(event: Event) -> None:
        events.append(event)
        if isinstance(event, SubagentFinished):
            finished.set()

    scripted_model.script(
        "main",
        [
            agent("analyst", "Count the files of data/.", background=True),
            once(finished, "The analyst is on it; I will read its report."),
            bash("echo checked", description="a glance after the report"),
            "42 files; the largest is data/big.csv.",
        ],
    )
    scripted_model.script("analyst", [reports_late(scripted_model)])

    rt = Runtime(workspace, env={STATE_ENV: states}, configure=scripted_model.attach)
    result = await rt.run(lead(), "Go.", on_event=on_event)

    assert result.ok, result.error
    assert result.text == "42 files; the largest is data/big.csv." and result.results == 2
    assert result.unreported == ()
    main = scripted_model.requests("main")
    assert [notified(r) for r in main] == [False, False, True, True], scripted_model.describe_log()
    (done,) = [e for e in events if isinstance(e, SubagentFinished)]
    assert (done.agent, done.status, done.summary) == ("analyst", "completed", REPORT)


@STATES
async def test_a_worker_that_ends_while_the_turn_calls_tools_is_read_in_that_turn(
    scripted_model: ScriptedModel, workspace: Path, states: str
) -> None:
    """The CLI hands the report over in the turn's next request: no turn is owed, and the run ends with
    the turn (it does not wait for one)."""
    finished = threading.Event()

    def on_event(event: Event) -> None:
        if isinstance(event, SubagentFinished):
            finished.set()

    scripted_model.script(
        "main",
        [
            agent("analyst", "Count the files of data/.", background=True),
            once(finished, bash("echo looking", description="a glance meanwhile")),
            "42 files; the largest is data/big.csv.",
        ],
    )
    scripted_model.script("analyst", [reports_late(scripted_model)])

    rt = Runtime(workspace, env={STATE_ENV: states}, configure=scripted_model.attach)
    result = await rt.run(lead(), "Go.", on_event=on_event)

    assert result.ok and result.results == 1, result.error
    assert [notified(r) for r in scripted_model.requests("main")] == [False, False, True]


async def test_a_worker_that_never_reports_fails_the_step_past_the_hang_guard(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    """`worker_timeout` bounds the wait once the coordinator's turn is over: the run returns (no
    exception), the CLI and the worker are ended, and the step says which worker never reported."""
    never = hang_guard()  # the worker's reply is held until the test is over
    scripted_model.script("main", [agent("analyst", "Count.", background=True), "Waiting for the analyst."])
    scripted_model.script("analyst", [reply("never seen", delay=never)])
    events: list[Event] = []
    rt = Runtime(workspace, worker_timeout=3, configure=scripted_model.attach)

    result = await rt.run(lead(), "Go.", on_event=events.append)

    (ended,) = [e for e in events if isinstance(e, SubagentFinished)]
    assert not result.ok and result.unreported == (ended.task_id,) and result.reason is FailureReason.STALLED
    assert ended.status == "killed" and "worker_timeout" in ended.summary
    assert "never reported" in (result.error or "") and "analyst" in (result.error or "")
    assert result.text == "Waiting for the analyst."
    assert not any(REPORT in r for r in scripted_model.requests("main"))
    assert cli_processes() == []


def test_worker_timeout_is_a_positive_number_of_seconds(tmp_path: Path) -> None:
    assert Runtime(tmp_path, worker_timeout=None).worker_timeout == math.inf
    assert Runtime(tmp_path, worker_timeout=60).worker_timeout == 60.0
    for bad in (0, -1, math.nan, math.inf, True, "60"):
        with pytest.raises(SpecError, match="Runtime: worker_timeout must be a number"):
            Runtime(tmp_path, worker_timeout=bad)  # type: ignore[arg-type]


async def test_fact_the_cli_says_idle_only_once_no_turn_is_owed(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    """What `flower._run.settle` relies on: with `CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS=1` (which a
    Runtime's options set) the CLI sends `session_state_changed`, and stays `running` past a result while
    a finished worker's report is still owed to the main thread; `idle` comes once it has been read."""
    finished = threading.Event()
    scripted_model.script(
        "main", [agent("analyst", "Count.", background=True), once(finished, "I will wait."), "final"]
    )
    scripted_model.script("analyst", [reports_late(scripted_model)])
    options = Runtime(workspace, configure=scripted_model.attach).options(lead())
    assert options.env[STATE_ENV] == "1"
    seen: list[str] = []
    with anyio.fail_after(hang_guard()):
        async with ClaudeSDKClient(dataclasses.replace(options, session_store=None)) as client:
            await client.query("Go.")
            async for message in client.receive_messages():
                if isinstance(message, TaskNotificationMessage):
                    finished.set()
                    seen.append("notification")
                elif isinstance(message, ResultMessage):
                    seen.append(f"result {message.result}")
                elif isinstance(message, SystemMessage) and message.subtype == "session_state_changed":
                    seen.append(str(message.data.get("state")))
                    if seen[-1] == "idle":
                        break
    fact(
        seen == ["running", "notification", "result I will wait.", "result final", "idle"],
        "§1",
        f"a worker that ends during the main thread's last reply is owed a turn of its own, and the "
        f"CLI says idle only after it (seen: {seen})",
    )
