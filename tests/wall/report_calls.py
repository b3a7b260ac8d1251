"""Calling the report hooks as the CLI would: a stop, a finished worker."""

from __future__ import annotations

from typing import Any


def stop(
    report: str | None, *, again: bool = False, agent: str = "analyst", background: list[Any] | None = None
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "hook_event_name": "SubagentStop",
        "session_id": "s1",
        "transcript_path": "/nonexistent/s1.jsonl",
        "cwd": "/ws",
        "stop_hook_active": again,
        "agent_id": "a1b2c3",
        "agent_type": agent,
        "agent_transcript_path": "/nonexistent/agent-a1b2c3.jsonl",
    }
    if background is not None:
        data["background_tasks"] = background
    if report is not None:
        data["last_assistant_message"] = report
    return data


async def call(hook: Any, data: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = await hook(data, None, {"signal": None})
    return result


def done(report: Any, *, status: str = "completed", tool: str = "Agent") -> dict[str, Any]:
    """A PostToolUse input of a finished foreground Agent call, shaped as the CLI sends it."""
    content = [{"type": "text", "text": report}] if isinstance(report, str) else report
    return {
        "hook_event_name": "PostToolUse",
        "tool_name": tool,
        "tool_input": {"prompt": "Find.", "subagent_type": "analyst"},
        "tool_response": {"status": status, "agentId": "a1b2c3", "agentType": "analyst", "content": content},
        "tool_use_id": "toolu_1",
    }
