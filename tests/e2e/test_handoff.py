"""Handoff through the real CLI, driven by scripted usage numbers on a 200k-token model."""

from __future__ import annotations

from pathlib import Path

import pytest

from flower import FailureReason, HandoffPolicy, Runtime, coordinator, worker
from flower.events import HandoffDone, HandoffWarning
from flower.testing import RecordedRequest, ScriptedModel, Usage, bash, prompt_too_long, reply

pytestmark = pytest.mark.cli

MODEL = "claude-sonnet-4-6"  # the CLI reports a 200,000-token window: threshold 147,000, warning at 127,000
TASK = "ORIGINAL-TASK: count the widgets. Constraint from the user: never touch vendor/."
DOC = """## Doing now
Counting widgets; half done.
## Decided
- Use scripts/count.sh (it is fast). Constraint from the user: never touch vendor/.
- The build id is {build}.
## Dead ends
- grep -c over the tree: too slow.
## Next step
Run scripts/count.sh on src/b.
## Where things are
- .flower/scripts/count.sh
"""


def lead() -> object:
    return coordinator("lead", "Goal: count widgets.", {"w": worker("Counts.", "You count.")}, model=MODEL)


def first_user_text(request: RecordedRequest) -> str:
    for message in request.messages:
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else " ".join(str(b.get("text", "")) for b in content)
    return ""


def marathon(crossings: int = 1, overflow_first: bool = False):  # type: ignore[no-untyped-def]
    """A main thread that grows past the threshold `crossings` times, writing its handoff when asked."""
    state = {"crossed": 0}

    def script(request: RecordedRequest):  # type: ignore[no-untyped-def]
        if "Write the handoff document now" in request.last_user_text:
            build = next((r.text for r in request.tool_results if r.text.startswith("BUILD-")), "unknown")
            return DOC.format(build=build)
        taking_over = "You are taking over work in progress" in first_user_text(request)
        if request.turn == 0:
            return reply(bash("echo BUILD-7731"), usage=Usage(input_tokens=3_000))
        if overflow_first and not taking_over:
            return prompt_too_long()
        if state["crossed"] < crossings:
            state["crossed"] += 1
            slow = "python3 -c 'import time; time.sleep(600)'"  # interrupted by the handoff, never done
            return reply(bash(slow), usage=Usage(input_tokens=10, cache_read_input_tokens=150_000))
        return "FINAL: 42 widgets"

    return script


async def test_a_run_past_the_threshold_hands_off_once(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", marathon())
    events: list[object] = []
    rt = Runtime(workspace, configure=scripted_model.attach)

    result = await rt.run(lead(), TASK, on_event=events.append)

    assert result.ok and result.text == "FINAL: 42 widgets", result.error
    (done,) = [e for e in events if isinstance(e, HandoffDone)]
    assert [type(e) for e in events if isinstance(e, HandoffWarning | HandoffDone)] == [
        HandoffWarning,
        HandoffDone,
    ]
    assert not done.degraded and done.reason == "threshold" and done.generation == 2
    assert done.context == 150_010 and result.peak_context == 150_010
    assert result.retired == (done.retired,) and result.session_id not in result.retired
    saved = workspace / ".flower" / "notes" / "handoff.md"
    assert saved.exists() and "BUILD-7731" in saved.read_text() and done.path == str(saved)

    fresh = next(r for r in scripted_model.requests("main") if "You are taking over" in first_user_text(r))
    assert fresh.turn == 0 and len([m for m in fresh.messages if m.get("role") == "assistant"]) == 0
    assert "BUILD-7731" in fresh  # a fact seen only by the old session crossed through the document
    assert "never touch vendor/" in fresh and "Run scripts/count.sh on src/b." in fresh
    assert "ORIGINAL-TASK" not in fresh  # the new session starts from the document, not the original prompt
    assert all(r.caller == "main" for r in scripted_model.requests())  # no compaction request, ever
    assert "DISABLE_AUTO_COMPACT" in str(rt.options(lead()).env)


async def test_an_overflow_gives_a_degraded_handoff_not_a_failure(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", marathon(crossings=0, overflow_first=True))
    events: list[object] = []

    result = await Runtime(workspace, configure=scripted_model.attach).run(
        lead(), TASK, on_event=events.append
    )

    assert result.ok and result.text == "FINAL: 42 widgets"
    (done,) = [e for e in events if isinstance(e, HandoffDone)]
    assert done.degraded and done.reason == "overflow"
    fresh = scripted_model.request("main", -1)
    assert "ORIGINAL-TASK" in fresh  # a degraded document carries the task as first given
    assert "Look before acting" in fresh and "echo BUILD-7731" in fresh  # and the last tool calls


async def test_the_generation_brake(scripted_model: ScriptedModel, workspace: Path) -> None:
    scripted_model.script("main", marathon(crossings=5))
    rt = Runtime(workspace, handoff=HandoffPolicy(max_generations=2), configure=scripted_model.attach)

    result = await rt.run(lead(), TASK)

    assert not result.ok and "max_generations=2" in (result.error or "")
    assert result.reason is FailureReason.GENERATION_LIMIT
    assert len(result.retired) == 2
    assert (workspace / ".flower" / "notes" / "handoff.md").exists()
    assert len(list((workspace / ".flower" / "notes" / "archive").glob("handoff-*.md"))) == 1


async def test_two_degraded_handoffs_in_a_row_stop_the_step(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    def always_overflow(request: RecordedRequest):  # type: ignore[no-untyped-def]
        if request.turn == 0:
            return reply(bash("echo BUILD-1"), usage=Usage(input_tokens=3_000))
        return prompt_too_long()

    scripted_model.script("main", always_overflow)

    result = await Runtime(workspace, configure=scripted_model.attach).run(lead(), TASK)

    assert not result.ok and "two handoffs in a row could not be written" in (result.error or "")
    assert result.reason is FailureReason.HANDOFF_FAILED
    assert len(result.retired) == 2


async def test_without_handoff_the_cli_compacts_itself(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script(
        "main", [reply(bash("echo a"), usage=Usage(input_tokens=3_000)), prompt_too_long(), "ok"]
    )
    scripted_model.script("compact", ["<summary>S</summary>"])

    result = await Runtime(workspace, handoff=False, configure=scripted_model.attach).run(lead(), TASK)

    assert result.ok and result.retired == ()
    assert "compact" in scripted_model.callers()
