"""Calling the delegation guard as the CLI would, and reading its answer."""

from __future__ import annotations

import anyio

from flower._wall.delegate import DELEGATE_REASON


def decide(guard, data) -> dict:  # type: ignore[no-untyped-def]
    return anyio.run(guard, data, "toolu_1", {})


def denied(result: dict) -> bool:
    return result.get("hookSpecificOutput", {}).get("permissionDecision") == "deny"


def bash(command: str, description: str | None = None, **extra: str) -> dict:
    tool_input = {"command": command} | ({"description": description} if description else {})
    return {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": tool_input, **extra}


def refusal(action: str, artifacts: str = "a file (not its reply)") -> dict:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": DELEGATE_REASON.format(action=action, artifacts=artifacts),
        }
    }
