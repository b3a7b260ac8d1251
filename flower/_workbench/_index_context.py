"""Keep the workbench index fresh across the prompts of a session that outlives one step.

A session's system prompt holds the workbench block it started with, and the CLI replays that prompt for
the whole session, resumes and forks included (docs/workbench.md); a long-lived `ClaudeSDKClient` cannot
change its options at all. So a `UserPromptSubmit` hook computes the fresh block before each prompt and,
only when it differs from the block this session last saw, adds it as `additionalContext`. Measured with
CLI 2.1.327: the CLI sends that text as a `role: "system"` message right after the prompt ("UserPromptSubmit
hook additional context: ..."), so it lands at the end of the history and the prompt-cache prefix stays
whole; it stays in the history, resumes included.

What a session last saw:
- a session this hook met before: the block it last got;
- a new session (its transcript does not exist yet at its first prompt): `initial`, the block put in the
  system prompt (None when the block is not in the system prompt);
- a resumed session this hook never met (its transcript exists at its first prompt, also when the SDK
  materialised it from a store): unknown, so the fresh block is added.
A compaction (`PreCompact`) replaces the history with a summary, and rebuilds the system prompt from the
options (the SDK's documentation of `SystemPromptPreset.snapshot`; not measured here), so the session is
then taken to hold `initial` again.

Limit: a fork (`fork_session=True`) is a new session that replays its parent's system prompt; it is taken
to hold `initial`, which is wrong only if the index changed between its parent's start and `initial`. The
next change of the index brings the fresh block.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any, Final

import anyio.to_thread
from claude_agent_sdk import HookContext, HookMatcher
from claude_agent_sdk.types import HookEvent, HookInput, HookJSONOutput

from .._errors import SpecError
from .bench import Workbench

logger = logging.getLogger("flower.index")

INDEX_CONTEXT: Final = (
    "flower: the workbench as it is now (it replaces any earlier workbench index in this conversation).\n\n"
    "{block}"
)
"""The context added before a prompt; `{block}` is `Workbench.prompt_block()`."""

_REMEMBERED: Final = 4096  # sessions whose last block is kept; the oldest is forgotten first


def index_context_hooks(
    workbench: Workbench, *, initial: str | None, text: str = INDEX_CONTEXT
) -> dict[HookEvent, list[HookMatcher]]:
    """`UserPromptSubmit` and `PreCompact` hooks that give each session the fresh block when it changed.

    `initial` is the block a new session starts with in its system prompt (None: not there, so every
    session gets the block with its first prompt). The hook fails open: on any error the prompt goes on
    without context and the error is logged on `logging.getLogger("flower.index")`.
    """
    if not isinstance(workbench, Workbench):
        raise SpecError(f"index_context_hooks needs a Workbench, got {type(workbench).__name__}")
    if "{block}" not in text:
        raise SpecError("index_context_hooks: text must contain {block}")
    seen: dict[str, str | None] = {}

    def remember(session: str, block: str | None) -> None:
        seen.pop(session, None)
        seen[session] = block
        while len(seen) > _REMEMBERED:
            del seen[next(iter(seen))]

    def fresh_and_resumed(transcript: object) -> tuple[str, bool]:
        resumed = isinstance(transcript, str) and bool(transcript) and os.path.exists(transcript)
        return workbench.prompt_block(), resumed

    async def on_prompt(data: HookInput, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
        try:
            raw: Mapping[str, Any] = data
            session = raw.get("session_id")
            if raw.get("hook_event_name") != "UserPromptSubmit" or not isinstance(session, str):
                return {}
            block, resumed = await anyio.to_thread.run_sync(fresh_and_resumed, raw.get("transcript_path"))
            last = seen.get(session, None if resumed else initial)
            remember(session, block)
            if block == last:
                return {}
            return {
                "hookSpecificOutput": {
                    "hookEventName": "UserPromptSubmit",
                    "additionalContext": text.format(block=block),
                }
            }
        except Exception as exc:
            logger.warning("the workbench index could not be given to the prompt: %s", exc, exc_info=True)
            return {}

    async def on_compact(data: HookInput, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
        session = data.get("session_id")
        if isinstance(session, str):
            remember(session, initial)
        return {}

    return {
        "UserPromptSubmit": [HookMatcher(matcher=None, hooks=[on_prompt])],
        "PreCompact": [HookMatcher(matcher=None, hooks=[on_compact])],
    }
