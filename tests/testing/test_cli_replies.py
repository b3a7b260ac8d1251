"""The scripted model drives the real CLI: text, tool calls, thinking, usage, dynamic steps."""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_agent_sdk import AssistantMessage, TextBlock, ThinkingBlock, ToolUseBlock

from flower.testing import ScriptedModel, Usage, bash, reply, tool_use
from tests.facts import fact

pytestmark = pytest.mark.cli


async def test_text_reply(scripted_model: ScriptedModel, workspace: Path) -> None:
    scripted_model.script("main", ["Hello from the script."])

    run = await scripted_model.run("Say hello", cwd=workspace)

    assert run.error is None
    assert run.text == "Hello from the script."
    (request,) = scripted_model.requests()
    assert request.caller == "main" and request.index == 0 and request.turn == 0
    fact(request.path.startswith("/v1/messages?beta=true"), "§0", "the CLI posts to /v1/messages?beta=true")
    fact(request.stream, "§0", "the CLI asks for an SSE stream")
    fact("Say hello" in request.last_user_text, "§1", "the prompt is the last user message")
    fact(
        any(m.get("role") == "system" for m in request.messages),
        "§0",
        "messages contain role:system entries (per-turn-control beta)",
    )
    fact(
        request.system_text.startswith("x-anthropic-billing-header:")
        and "cc_is_subagent" not in request.system_text,
        "§1",
        "system block 0 is the billing header, without cc_is_subagent on the main thread",
    )


async def test_bash_runs_for_real_and_its_output_reaches_the_next_request(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", [bash("echo BASH-RAN > proof.txt && echo OUT-$((6*7))"), "done"])

    run = await scripted_model.run("Run it", cwd=workspace)

    assert run.text == "done"
    assert (workspace / "proof.txt").read_text() == "BASH-RAN\n"
    (result,) = scripted_model.request("main", 1).tool_results
    assert result.tool_name == "Bash" and result.text == "OUT-42" and not result.is_error
    assert "OUT-42" not in scripted_model.request("main", 0)


async def test_parallel_calls_and_thinking(scripted_model: ScriptedModel, workspace: Path) -> None:
    scripted_model.script(
        "main",
        [
            reply("Two at once.", bash("echo ONE"), bash("echo TWO"), thinking="I should run both."),
            "both done",
        ],
    )

    run = await scripted_model.run("Go", cwd=workspace)

    results = {r.text for r in scripted_model.request("main", 1).tool_results}
    assert results == {"ONE", "TWO"}
    blocks = [b for m in run.of_type(AssistantMessage) for b in m.content]
    assert any(isinstance(b, ThinkingBlock) and b.thinking == "I should run both." for b in blocks)
    assert sum(isinstance(b, ToolUseBlock) for b in blocks) == 2
    assert any(isinstance(b, TextBlock) and b.text == "Two at once." for b in blocks)


async def test_usage_numbers_are_reported_back(scripted_model: ScriptedModel, workspace: Path) -> None:
    scripted_model.script(
        "main",
        [
            reply(bash("echo hi"), usage=Usage(input_tokens=3_000, output_tokens=20)),
            reply("done", usage=Usage(input_tokens=10, cache_read_input_tokens=45_000, output_tokens=7)),
        ],
    )

    run = await scripted_model.run("Go", cwd=workspace)

    assert run.result is not None and run.result.usage is not None
    usage = run.result.usage
    fact(usage["input_tokens"] == 3_010, "§5", "ResultMessage.usage sums input_tokens over the turns")
    fact(usage["cache_read_input_tokens"] == 45_000, "§5", "ResultMessage.usage sums cache reads")
    fact(usage["output_tokens"] == 27, "§5", "ResultMessage.usage sums output_tokens")


async def test_a_reply_reports_the_output_it_produced(scripted_model: ScriptedModel, workspace: Path) -> None:
    long = "word " * 400  # 2,000 chars of text: about 500 output tokens
    scripted_model.script("main", [reply(long, thinking="t" * 800)])

    run = await scripted_model.run("Go", cwd=workspace)

    first = scripted_model.request("main", 0)
    assert first.usage is not None and first.output_tokens == first.usage["output_tokens"]
    assert 690 <= first.output_tokens <= 760  # (2,000 + 800 chars + the blocks' JSON) / 4
    assert run.result is not None and run.result.usage is not None
    assert run.result.usage["output_tokens"] == first.output_tokens


async def test_a_dynamic_step_reads_the_tool_result(scripted_model: ScriptedModel, workspace: Path) -> None:
    (workspace / "data.txt").write_text("alpha\nbeta\ngamma\n")

    def count_lines(request):  # type: ignore[no-untyped-def]
        lines = request.tool_results[-1].text.strip()
        return f"The file has {lines} lines."

    scripted_model.script("main", [bash("wc -l < data.txt"), count_lines])

    run = await scripted_model.run("How many lines?", cwd=workspace)

    assert run.text == "The file has 3 lines."


async def test_a_callable_script_answers_every_request(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    def script(request):  # type: ignore[no-untyped-def]
        if request.turn < 3:
            return bash(f"echo turn-{request.turn}")
        return "finished after " + ", ".join(r.text for r in request.tool_results)

    scripted_model.script("main", script)

    run = await scripted_model.run("Loop", cwd=workspace)

    assert run.text == "finished after turn-0, turn-1, turn-2"
    assert [r.turn for r in scripted_model.requests("main")] == [0, 1, 2, 3]


async def test_any_tool_by_name(scripted_model: ScriptedModel, workspace: Path) -> None:
    (workspace / "notes.md").write_text("# title\nTODO: one\n")
    scripted_model.script(
        "main", [tool_use("Grep", pattern="TODO", path=str(workspace), output_mode="content"), "ok"]
    )

    await scripted_model.run("Find TODOs", cwd=workspace, tools=["Grep"])

    (result,) = scripted_model.request("main", 1).tool_results
    assert "TODO: one" in result.text
    offered = set(scripted_model.request("main", 0).tool_names) - {"DeferredToolPlaceholder"}
    fact(
        offered == {"Grep"},
        "§6",
        f"tools=[...] sets the tools offered (plus DeferredToolPlaceholder); got {offered}",
    )
