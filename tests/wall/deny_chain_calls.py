"""Hooks that allow or deny, and the tool call a deny chain answers."""

from __future__ import annotations

from typing import Any

import anyio


def deny(reason: str, delay: float = 0.0) -> Any:
    async def hook(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        await anyio.sleep(delay)
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }

    return hook


async def allow(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
    return {}


def call(tool: str = "Write", **extra: str) -> dict[str, Any]:
    return {
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": {},
        "tool_use_id": "toolu_1",
        **extra,
    }
