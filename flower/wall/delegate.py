"""`delegate_guard`: the delegation wall (layer 1).

A PreToolUse hook. A call from the main thread (its hook input has no `agent_id`) is refused unless the
tool is one of the coordinator's own, an MCP tool, or one the CLI adds for its own protocol (`CLI_TOOLS`:
`StructuredOutput`, `ToolSearch`...); Bash passes only when `glance_run` accepts it (glance: the parser,
the user's `Bash(...)` deny rules, and the jail, or the core commands where there is no jail), and runs as
`glance_run(...).command` (`updatedInput`): inside the jail, git with its read-only options. The refusal
shows the way: delegate with the Agent tool, goal and acceptance criteria in the mandate, long outputs in
the workbench's `artifacts/`, only paths and conclusions back. Subagent calls always pass.

Own steps: the main thread may take `own_steps` hands-on calls (Write, Edit, NotebookEdit, a Bash that
is not a glance) in a row itself, each with at most `OWN_STEP_MAX_INPUT` chars of input. A delegation
has a fixed price (the mandate, the worker's own prompt and tools, its report and the hand-back) that a
one-off step does not repay: the report is about as long as the step's output, so no context is saved.
A loop still goes to a worker: any other call the main thread is allowed (a glance, a Read, an Agent
call) ends a row, and the call past `own_steps` in a row is refused. Rows are kept per session (the hook
input's `session_id`) and counted in the order the hooks are called, so of two hands-on calls in one
message the second is refused. What it does not stop: a loop of one step, one look, one step...

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

__all__ = ["DELEGATE_REASON", "OWN_STEP_MAX_INPUT", "delegate_guard"]

logger = logging.getLogger("flower.delegate")

DELEGATE_REASON = (
    "flower: the coordinator does not {action}. Delegate it: call the Agent tool with a worker, put "
    "the goal and the acceptance criteria in the mandate, and have the worker write long outputs to "
    "{artifacts} and reply with paths and conclusions only."
)
"""The refusal, with `{action}` and `{artifacts}` filled in; `delegate_guard(reason=...)` overrides it."""

_NO_ARTIFACTS = "a file (not its reply)"

OWN_STEP_MAX_INPUT = 2_000
"""At most this many chars of input (the Bash command, the Write content, the Edit new_string, the
NotebookEdit new_source) in a step the coordinator takes itself: an input stays in its context for good,
so a larger one is written by a worker."""

_INPUT = {"Bash": "command", "Write": "content", "Edit": "new_string", "NotebookEdit": "new_source"}
"""The input field of each hands-on tool that stays in the context."""


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
    own_steps: int = 1,
) -> HookCallback:
    """Build the PreToolUse hook of the delegation wall; install it with matcher `None` (every tool).

    - `artifacts`: the real path of the workbench's `artifacts/`, named in the refusal.
    - `glance`: let the main thread run a Bash command that `is_ephemeral` accepts.
    - `allowed`: the main thread's own tools (hands-on tools are refused whatever this says; MCP tools
      pass, since they were given to this agent on purpose, and so do the CLI's own protocol tools,
      `flower.CLI_TOOLS`, which the CLI adds itself and which never do hands-on work).
    - `rules`: where the user's `Bash(...)` permission rules are (`BashRules.from_options`): a glance runs
      rewritten, so the CLI no longer matches them; the guard matches the model's command instead.
    - `own_steps`: how many hands-on calls (Write, Edit, NotebookEdit, a Bash that is not a glance) the
      main thread may make in a row, each with at most `OWN_STEP_MAX_INPUT` chars of input; 0 refuses
      them all (the strict wall).
    """
    own = frozenset(check_tools(allowed, owner="delegate_guard: allowed")) - HANDS_ON
    where = f"`{Path(artifacts)}`" if artifacts is not None else _NO_ARTIFACTS
    if "{action}" not in reason:
        raise SpecError("delegate_guard: reason must contain {action} (and may contain {artifacts})")
    if own_steps < 0:
        raise SpecError(f"delegate_guard: own_steps must be 0 or more, got {own_steps}")
    in_a_row: dict[str, int] = {}
    """Per session: the hands-on calls the main thread made since its last other allowed call."""

    def refuse(action: str) -> HookJSONOutput:
        return deny(reason.format(action=action, artifacts=where))

    def own_step(session: str, tool: str, tool_input: Mapping[str, Any], strict: str) -> HookJSONOutput:
        """A hands-on call of the main thread: through when it is one of `own_steps` in a row with a
        small input; else refused (`strict` with the strict wall)."""
        text = tool_input.get(_INPUT[tool])
        if own_steps == 0 or not isinstance(text, str):
            return refuse(strict)
        what = f"`{_shown(text)}`" if tool == "Bash" else tool
        taken = in_a_row.get(session, 0)
        if taken >= own_steps:
            row = "a second hands-on step" if own_steps == 1 else f"more than {own_steps} hands-on steps"
            return refuse(
                f"take {row} in a row ({what}): a one-off step it may take itself, a series of them is a "
                "loop, a worker's job"
            )
        if len(text) > OWN_STEP_MAX_INPUT:
            return refuse(
                f"take a hands-on step with {len(text):,} chars of input ({what}) itself: an input stays "
                f"in its context for good, so its own steps take at most {OWN_STEP_MAX_INPUT:,}"
            )
        in_a_row[session] = taken + 1
        return {}

    def decide(data: Mapping[str, Any]) -> HookJSONOutput:
        if data.get("agent_id"):
            return {}
        tool = data.get("tool_name")
        if not isinstance(tool, str):
            return refuse("use an unnamed tool")
        session = str(data.get("session_id"))
        if tool in own or tool in CLI_TOOLS or is_mcp_tool(tool):
            in_a_row.pop(session, None)
            return {}
        if tool not in HANDS_ON:
            return refuse(f"use {tool} itself")
        tool_input = data.get("tool_input") or {}
        if tool == "Bash" and glance:
            command = tool_input.get("command")
            if not isinstance(command, str):
                return refuse("run a Bash call without a command")
            cwd = data.get("cwd")
            verdict = glance_run(command, cwd=cwd if isinstance(cwd, str) else None, rules=rules)
            if verdict.allowed:
                in_a_row.pop(session, None)
                return {} if verdict.command == command else _run_as(tool_input, verdict.command)
            strict = f"run `{_shown(command)}` itself, as it is not a read-only glance ({verdict.reason})"
            return own_step(session, tool, tool_input, strict)
        return own_step(session, tool, tool_input, f"use {tool} itself")

    async def guard(input_data: Any, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
        try:
            return decide(input_data)
        except Exception:
            logger.exception("delegate_guard failed; refusing the call")
            return deny(
                "flower: the delegation guard could not decide on this call, so it was refused. Delegate it."
            )

    return guard


def _shown(command: str) -> str:
    """A command as a refusal shows it: whole up to 120 chars, else its head and `...`."""
    return command if len(command) <= 120 else command[:117] + "..."
