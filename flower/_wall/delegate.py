"""`delegate_guard`: the delegation wall (layer 1).

A PreToolUse hook. A call from the main thread (its hook input has no `agent_id`) is refused unless the
tool is one of the coordinator's own, an MCP tool, or one the CLI adds for its own protocol (`CLI_TOOLS`:
`StructuredOutput`, `ToolSearch`...); Bash passes only when `glance_run` accepts it (glance: the parser,
the user's `Bash(...)` deny rules, and the jail, or the core commands where there is no jail), and runs as
`glance_run(...).command` (`updatedInput`): inside the jail, git with its read-only options. The refusal
shows the way: delegate with the Agent tool, goal and acceptance criteria in the mandate, long outputs in
the workbench's `artifacts/`, only paths and conclusions back. Subagent calls always pass.

Permissions: the wall approves the glance it rewrote (`permissionDecision: "allow"`), since the CLI would
otherwise judge the launcher, not the model's command ("This command requires approval" under the
default mode). It never approves what the app would refuse or ask about: the app's `Bash(...)` deny and
ask rules are matched against the model's command first, and the app's `can_use_tool` callback, when
given, is asked about the model's command (outside `bypassPermissions`, where the CLI asks nothing).

Own steps (opt-in, `own_steps > 0`; 0, the default, is the strict wall): the main thread may take
`own_steps` hands-on calls (Write, Edit, NotebookEdit, a Bash that is not a glance) per user turn
(`_turns`: a worker's report starting a turn is not one), each with at most `OWN_STEP_MAX_INPUT` chars of
input. A glance, a Read or a refusal does not give a step back. An own Bash step runs through
`own_run.py` (`_own`): the environment scrubbed to the jail's allow-list, the output cut at
`OWN_STEP_MAX_OUTPUT` characters (the rest in a file of `artifacts/`). A call refused for what it would
read (credentials, the environment: `GlanceVerdict.secret`, or a word of it that names a credential
store) is never an own step: that refusal is final in every mode, as is a match of the app's rules.

Inline first (opt-in, `inline_until=T`): while the session's context is under `T` tokens (`_inline`:
the usage of the reply that made the call, in its transcript), the main thread makes its hands-on calls
itself, with no count or input limit; a Bash one runs through the same scrubbing launcher as an own
step, its output whole (the CLI's own cap and flower's spill bound it, as any agent's). Once the session
reached `T`, the wall is strict for it. The refusals for secrets and the app's rules are final in that
phase too.

It fails closed: if deciding raises, the call is refused and the error logged.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from claude_agent_sdk import HookContext
from claude_agent_sdk.types import (
    CanUseTool,
    HookCallback,
    HookJSONOutput,
    PermissionResultAllow,
    PermissionResultDeny,
    ToolPermissionContext,
)

from .._errors import SpecError
from .._glance import BashRules, glance_run, glance_verdict
from .._util.calls import deny
from .._util.check import checked
from ._inline import Growth, check_inline_until
from ._own import OWN_STEP_MAX_INPUT, OWN_STEP_MAX_OUTPUT, own_command, secret_word
from ._tools import CLI_TOOLS, COORDINATOR_TOOLS, HANDS_ON, check_tools, is_mcp_tool
from ._turns import Turns

__all__ = [
    "DELEGATE_REASON",
    "INLINE_SESSION_REASON",
    "OWN_STEP_MAX_INPUT",
    "OWN_STEP_MAX_OUTPUT",
    "delegate_guard",
]

logger = logging.getLogger("flower.delegate")

DELEGATE_REASON = (
    "flower: the coordinator does not {action}. Delegate it: call the Agent tool with a worker, put "
    "the goal and the acceptance criteria in the mandate, and have the worker write long outputs to "
    "{artifacts} and reply with paths and conclusions only."
)
"""The refusal, with `{action}` and `{artifacts}` filled in; `delegate_guard(reason=...)` overrides it."""

INLINE_SESSION_REASON = (
    "flower: this session does not {action}. Go on without it, or end your turn if the task needs it: "
    "once this session has grown, the run hands the task to a coordinator, which delegates to workers."
)
"""The refusal in a coordinator's inline session (`coordinator(inline_until=...)` under a `Runtime`), which
has no Agent tool to delegate with."""

_NO_ARTIFACTS = "a file (not its reply)"

_INPUT = {"Bash": "command", "Write": "content", "Edit": "new_string", "NotebookEdit": "new_source"}
"""The input field of each hands-on tool that stays in the context."""

_Rewrite = Callable[[str], "str | HookJSONOutput"]
"""What the wall runs for a command (the launcher), or its refusal: asked again when the app's
`can_use_tool` answers with another command."""


def _run_as(tool_input: Mapping[str, Any], command: str, *, approve: bool) -> HookJSONOutput:
    """Let the call through with `command` in place of the model's; `approve`: the wall approves it
    (the CLI would judge the rewritten command, not the model's), else the CLI's permissions decide."""
    output: dict[str, Any] = {
        "hookEventName": "PreToolUse",
        "updatedInput": {**tool_input, "command": command},
    }
    if approve:
        output["permissionDecision"] = "allow"
        output["permissionDecisionReason"] = "flower: the wall checked the command the model wrote"
    return {"hookSpecificOutput": output}  # type: ignore[typeddict-item]


@checked
def delegate_guard(
    *,
    artifacts: str | Path | None = None,
    glance: bool = True,
    allowed: Iterable[str] = COORDINATOR_TOOLS,
    reason: str = DELEGATE_REASON,
    rules: BashRules | None = None,
    own_steps: int = 0,
    can_use_tool: CanUseTool | None = None,
    inline_until: int | None = None,
) -> HookCallback:
    """Build the PreToolUse hook of the delegation wall; install it with matcher `None` (every tool).

    - `artifacts`: the real path of the workbench's `artifacts/`, named in the refusal (and where an
      own step's long output goes).
    - `glance`: let the main thread run a Bash command that `is_ephemeral` accepts.
    - `allowed`: the main thread's own tools (hands-on tools are refused whatever this says; MCP tools
      pass, since they were given to this agent on purpose, and so do the CLI's own protocol tools,
      `flower.CLI_TOOLS`, which the CLI adds itself and which never do hands-on work).
    - `rules`: where the user's `Bash(...)` permission rules are (`BashRules.from_options`): a glance runs
      rewritten, so the CLI no longer matches them; the guard matches the model's command instead.
    - `own_steps`: 0 (the strict wall) refuses every hands-on call (Write, Edit, NotebookEdit, a Bash
      that is not a glance); more lets that many per user turn through, each with at most
      `OWN_STEP_MAX_INPUT` chars of input, a Bash one scrubbed and cut (`OWN_STEP_MAX_OUTPUT`). Never a
      call refused for what it would read (credentials, the environment).
    - `can_use_tool`: the app's permission callback: asked about the command the model wrote before the
      wall approves a rewritten one (the CLI would ask it about the launcher); a deny is obeyed.
    - `inline_until`: None (the default) or a number of tokens: while the session's context is under it,
      the main thread makes its hands-on calls itself (no count, no input limit; a Bash one scrubbed, its
      output whole, for spill to bound); from the reply that reached it on, the strict wall. Never a
      call refused for what it would read. Not with `own_steps`.
    """
    own = frozenset(check_tools(allowed, owner="delegate_guard: allowed")) - HANDS_ON
    where = f"`{Path(artifacts)}`" if artifacts is not None else _NO_ARTIFACTS
    if "{action}" not in reason:
        raise SpecError("delegate_guard: reason must contain {action} (and may contain {artifacts})")
    if own_steps < 0:
        raise SpecError(f"delegate_guard: own_steps must be 0 or more, got {own_steps}")
    check_inline_until(inline_until, own_steps, "delegate_guard")
    turns = Turns()
    growth = Growth(inline_until) if inline_until is not None else None

    def refuse(action: str) -> HookJSONOutput:
        return deny(reason.format(action=action, artifacts=where))

    def step_refusal(data: Mapping[str, Any], tool: str, text: object, strict: str) -> HookJSONOutput | None:
        """None when the hands-on call may run as an own step; else its refusal. Nothing is awaited
        between this and `turns.take()`: parallel calls are counted in the order the hook sees them."""
        if own_steps == 0 or not isinstance(text, str):
            return refuse(strict)
        what = f"`{_shown(text)}`" if tool == "Bash" else tool
        if turns.taken(data) >= own_steps:
            row = "a second hands-on step" if own_steps == 1 else f"more than {own_steps} hands-on steps"
            return refuse(
                f"take {row} in one user turn ({what}): a one-off step it may take itself, a series of "
                "them is a loop, a worker's job"
            )
        if len(text) > OWN_STEP_MAX_INPUT:
            return refuse(
                f"take a hands-on step with {len(text):,} chars of input ({what}) itself: an input stays "
                f"in its context for good, so its own steps take at most {OWN_STEP_MAX_INPUT:,}"
            )
        return None

    def own_bash(
        command: str, cwd: str | None, cap: int | None = OWN_STEP_MAX_OUTPUT
    ) -> str | HookJSONOutput:
        """The launcher for an own (or inline) Bash step, or its final refusal (secrets, the app's rules)."""
        why = glance_verdict(command, cwd=cwd)
        found = why.reason if why.secret else secret_word(command, cwd)
        if found:
            return refuse(f"run `{_shown(command)}` itself ({found}): no mode lets that through")
        if rules is not None:
            rule = rules.match(command, why.segments, cwd)
            if rule:
                return refuse(f"run `{_shown(command)}`: the permission rule `{rule}` matches it")
        return own_command(command, spill=artifacts, cap=cap)

    def glance_as(command: str, cwd: str | None) -> str | HookJSONOutput:
        run = glance_run(command, cwd=cwd, rules=rules)
        if run.allowed:
            return run.command
        return refuse(f"run `{_shown(command)}` itself, as it is not a read-only glance ({run.reason})")

    async def decide(data: Mapping[str, Any]) -> HookJSONOutput:
        if data.get("agent_id"):
            return {}
        tool = data.get("tool_name")
        if not isinstance(tool, str):
            return refuse("use an unnamed tool")
        if tool == "Agent" and _forks(data.get("tool_input")):
            return refuse(
                'start a fork of itself (`subagent_type: "fork"`): a fork copies this thread and works with '
                "its hands-on tools outside any mandate; start one of the declared workers"
            )
        if tool in own or tool in CLI_TOOLS or is_mcp_tool(tool):
            return {}
        if tool not in HANDS_ON:
            return refuse(f"use {tool} itself")
        tool_input = data.get("tool_input") or {}
        past = await growth.past(data) if growth is not None else ""
        inline = growth is not None and not past  # under inline_until: hands-on calls run
        if own_steps:
            await turns.settle(data)
        if tool != "Bash":
            if inline:
                return {}
            if past:
                return refuse(f"use {tool} itself any more: {past}")
            refused = step_refusal(data, tool, tool_input.get(_INPUT[tool]), f"use {tool} itself")
            if refused is None:
                turns.take(data)
                return {}
            return refused
        command = tool_input.get("command")
        if not isinstance(command, str):
            return refuse("run a Bash call without a command")
        cwd = data.get("cwd") if isinstance(data.get("cwd"), str) else None
        if glance:
            run = glance_run(command, cwd=cwd, rules=rules)
            if run.allowed:
                return await _approved(data, tool_input, run.command, lambda c: glance_as(c, cwd), True)
            strict = f"run `{_shown(command)}` itself, as it is not a read-only glance ({run.reason})"
        else:
            strict = f"run `{_shown(command)}` itself"
        if inline:  # scrubbed, output whole; secrets and the app's rules refused as for an own step
            launcher = own_bash(command, cwd, None)
            if not isinstance(launcher, str):
                return launcher
            return await _approved(data, tool_input, launcher, lambda c: own_bash(c, cwd, None), False)
        if past:
            strict = f"run `{_shown(command)}` itself any more ({past})"
        if own_steps == 0:
            return refuse(strict)
        launcher = own_bash(command, cwd)
        if not isinstance(launcher, str):
            return launcher  # final: secrets and the app's rules are never an own step
        refused = step_refusal(data, tool, command, strict)
        if refused is not None:
            return refused
        turns.take(data)
        return await _approved(data, tool_input, launcher, lambda c: own_bash(c, cwd), False)

    async def _approved(
        data: Mapping[str, Any], tool_input: Mapping[str, Any], command: str, again: _Rewrite, approve: bool
    ) -> HookJSONOutput:
        """Run `command` for the model's call: asked of the app's `can_use_tool` first (about the model's
        command) when it has one, approved by the wall for a glance, else left to the CLI's permissions."""
        if can_use_tool is None or data.get("permission_mode") == "bypassPermissions":
            return _run_as(tool_input, command, approve=approve)
        answer = await _ask(can_use_tool, data, tool_input)
        if isinstance(answer, PermissionResultDeny):
            return deny(answer.message or "the app's permission callback refused this command")
        if not isinstance(answer, PermissionResultAllow):
            return deny("the app's permission callback gave no answer flower knows, so the call is refused")
        changed = (answer.updated_input or {}).get("command", tool_input.get("command"))
        if isinstance(changed, str) and changed != tool_input.get("command"):
            redone = again(changed)  # the app rewrote the command: the wall decides on the new one
            if not isinstance(redone, str):
                return redone
            tool_input, command = {**tool_input, **(answer.updated_input or {})}, redone
        return _run_as(tool_input, command, approve=True)

    async def guard(input_data: Any, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
        try:
            return await decide(input_data)
        except Exception:
            logger.exception("delegate_guard failed; refusing the call")
            return deny(
                "flower: the delegation guard could not decide on this call, so it was refused. Delegate it."
            )

    return guard


async def _ask(callback: CanUseTool, data: Mapping[str, Any], tool_input: Mapping[str, Any]) -> object:
    """The app's answer about the model's own call."""
    context = ToolPermissionContext(signal=None, suggestions=[], tool_use_id=data.get("tool_use_id"))
    answer: Awaitable[object] = callback("Bash", dict(tool_input), context)
    return await answer


def _shown(command: str) -> str:
    """A command as a refusal shows it: whole up to 120 chars, else its head and `...`."""
    return command if len(command) <= 120 else command[:117] + "..."


FORK = "fork"
"""The CLI's own agent type that copies the calling thread, tools and context included
(`CLAUDE_CODE_FORK_SUBAGENT`); a coordinator is refused it whatever the environment says."""


def _forks(tool_input: object) -> bool:
    return isinstance(tool_input, Mapping) and tool_input.get("subagent_type") == FORK
