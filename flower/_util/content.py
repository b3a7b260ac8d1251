"""Reading the text out of a message's `content`: a plain string, or a list of blocks."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


def text_of(content: Any) -> str:
    """The text of `content`: the string itself, or its text blocks joined by newlines (others skipped)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def tool_results(entry: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The `tool_result` blocks of a transcript entry, in order: none unless it is a user entry whose
    content is a list of blocks."""
    if entry.get("type") != "user":
        return []
    message = entry.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    if not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, Mapping) and block.get("type") == "tool_result"]


def refused_by_cli(is_error: object, content: Any) -> bool:
    """Whether a tool result is the CLI's refusal of the call before the tool ran.

    Measured (CLI 2.1.332): the CLI's own checks (an unknown tool, invalid input, a subagent's Write of a
    `REPORT*.md`) answer with an error result wrapped in `<tool_use_error>`; a tool that ran and failed
    (a Bash exit code, a missing file) and a hook's denial are not wrapped.
    """
    return is_error is True and text_of(content).lstrip().startswith("<tool_use_error>")


def string_leaves(value: Any) -> Iterator[str]:
    """Every string leaf of a JSON value (keys excluded): what a tool input or a request body says."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from string_leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from string_leaves(item)
