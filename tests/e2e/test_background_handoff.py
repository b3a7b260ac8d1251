"""A handoff while background workers run, through the real CLI: their reports are read first.

The session that launched a worker is the only one its report can reach (the CLI ends the worker with
the session). So a handoff waits, as the end of a step does, until the coordinator has read every
report in the old session; only then is the handoff document asked for, and the new session starts
from it. A coordinator that goes on calling tools past the threshold is not interrupted while workers
are out (the interrupt would stop them too): its calls are refused until it ends its turn. A worker
that never reports is given up on past `worker_timeout`, and the step says so.
"""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import pytest

from flower import FailureReason, Runtime, coordinator
from flower._run.gate import HANDOFF_REASON, REFUSALS
from flower._run.settle import STATE_ENV
from flower.events import Event, HandoffDone, Result, SubagentFinished
from flower.testing import (
    RecordedRequest,
    ScriptedModel,
    Usage,
    agent,
    bash,
    hang_guard,
    prompt_too_long,
    reply,
)
from tests.e2e.background import ANALYST, REPORT, STATES, notified
from tests.facts import fact

pytestmark = pytest.mark.cli

MODEL = "claude-sonnet-4-6"  # the CLI reports a 200,000-token window: the threshold is 147,000
PAST = Usage(input_tokens=10, cache_read_input_tokens=150_000)
TAKEOVER = "You are taking over work in progress"
WRITE = "Write the handoff document now"
DOC = """## Doing now
Counting the files of data/.
## Decided
- The analyst's count stands: {count}.
## Dead ends
- none
## Next step
Report the count.
## Where things are
- nothing yet
"""


def lead() -> object:
    return coordinator("lead", "Goal: count the files of data/.", {"analyst": ANALYST}, model=MODEL)


class Crossing:
    """The coordinator launches the analyst, then ends a turn past the threshold; `then` answers the main
    thread's next requests. The analyst reports only once that turn has its result (`on_event` sees it),
    so the worker is still out when the turn ends."""

    def __init__(self, model: ScriptedModel, *then: object, crossing: object = None) -> None:
        self.answered = threading.Event()
        self.events: list[Event] = []
        launch = agent("analyst", "Count the files of data/.", background=True)
        crossing = crossing or reply("Waiting for the analyst.", usage=PAST)
        model.script("main", [launch, crossing, *then])
        model.script("analyst", [self.report])

    async def report(self, request: RecordedRequest) -> str:
        while not self.answered.is_set():
            await anyio.sleep(0.02)
        return REPORT

    def on_event(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, Result):
            self.answered.set()


@STATES
async def test_a_handoff_waits_until_the_coordinator_has_read_the_workers_report(
    scripted_model: ScriptedModel, workspace: Path, states: str
) -> None:
    """A turn ends past the threshold with a worker out: the old session's coordinator gets the report
    in the turn the CLI starts for it, then writes the handoff, and the new session's first request
    carries that document."""
    run = Crossing(
        scripted_model,
        reply("Noted: the analyst counted 42 files.", usage=PAST),  # the CLI's turn for the report
        DOC.format(count="42 files, the largest is data/big.csv"),  # asked for in the same session
        "FINAL: 42 files.",  # the next generation
    )

    rt = Runtime(workspace, env={STATE_ENV: states}, configure=scripted_model.attach)
    result = await rt.run(lead(), "Go.", on_event=run.on_event)

    assert result.ok and result.unreported == (), result.error
    assert result.text == "FINAL: 42 files." and len(result.retired) == 1
    main = scripted_model.requests("main")
    assert len(main) == 5, scripted_model.describe_log()
    read, handoff, takeover = main[2:]
    assert notified(read) and WRITE not in read and TAKEOVER not in read
    assert WRITE in handoff.last_user_text and notified(handoff)  # the report precedes the handoff turn
    assert TAKEOVER in str(takeover.messages[:2]) and "42 files, the largest is data/big.csv" in takeover
    assert not notified(takeover)  # a fresh session: the report reaches it only through the document
    (done,) = [e for e in run.events if isinstance(e, SubagentFinished)]
    assert (done.status, done.summary) == ("completed", REPORT)
    assert len([e for e in run.events if isinstance(e, HandoffDone)]) == 1


@STATES
async def test_a_reply_that_calls_tools_past_the_threshold_is_refused_until_its_workers_report(
    scripted_model: ScriptedModel, workspace: Path, states: str
) -> None:
    """Past the threshold with a worker out, a reply that calls a tool is not interrupted (the CLI's
    interrupt would stop the worker too, measured in the fallback test below): the call is refused with
    the handoff reason, the coordinator ends its turn, reads the worker's report in the turn the CLI
    starts for it, and only then is asked for the handoff document. Nothing is lost."""
    run = Crossing(
        scripted_model,
        reply("Ending my turn; waiting for the analyst.", usage=PAST),  # after the refusal
        reply("Noted: the analyst counted 42 files.", usage=PAST),  # the CLI's turn for the report
        DOC.format(count="42 files, the largest is data/big.csv"),
        "FINAL: 42 files.",
        crossing=reply(bash("echo more", description="more"), usage=PAST),  # refused
    )

    rt = Runtime(workspace, env={STATE_ENV: states}, configure=scripted_model.attach)
    result = await rt.run(lead(), "Go.", on_event=run.on_event)

    assert result.ok and result.unreported == (), result.error
    assert result.text == "FINAL: 42 files." and len(result.retired) == 1
    assert result.denials == ()  # flower's own refusal is not a denial of the run
    main = scripted_model.requests("main")
    assert len(main) == 6, scripted_model.describe_log()
    refused, read, handoff, takeover = main[2:]
    (call,) = [u for u in refused.tool_uses if u.get("name") == "Bash"]
    seen = refused.tool_result(str(call["id"]))
    assert seen.is_error and HANDOFF_REASON in seen.text, seen
    assert not notified(refused) and WRITE not in refused
    assert notified(read) and WRITE not in read  # the report, before the handoff request
    assert WRITE in handoff.last_user_text and notified(handoff)
    assert TAKEOVER in str(takeover.messages[:2]) and "42 files, the largest is data/big.csv" in takeover
    (done,) = [e for e in run.events if isinstance(e, SubagentFinished)]
    assert (done.status, done.summary) == ("completed", REPORT)


