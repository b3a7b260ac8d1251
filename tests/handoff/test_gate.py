"""The handoff gate's decisions, on messages built as the SDK builds them (its runs through the CLI are in
tests/e2e/test_background_handoff.py)."""

from __future__ import annotations

from typing import Any, cast

import anyio
from claude_agent_sdk import (
    AssistantMessage,
    HookContext,
    ResultMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from claude_agent_sdk.types import HookInput, HookJSONOutput

from flower._run.gate import HANDOFF_REASON, REFUSALS, Gate


def reply(*ids: str, parent: str | None = None) -> AssistantMessage:
    calls = [ToolUseBlock(id=i, name="Bash", input={"command": "ls"}) for i in ids]
    return AssistantMessage(content=[TextBlock(text="x"), *calls], model="m", parent_tool_use_id=parent)


def result(call: str) -> UserMessage:
    return UserMessage(content=[ToolResultBlock(tool_use_id=call, content="ok")], parent_tool_use_id=None)


def end() -> ResultMessage:
    return ResultMessage(
        subtype="success", duration_ms=1, duration_api_ms=1, is_error=False, num_turns=1, session_id="s1"
    )


async def decide(gate: Gate, call: str, agent_id: str | None = None) -> HookJSONOutput:
    (matcher,) = gate.hooks()["PreToolUse"]
    assert matcher.matcher is None
    data: dict[str, Any] = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": call}
    if agent_id:
        data["agent_id"] = agent_id
    context = cast(HookContext, {"signal": None})
    return await matcher.hooks[0](cast(HookInput, data), call, context)


def refused(answer: HookJSONOutput) -> bool:
    specific = cast(dict[str, Any], answer).get("hookSpecificOutput") or {}
    return bool(specific.get("permissionDecision") == "deny")


async def test_a_call_is_decided_once_the_run_has_read_its_reply_so_the_crossing_call_is_refused() -> None:
    gate = Gate()
    answers: list[HookJSONOutput] = []
    async with anyio.create_task_group() as tasks:

        async def hook() -> None:
            answers.append(await decide(gate, "c1"))

        tasks.start_soon(hook)
        await anyio.sleep(0)
        assert not answers  # waiting for the run to read the reply
        message = reply("c1")
        assert gate.holds(message, workers=1)
        gate.saw(message)
    (answer,) = answers
    assert refused(answer) and HANDOFF_REASON in str(answer) and gate.refused == {"c1"}


async def test_workers_calls_always_pass_and_an_open_gate_lets_the_coordinator_through() -> None:
    gate = Gate()
    gate.saw(reply("c1"))
    assert await decide(gate, "c1") == {}
    assert gate.holds(reply("c2"), workers=1)
    assert await decide(gate, "w1", agent_id="a1") == {}  # a worker's call, not waited on
    gate.open()  # the handoff turn
    gate.saw(reply("c3"))
    assert await decide(gate, "c3") == {} and not gate.refused


def test_no_worker_out_or_too_many_refusals_in_a_turn_fall_back_to_the_interrupt() -> None:
    gate = Gate()
    assert not gate.holds(reply("c0"), workers=0)  # the interrupt loses nothing
    for n in range(REFUSALS):
        assert gate.holds(reply(f"c{n}"), workers=1)
    assert not gate.holds(reply("late"), workers=1)
    gate.saw(end())  # a new turn (the CLI's turn for a report) has its own count
    assert gate.holds(reply("next"), workers=1)


async def test_a_held_call_that_ran_anyway_means_the_hook_is_not_in_effect() -> None:
    gate = Gate()
    message = reply("c1", "c2")
    assert gate.holds(message, workers=1)
    gate.saw(message)
    assert refused(await decide(gate, "c1"))
    gate.saw(result("c1"))
    assert not gate.bypassed
    gate.saw(result("c2"))  # its hook never ran: the call went through
    assert gate.bypassed and not gate.holds(reply("c3"), workers=1)
