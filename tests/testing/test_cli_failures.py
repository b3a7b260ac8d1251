"""Scripted failures reach the real CLI as the API's would: HTTP errors, drops, stream errors, overflow."""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_agent_sdk import SystemMessage

from flower.testing import (
    ScriptedModel,
    ScriptTimeout,
    UnconsumedSteps,
    UnexpectedRequest,
    Usage,
    bash,
    drop_connection,
    http_error,
    prompt_too_long,
    reply,
    stream_error,
)
from tests.facts import fact

pytestmark = pytest.mark.cli


def retries(run) -> list[dict]:  # type: ignore[no-untyped-def]
    return [m.data for m in run.of_type(SystemMessage) if m.subtype == "api_retry"]


async def test_529_is_retried(scripted_model: ScriptedModel, workspace: Path) -> None:
    scripted_model.script("main", [http_error(529), "after the retry"])

    run = await scripted_model.run("Go", cwd=workspace)

    assert run.text == "after the retry"
    first, second = scripted_model.requests("main")
    assert first.answer == "http 529" and second.turn == first.turn == 0
    fact(second.received_at - first.received_at > 0.3, "§3.1", "a 529 is retried after a backoff (~0.5 s)")
    fact(
        [r["error_status"] for r in retries(run)] == [529],
        "§3.1",
        "each retry yields SystemMessage(subtype='api_retry') with error_status",
    )


async def test_429_and_500_are_retried(scripted_model: ScriptedModel, workspace: Path) -> None:
    scripted_model.script("main", [http_error(429, retry_after=0), http_error(500), "ok"])

    run = await scripted_model.run("Go", cwd=workspace)

    assert run.text == "ok"
    fact([r["error_status"] for r in retries(run)] == [429, 500], "§3.1", "429 and 500 are retried")


async def test_a_dropped_connection_is_retried(scripted_model: ScriptedModel, workspace: Path) -> None:
    scripted_model.script("main", [drop_connection(), drop_connection(after_start=True), "reconnected"])

    run = await scripted_model.run("Go", cwd=workspace)

    assert run.text == "reconnected"
    assert len(scripted_model.requests("main")) == 3


async def test_a_mid_stream_error_falls_back_to_json(scripted_model: ScriptedModel, workspace: Path) -> None:
    scripted_model.script("main", [stream_error(), bash("echo JSON-PATH"), "done"])

    run = await scripted_model.run("Go", cwd=workspace)

    assert run.text == "done"
    streamed, fallback, after = scripted_model.requests("main")
    fact(
        streamed.stream and not fallback.stream,
        "§3.1",
        "after an SSE event:error the CLI retries the same turn with stream:false",
    )
    assert fallback.turn == 0 and after.tool_results[0].text == "JSON-PATH"


async def test_persistent_errors_end_the_run_with_an_error(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", [http_error(500)] * 2)

    run = await scripted_model.run("Go", cwd=workspace, env={"CLAUDE_CODE_MAX_RETRIES": "1"})

    fact(run.error is not None, "§3.1", "query() raises ResultError once API retries are exhausted")
    assert run.result is not None and run.result.is_error
    fact("API Error: 500" in run.text, "§3.1", "the error result text starts with 'API Error: <status>'")


async def test_reactive_overflow_sends_a_compaction_request(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", [bash("echo step"), prompt_too_long(), "continued after compaction"])
    scripted_model.script("compact", ["<analysis>a</analysis>\n<summary>SCRIPTED-SUMMARY</summary>"])

    run = await scripted_model.run("Go", cwd=workspace)

    assert run.text == "continued after compaction"
    assert [r.caller for r in scripted_model.requests()] == ["main", "main", "compact", "main"]
    fact(
        "SCRIPTED-SUMMARY" in scripted_model.request("main", -1),
        "§5",
        "a 400 prompt-too-long makes the CLI compact (a summary request) and continue from the summary",
    )


async def test_an_unscripted_request_fails_with_its_summary(workspace: Path) -> None:
    with pytest.raises(UnexpectedRequest) as caught:
        async with ScriptedModel(main=[]) as model:
            await model.run("A prompt nobody scripted", cwd=workspace)
    (summary,) = caught.value.requests
    assert "caller=main" in summary and "A prompt nobody scripted" in summary
    assert "no step left" in summary
    assert len(model.requests()) == 1  # the CLI did not retry the error reply


async def test_leftover_steps_fail_on_exit(workspace: Path) -> None:
    with pytest.raises(UnconsumedSteps, match="main: 1"):
        async with ScriptedModel(main=["used", "never used"]) as model:
            await model.run("Go", cwd=workspace)


async def test_a_run_that_outlives_its_timeout_is_stopped(workspace: Path) -> None:
    async with ScriptedModel(main=[reply("slow", delay=30)], strict=False) as model:
        with pytest.raises(ScriptTimeout, match="did not finish within 3"):
            await model.run("Go", cwd=workspace, timeout=3)


def test_sync_use(tmp_path: Path) -> None:
    with ScriptedModel(main=[reply("sync works", usage=Usage(input_tokens=100))]) as model:
        run = model.run_sync("Go", cwd=tmp_path)
        assert run.text == "sync works"
        assert len(model.wait_for_sync(1, caller="main", timeout=1)) == 1
        with pytest.raises(ScriptTimeout):
            model.wait_for_sync(2, timeout=0.2)