async def test_a_coordinator_that_keeps_calling_tools_after_refusals_is_interrupted_and_its_worker_lost(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    """The fallback: a coordinator that goes on calling tools after `REFUSALS` refused calls is
    interrupted, and the CLI's interrupt stops the background workers too: their reports cannot come, so
    the step fails naming them (before, the worker ended as `stopped` and the step was ok: a silent
    loss)."""
    more = [reply(bash(f"echo more {n}", description="more"), usage=PAST) for n in range(REFUSALS + 1)]
    scripted_model.script(
        "main",
        [
            agent("analyst", "Count the files of data/.", background=True),
            *more,  # the first REFUSALS are refused, the next one is interrupted
            DOC.format(count="unknown"),
            "FINAL: counted without the analyst.",
        ],
    )
    scripted_model.script("analyst", [reply("never seen", delay=hang_guard())])
    events: list[Event] = []
    rt = Runtime(workspace, configure=scripted_model.attach)

    result = await rt.run(lead(), "Go.", on_event=events.append)

    (ended,) = [e for e in events if isinstance(e, SubagentFinished)]
    fact(
        ended.status == "stopped",
        "§3.2",
        f"an interrupt of the main thread's turn stops its background workers (status {ended.status!r})",
    )
    assert not result.ok and result.unreported == (ended.task_id,), result.error
    assert result.reason is FailureReason.UNREPORTED
    assert "interrupt at the handoff threshold" in ended.summary
    error = result.error or ""
    assert "never reported" in error and "analyst" in error and "interrupt" in error
    assert result.text == "FINAL: counted without the analyst." and len(result.retired) == 1
    main = scripted_model.requests("main")
    assert len(main) == 2 + REFUSALS + 2, scripted_model.describe_log()
    last_refused = main[1 + REFUSALS]
    refusals = [r for r in last_refused.tool_results if r.tool_name == "Bash"]
    assert len(refusals) == REFUSALS and all(HANDOFF_REASON in r.text for r in refusals)
    handoff, takeover = main[-2:]
    assert WRITE in handoff.last_user_text and TAKEOVER in str(takeover.messages[:2])


async def test_a_worker_that_never_reports_is_given_up_on_at_the_handoff_past_the_hang_guard(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    """The wait before a handoff has the same guard: past `worker_timeout` of silence the session hands
    off without the report (the CLI ends the worker with it), and the step fails naming the worker and
    the guard; the next generation does not wait for a report that cannot come."""
    scripted_model.script(
        "main",
        [
            agent("analyst", "Count.", background=True),
            reply("Waiting for the analyst.", usage=PAST),
            DOC.format(count="unknown"),
            "FINAL: counted without the analyst.",
        ],
    )
    scripted_model.script("analyst", [reply("never seen", delay=hang_guard())])
    events: list[Event] = []
    rt = Runtime(workspace, worker_timeout=3, configure=scripted_model.attach)

    result = await rt.run(lead(), "Go.", on_event=events.append)

    (ended,) = [e for e in events if isinstance(e, SubagentFinished)]
    assert len([e for e in events if isinstance(e, HandoffDone)]) == 1
    assert result.text == "FINAL: counted without the analyst." and len(result.retired) == 1
    assert not result.ok and result.unreported == (ended.task_id,) and ended.status == "killed"
    assert result.reason is FailureReason.UNREPORTED  # the handoff went ahead without it: no stall
    assert "handed off" in ended.summary and "worker_timeout" in ended.summary
    error = result.error or ""
    assert "never reported" in error and "analyst" in error and "worker_timeout" in error
    handoff, takeover = scripted_model.requests("main")[2:]
    assert WRITE in handoff.last_user_text and not notified(handoff)
    assert TAKEOVER in str(takeover.messages[:2])


async def test_a_report_turn_refused_as_too_long_goes_to_the_next_session_in_the_degraded_handoff(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Waiting costs context: the report's turn may cross the CLI's refusal line (the threshold leaves
    30k tokens below it). The session then overflows without having read the report, and the degraded
    handoff flower writes carries the report to the next session."""
    run = Crossing(scripted_model, prompt_too_long(), "FINAL: 42 files.")  # the report's turn is refused

    rt = Runtime(workspace, configure=scripted_model.attach)
    result = await rt.run(lead(), "Go.", on_event=run.on_event)

    assert result.ok and result.unreported == () and len(result.retired) == 1, result.error
    refused, takeover = scripted_model.requests("main")[2:]
    assert notified(refused) and TAKEOVER in str(takeover.messages[:2])
    assert REPORT in takeover and "The reports of its background workers" in takeover
