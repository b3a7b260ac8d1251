"""Who sent a request: the main thread, a subagent (which one), or a compaction.

The agent's name never reaches the wire (measured with CLI 2.1.327). A subagent is recognised by a marker the
harness adds to its prompt (`agent_marker`), or by its tool set; the billing header's `cc_is_subagent=true`
tells a subagent from the main thread; a compaction request asks, in its last user message, for "a detailed
summary of the conversation".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from .._errors import SpecError
from .._util.content import text_of

__all__ = ["COMPACT", "MAIN", "SUBAGENT", "agent_marker", "classify"]

MAIN = "main"
"""The caller name of the main thread."""
COMPACT = "compact"
"""The caller name of a compaction request (the CLI summarising the conversation)."""
SUBAGENT = "subagent"
"""The caller name of a subagent that no marker or tool set identified."""

_MARKER = "[scripted-model agent: {}]"
_MARKER_RE = re.compile(r"\[scripted-model agent: ([^\]\n]+)\]")
_COMPACT_PHRASE = "create a detailed summary of the conversation"
_SUBAGENT_FLAG = "cc_is_subagent=true"
_RESERVED = {MAIN, COMPACT, SUBAGENT}


def check_agent_name(name: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise SpecError("an agent name must be a non-empty str")
    if "]" in name or "\n" in name:
        raise SpecError(f"an agent name cannot contain ']' or a newline: {name!r}")
    if name in _RESERVED:
        raise SpecError(f"{name!r} is a reserved caller name ({', '.join(sorted(_RESERVED))})")
    return name


def agent_marker(name: str) -> str:
    """The line the harness appends to a subagent's prompt so its requests are told apart.

    `ScriptedModel.options()` and `ScriptedModel.attach()` add it to every `AgentDefinition` for you.
    """
    return _MARKER.format(check_agent_name(name))


def _system_blocks(body: Mapping[str, Any]) -> list[str]:
    system = body.get("system", "")
    if isinstance(system, str):
        return [system]
    return [str(b.get("text", "")) for b in system if isinstance(b, dict)]


def _last_user_text(body: Mapping[str, Any]) -> str:
    for message in reversed(body.get("messages", []) or []):
        if isinstance(message, dict) and message.get("role") == "user":
            return text_of(message.get("content"))
    return ""


def is_subagent(body: Mapping[str, Any]) -> bool:
    """The billing header (system block 0) of a subagent's request carries `cc_is_subagent=true`."""
    blocks = _system_blocks(body)
    return bool(blocks) and _SUBAGENT_FLAG in blocks[0]


def is_compaction(body: Mapping[str, Any]) -> bool:
    return _COMPACT_PHRASE in _last_user_text(body)


def classify(body: Mapping[str, Any], tool_sets: Mapping[str, frozenset[str]] | None = None) -> str:
    """The caller name of a request body: `"compact"`, an agent name, `"subagent"` or `"main"`."""
    if is_compaction(body):
        return COMPACT
    for block in _system_blocks(body)[1:]:
        found = _MARKER_RE.search(block)
        if found:
            return found.group(1)
    if is_subagent(body):
        offered = frozenset(str(t.get("name")) for t in body.get("tools", []) or [] if isinstance(t, dict))
        for name, tools in (tool_sets or {}).items():
            if tools == offered:
                return name
        return SUBAGENT
    return MAIN


def tool_set(tools: Iterable[str]) -> frozenset[str]:
    names = frozenset(tools)
    if not names or not all(isinstance(n, str) and n for n in names):
        raise SpecError("a tool set must be a non-empty collection of tool names")
    return names
