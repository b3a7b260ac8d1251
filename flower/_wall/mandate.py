"""`mandate_guard`: every mandate starts with the same fixed line, so workers share their cached prefix;
and a worker the coordinator did not send to the background runs in the foreground.

The CLI sends a per-conversation billing block as the first system block of every request, and three
hex digits in it are derived from the 5th, 8th and 21st characters of the conversation's first prompt;
for a worker, that prompt is its mandate. Workers whose mandates start differently send different
billing blocks, so none of them can read the tools and system prompt another worker already wrote to the
prompt cache: each worker start is a full cache write. A PreToolUse hook on the main thread's Agent
calls puts `line` in front of every mandate (the main thread's history keeps the mandate as the
coordinator wrote it), so every worker of a session sends the same billing block and the second worker
on reads the shared prefix.

The same rewrite (the CLI keeps only one hook's `updatedInput` for a call, so there is one) can also
set `run_in_background: false` on an Agent call that does not say: the CLI runs a worker in the
background by default, and a background delegation costs the coordinator a request of its own (its
turn ends on the "Async agent launched" result, then the report starts a new one) and about 1,800 more
characters in its context for good (that result, then the task notification around the report, against
the foreground hand-back frame). A call that asks for the background keeps it.

It is a rewrite, so it fails open: if it raises, the mandate goes out unchanged and the error is logged.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final

from claude_agent_sdk import HookContext, HookMatcher
from claude_agent_sdk.types import HookCallback, HookEvent, HookJSONOutput

from .._errors import SpecError
from .._util.check import checked
from .starts import start_guard

__all__ = ["MANDATE_LINE", "check_mandate_line", "mandate_guard", "shared_prefix_hooks"]

logger = logging.getLogger("flower.mandate")

MANDATE_LINE: Final = "Mandate from your coordinator (report as your rules say):"
"""The fixed first line flower puts in front of every mandate."""
FINGERPRINT_CHARS: Final = 21
"""The CLI's billing fingerprint reads the prompt's 5th, 8th and 21st characters (measured)."""


def check_mandate_line(line: str | None, owner: str, name: str = "mandate_line") -> str | None:
    """`line` if it can serve as the shared first line (one line, long enough), None for None. Its type
    is its callers' `@checked` (`AgentSpec`'s `check_fields`)."""
    if line is None:
        return None
    if "\n" in line or len(line.strip()) < FINGERPRINT_CHARS:
        raise SpecError(
            f"{owner}: {name} must be one line of at least {FINGERPRINT_CHARS} characters (the CLI "
            f"derives its billing fingerprint from the prompt's first characters) or None, got {line!r:.80}"
        )
    return line


def _rewritten(data: Mapping[str, Any], line: str | None, foreground: bool) -> HookJSONOutput:
    if data.get("agent_id") or data.get("tool_name") != "Agent":
        return {}
    tool_input = data.get("tool_input")
    if not isinstance(tool_input, Mapping):
        return {}
    updated = dict(tool_input)
    prompt = tool_input.get("prompt")
    if line is not None and isinstance(prompt, str) and not prompt.startswith(line):
        updated["prompt"] = f"{line}\n{prompt}"
    if foreground and "run_in_background" not in tool_input:
        updated["run_in_background"] = False
    if updated == dict(tool_input):
        return {}
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": updated}}


@checked
def mandate_guard(line: str | None = MANDATE_LINE, *, foreground: bool = False) -> HookCallback:
    """Build the PreToolUse hook that starts every main-thread Agent prompt with `line` (None: leaves
    prompts as written) and, with `foreground`, runs a worker whose call does not ask for the background
    in the foreground (`run_in_background: false`).

    Install it with matcher `"Agent"` (or None: other tools pass untouched). A subagent's own calls pass.
    """
    fixed = check_mandate_line(line, "mandate_guard", "line")
    if fixed is None and not foreground:
        raise SpecError("mandate_guard: line must be a string (leave the hook out to turn it off)")

    async def guard(input_data: Any, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
        try:
            return _rewritten(input_data, fixed, foreground)
        except Exception:
            logger.exception("mandate_guard failed; the mandate goes out unchanged")
            return {}

    return guard


def shared_prefix_hooks(
    line: str | None, *, foreground: bool = False, groups: Mapping[str, str] | None = None
) -> dict[HookEvent, list[HookMatcher]]:
    """A coordinator's hooks for cheap delegations: `mandate_guard(line, foreground=...)` and
    `start_guard(groups=groups)` (on PreToolUse and SubagentStop). With `line` None mandates go out as
    written, so workers send different billing blocks and share nothing to wait for: no start guard,
    and no hook at all unless `foreground`."""
    if line is None:
        rewrite = [HookMatcher(matcher=None, hooks=[mandate_guard(None, foreground=True)])]
        return {"PreToolUse": rewrite} if foreground else {}
    starts = start_guard(groups=groups)
    return {
        "PreToolUse": [HookMatcher(matcher=None, hooks=[mandate_guard(line, foreground=foreground), starts])],
        "SubagentStop": [HookMatcher(matcher=None, hooks=[starts])],
    }
