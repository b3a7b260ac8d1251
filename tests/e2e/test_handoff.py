"""Handoff through the real CLI, driven by scripted usage numbers on a 200k-token model."""

from __future__ import annotations

from pathlib import Path

import pytest

from flower import FailureReason, HandoffPolicy, Runtime
from flower.events import HandoffDone, HandoffWarning
from flower.testing import RecordedRequest, ScriptedModel, Usage, bash, prompt_too_long, reply
from tests.e2e.marathon import TASK, first_user_text, lead, marathon

pytestmark = pytest.mark.cli


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
