"""`delegate_guard`: the delegation wall (layer 1).

A PreToolUse hook. A call from the main thread (its hook input has no `agent_id`) is refused unless the
tool is one of the coordinator's own, an MCP tool, or one the CLI adds for its own protocol (`CLI_TOOLS`:
`StructuredOutput`, `ToolSearch`...); Bash passes only when `glance_run` accepts it (glance: the parser,
the user's `Bash(...)` deny rules, and the jail, or the core commands where there is no jail), and runs as
`glance_run(...).command` (`updatedInput`): inside the jail, git with its read-only options. The refusal
shows the way: delegate with the Agent tool, goal and acceptance criteria in the mandate, long outputs in
the workbench's `artifacts/`, only paths and conclusions back. Subagent calls always pass.

It fails closed: if deciding raises, the call is refused and the error logged.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from claude_agent_sdk import HookContext
from claude_agent_sdk.types import HookCallback, HookJSONOutput

from .._errors import SpecError
from .._util.calls import deny
from .._util.check import checked
from ..glance import BashRules, glance_run
from ._tools import CLI_TOOLS, COORDINATOR_TOOLS, HANDS_ON, check_tools, is_mcp_tool

__all__ = ["DELEGATE_REASON", "delegate_guard"]

logger = logging.getLogger("flower.delegate")

DELEGATE_REASON = (
    "flower: the coordinator does not {action}. Delegate it: call the Agent tool with a worker, put "
    "the goal and the acceptance criteria in the mandate, and have the worker write long outputs to "
    "{artifacts} and reply with paths and conclusions only."
)
"""The refusal, with `{action}` and `{artifacts}` filled in; `delegate_guard(reason=...)` overrides it."""

_NO_ARTIFACTS = "a file (not its reply)"


def _run_as(tool_input: Mapping[str, Any], command: str) -> HookJSONOutput:
    """Let the call through with `command` in place of the model's (jailed); permissions unchanged."""
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "updatedInput": {**tool_input, "command": command},
        }
    }


@checked
def delegate_guard(
    *,
    artifacts: str | Path | None = None,
    glance: bool = True,
    allowed: Iterable[str] = COORDINATOR_TOOLS,
    reason: str = DELEGATE_REASON,
    rules: BashRules | None = None,
) -> HookCallback:
    """Build the PreToolUse hook of the delegation wall; install it with matcher `None` (every tool).

    - `artifacts`: the real path of the workbench's `artifacts/`, named in the refusal.
    - `glance`: let the main thread run a Bash command that `is_ephemeral` accepts.
    - `allowed`: the main thread's own tools (hands-on tools are refused whatever this says; MCP tools
      pass, since they were given to this agent on purpose, and so do the CLI's own protocol tools,
      `flower.CLI_TOOLS`, which the CLI adds itself and which never do hands-on work).
    - `rules`: where the user's `Bash(...)` permission rules are (`BashRules.from_options`): a glance runs
      rewritten, so the CLI no longer matches them; the guard matches the model's command instead.
    """
    return _delegate_guard(artifacts=artifacts, glance=glance, allowed=allowed, reason=reason, rules=rules)


def _delegate_guard(
    *,
    artifacts: str | Path | None,
    glance: bool,
    allowed: Iterable[str],
    reason: str,
    rules: BashRules | None,
) -> HookCallback:
    # undecorated, so that mutation testing (tools/mutation.py) reaches it: mutmut leaves a
    # decorated function alone
    own = frozenset(check_tools(allowed, owner="delegate_guard: allowed")) - HANDS_ON
    where = f"`{Path(artifacts)}`" if artifacts is not None else _NO_ARTIFACTS
    if "{action}" not in reason:
        raise SpecError("delegate_guard: reason must contain {action} (and may contain {artifacts})")

    def refuse(action: str) -> HookJSONOutput:
        return deny(reason.format(action=action, artifacts=where))

    def decide(data: Mapping[str, Any]) -> HookJSONOutput:
        if data.get("agent_id"):
            return {}
        tool = data.get("tool_name")
        if not isinstance(tool, str):
            return refuse("use an unnamed tool")
        if tool in own or tool in CLI_TOOLS or is_mcp_tool(tool):
            return {}
        if tool == "Bash" and glance:
            tool_input = data.get("tool_input") or {}
            command = tool_input.get("command")
            if not isinstance(command, str):
                return refuse("run a Bash call without a command")
            cwd = data.get("cwd")
            verdict = glance_run(command, cwd=cwd if isinstance(cwd, str) else None, rules=rules)
            if verdict.allowed:
                return {} if verdict.command == command else _run_as(tool_input, verdict.command)
            shown = command if len(command) <= 120 else command[:117] + "..."
            return refuse(f"run `{shown}` itself, as it is not a read-only glance ({verdict.reason})")
        return refuse(f"use {tool} itself")

    async def guard(input_data: Any, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
        try:
            return decide(input_data)
        except Exception:
            logger.exception("delegate_guard failed; refusing the call")
            return deny(
                "flower: the delegation guard could not decide on this call, so it was refused. Delegate it."
            )

    return guard
