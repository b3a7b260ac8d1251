"""Reading the text out of a message's `content`: a plain string, or a list of blocks."""

from __future__ import annotations

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
