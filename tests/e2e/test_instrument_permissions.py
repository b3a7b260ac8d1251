"""`instrument(options, coordinator=True)` on the SDK's own permissions, through the real CLI: a glance the
wall rewrote into the jail's launcher runs without a prompt under every permission mode, and the app's
`can_use_tool` callback and `Bash(...)` rules are asked about the command the model wrote, never the
launcher; a refusal of theirs holds. Asserted on what the model read next (the request log)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
)

from flower import instrument
from flower._glance import jail_support
from flower._glance.jail import LAUNCHER
from flower.testing import ScriptedModel, bash

pytestmark = [
    pytest.mark.cli,
    pytest.mark.skipif(not jail_support().available, reason=f"no glance jail here: {jail_support().reason}"),
]

LISTING = "listed-here.txt"


async def session(model: ScriptedModel, options: ClaudeAgentOptions, workspace: Path, **knobs: Any) -> None:
    """The app's options instrumented as a coordinator, one prompt through a `ClaudeSDKClient` (a
    `can_use_tool` callback needs one)."""
    instrumented = instrument(options, workspace=workspace, coordinator=True, **knobs)
    async with ClaudeSDKClient(model.attach(instrumented)) as client:
        await client.query("Look around.")
        async for message in client.receive_response():
            if isinstance(message, ResultMessage):
                assert not message.is_error, message.result


def plain(workspace: Path, **fields: Any) -> ClaudeAgentOptions:
    """The app's options as a newcomer writes them: the SDK's default permission mode."""
    return ClaudeAgentOptions(cwd=str(workspace), setting_sources=[], **fields)


@pytest.mark.parametrize("mode", [None, "default", "acceptEdits", "dontAsk", "bypassPermissions"])
async def test_a_glance_is_answered_under_every_permission_mode(
    scripted_model: ScriptedModel, workspace: Path, mode: str | None
) -> None:
    (workspace / LISTING).write_text("x")
    scripted_model.script(
        "main", [bash("ls"), bash("git status 2>&1 | head -1; wc -c listed-here.txt"), "done"]
    )
    await session(scripted_model, plain(workspace, permission_mode=mode), workspace)

    first, second = scripted_model.request("main", -1).tool_results
    assert not first.is_error and LISTING in first.text
    assert "requires approval" not in first.text + second.text
    assert "1 listed-here.txt" in second.text


async def test_the_apps_callback_is_asked_about_the_models_command_and_its_deny_holds(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / LISTING).write_text("x")
    asked: list[tuple[str, dict[str, Any]]] = []

    async def can_use_tool(tool: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append((tool, dict(tool_input)))
        if "git" in str(tool_input.get("command")):
            return PermissionResultDeny(message="APP: no git here")
        return PermissionResultAllow()

    scripted_model.script("main", [bash("ls"), bash("git log -1"), "done"])
    await session(scripted_model, plain(workspace, can_use_tool=can_use_tool), workspace)

    assert [(tool, given["command"]) for tool, given in asked] == [("Bash", "ls"), ("Bash", "git log -1")]
    assert not any(str(LAUNCHER) in json.dumps(given) for _, given in asked)
    listed, refused = scripted_model.request("main", -1).tool_results
    assert LISTING in listed.text and not listed.is_error
    assert refused.is_error and "APP: no git here" in refused.text


async def test_the_apps_callback_may_change_the_command_and_the_wall_checks_the_new_one(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / LISTING).write_text("x")

    async def can_use_tool(tool: str, tool_input: dict[str, Any], context: Any) -> Any:
        if tool_input["command"] == "ls":
            return PermissionResultAllow(updated_input={**tool_input, "command": "ls -1 && echo APP-CHANGED"})
        return PermissionResultAllow(updated_input={**tool_input, "command": "touch sneaked.txt"})

    scripted_model.script("main", [bash("ls"), bash("pwd"), "done"])
    await session(scripted_model, plain(workspace, can_use_tool=can_use_tool), workspace)

    changed, refused = scripted_model.request("main", -1).tool_results
    assert "APP-CHANGED" in changed.text and LISTING in changed.text
    assert refused.is_error and "`touch sneaked.txt`" in refused.text
    assert not (workspace / "sneaked.txt").exists()


@pytest.mark.parametrize("where", ["settings", "disallowed_tools"])
async def test_the_apps_deny_rule_holds_for_the_models_command(
    scripted_model: ScriptedModel, workspace: Path, where: str
) -> None:
    (workspace / LISTING).write_text("x")
    fields: dict[str, Any] = (
        {"settings": json.dumps({"permissions": {"deny": ["Bash(ls:*)"]}})}
        if where == "settings"
        else {"disallowed_tools": ["Bash(ls:*)"]}
    )
    scripted_model.script("main", [bash("ls"), bash("pwd"), "done"])
    await session(scripted_model, plain(workspace, **fields), workspace)

    refused, allowed = scripted_model.request("main", -1).tool_results
    assert refused.is_error and "permission rule `Bash(ls:*)`" in refused.text and LISTING not in refused.text
    assert not allowed.is_error and str(workspace.resolve()) in allowed.text


async def test_an_own_steps_command_is_asked_about_as_the_model_wrote_it(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    asked: list[str] = []

    async def can_use_tool(tool: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append(str(tool_input.get("command")))
        return PermissionResultDeny(message="APP: not that") if "rm" in asked[-1] else PermissionResultAllow()

    scripted_model.script("main", [bash("rm -f nothing.txt"), bash("touch made.txt && echo MADE"), "done"])
    await session(scripted_model, plain(workspace, can_use_tool=can_use_tool), workspace, own_steps=2)

    assert asked == ["rm -f nothing.txt", "touch made.txt && echo MADE"]
    refused, made = scripted_model.request("main", -1).tool_results
    assert refused.is_error and "APP: not that" in refused.text
    assert "MADE" in made.text and (workspace / "made.txt").exists()
