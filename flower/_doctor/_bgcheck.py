"""The doctor's background-worker run: a worker that ends while its coordinator writes its last reply.

What `Runtime.run()` relies on to return only once the coordinator has read every report
(`flower._run.settle`): the CLI hands such a report over in a turn of its own after the turn's result, and
says when no turn is owed any more. Read from what the scripted model received: the coordinator's request
after its "waiting" reply carries the worker's report, and the step's answer is the one it gave then.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from .._agents import coordinator, worker
from .._result import StepResult
from .._runtime import Runtime
from ..events import Event, SubagentFinished
from ..testing import RecordedRequest, ScriptedModel, agent

__all__ = ["BackgroundSeen", "background_run", "judge_background"]

_HOLD = 60.0  # seconds either side waits for the other at most: then the fact fails, the run goes on
_REPORT = "ANALYST-REPORT: 7 files"
_FINAL = "Read the analyst's report: 7 files."


@dataclass
class BackgroundSeen:
    """What the run left: the coordinator's requests and the step's result."""

    requests: list[RecordedRequest] = field(default_factory=list)
    result: StepResult | None = None


async def background_run(workspace: Path) -> BackgroundSeen:
    """Run the scenario in `workspace` (created) with a scripted model of its own."""
    seen = BackgroundSeen()
    finished = threading.Event()
    asked = threading.Event()  # the coordinator's request after the Agent call is out

    async def waiting(request: RecordedRequest) -> str:
        asked.set()
        await anyio.to_thread.run_sync(lambda: finished.wait(_HOLD))  # the worker ends meanwhile
        return "The analyst is counting; I will read its report."

    async def report(request: RecordedRequest) -> str:
        await anyio.to_thread.run_sync(lambda: asked.wait(_HOLD))
        return _REPORT

    def on_event(event: Event) -> None:
        if isinstance(event, SubagentFinished):
            finished.set()

    main: list[Any] = [agent("analyst", "Count the files.", background=True), waiting, _FINAL]
    workspace.mkdir(parents=True, exist_ok=True)
    lead = coordinator("lead", "Goal: count the files.", {"analyst": worker("Counts.", "You count.")})
    async with ScriptedModel(main=main, agents={"analyst": [report]}, strict=False) as model:
        rt = Runtime(workspace, configure=model.attach, check_credentials=False, keep_warm=False)
        seen.result = await rt.run(lead, "Start.", on_event=on_event)
        seen.requests = model.requests("main")
    return seen


def judge_background(seen: BackgroundSeen | None) -> str | None:
    """None when the fact holds, else what was seen instead."""
    if seen is None or seen.result is None:
        return "the background-worker run did not run"
    if len(seen.requests) < 3 or _REPORT not in seen.requests[2]:
        return "the coordinator never received the worker's report (no request after its reply carried it)"
    if not seen.result.ok or seen.result.text != _FINAL:
        return f"the run ended before the coordinator answered the report: {seen.result.text!r}"
    return None
