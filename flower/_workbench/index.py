"""`index_guard`: keep the workbench's `INDEX.md` current when an agent writes into the workbench.

A PostToolUse hook on `Write|Edit`. When the written file (`tool_input.file_path`) resolves inside the
workbench (resolved-path containment, never a substring test), the index is regenerated. The tool output
is never altered, and a failure is logged on `logging.getLogger("flower.index")`, never raised: an index
one step stale is better than a failed write.

Files written by Bash (`cat > scripts/x.sh`) are not seen here; the refresh before each step covers them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any, Final

import anyio.to_thread
from claude_agent_sdk import HookContext, HookMatcher
from claude_agent_sdk.types import HookCallback, HookEvent, HookInput, HookJSONOutput

from .._util.check import checked
from .bench import Workbench

__all__ = ["INDEX_MATCHER", "index_guard", "index_hooks"]

logger = logging.getLogger("flower.index")

INDEX_MATCHER: Final = "Write|Edit"
"""The tools whose writes can change the index."""

_PATH_KEYS: Final = ("file_path", "notebook_path")


@checked
def index_guard(workbench: Workbench) -> HookCallback:
    """Build the PostToolUse hook that refreshes `workbench`'s index after a write inside it."""

    async def hook(data: HookInput, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
        try:
            raw: Mapping[str, Any] = data
            if raw.get("hook_event_name") != "PostToolUse":
                return {}
            path = _written_path(raw)
            if path is not None and workbench.contains(path):
                await anyio.to_thread.run_sync(workbench.refresh)
        except Exception as exc:
            logger.warning("index_guard could not refresh %s: %s", workbench.index_path, exc, exc_info=True)
        return {}

    return hook


@checked
def index_hooks(workbench: Workbench) -> dict[HookEvent, list[HookMatcher]]:
    """The hooks to install for the index, ready for `ClaudeAgentOptions(hooks=...)`."""
    return {"PostToolUse": [HookMatcher(matcher=INDEX_MATCHER, hooks=[index_guard(workbench)])]}


def _written_path(data: Mapping[str, Any]) -> str | None:
    """The absolute path a Write/Edit wrote (relative paths are taken from the hook input's cwd)."""
    tool_input = data.get("tool_input")
    if not isinstance(tool_input, Mapping):
        return None
    for key in _PATH_KEYS:
        path = tool_input.get(key)
        if isinstance(path, str) and path and "\x00" not in path:
            cwd = data.get("cwd")
            return os.path.join(cwd, path) if isinstance(cwd, str) and cwd else path
    return None
