"""The request log: every request the CLI sent, with its caller, turn, body and sizes.

A request *is* the context the model saw, so tests assert on it: "the 50k output is not in the worker's
next request, the pointer is".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .._util.content import string_leaves

__all__ = ["RecordedRequest", "RequestSizes", "ToolResultView"]


def _chars(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False)) if value is not None else 0


def content_text(content: Any) -> str:
    """The text of a message or tool_result `content` (a str, or a list of blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, dict) and block.get("type") == "tool_result":
                parts.append(content_text(block.get("content")))
        return "\n".join(parts)
    return ""


@dataclass(frozen=True)
class ToolResultView:
    """A tool_result block as the model received it."""

    tool_use_id: str
    """The id of the call it answers."""
    text: str
    """Its text blocks, joined: exactly what the model read (after hooks, spill and rewrites)."""
    is_error: bool
    """The block's `is_error` flag (a failed or denied call)."""
    tool_name: str | None
    """The name of the tool_use this answers, when that call is in the same request."""


@dataclass(frozen=True)
class RequestSizes:
    """Characters of each part of a request (JSON-serialised, non-ASCII kept as is)."""

    system: int
    """The `system` blocks."""
    tools: int
    """The tool definitions offered."""
    messages: int
    """The conversation history: what the model re-reads on every turn."""
    tool_results: int
    """Text of every tool_result in the messages (a part of `messages`)."""
    total: int
    """The whole body."""


@dataclass(frozen=True)
class RecordedRequest:
    """One request the scripted model received, and how it answered."""

    seq: int
    """Position among all requests (0-based)."""
    caller: str
    """`"main"`, `"compact"`, a subagent's name, or `"subagent"` when no marker or tool set matched."""
    index: int
    """Position among this caller's requests (0-based): retries count, so a 529 and its retry are two."""
    turn: int
    """Assistant messages already in the history: the conversation turn this request asks for."""
    body: dict[str, Any]
    """The request body, as JSON-decoded."""
    headers: dict[str, str]
    """The HTTP headers (lower-case names)."""
    path: str
    """The request path (`/v1/messages?beta=true`)."""
    received_at: float
    """`time.monotonic()` when the request arrived."""
    answer: str = field(default="", compare=False)
    """What the script answered, in one line (filled in once the step is chosen)."""
    usage: dict[str, Any] | None = field(default=None, compare=False)
    """The usage the reply reported, as the API's `usage` object (`input_tokens`,
    `cache_read_input_tokens`, `cache_creation_input_tokens` with its `cache_creation` split by lifetime,
    `output_tokens`), once it was sent; None for an error step. `TokenUsage.from_api` reads it."""

    @property
    def output_tokens(self) -> int:
        """Output tokens the reply reported: the size of what the script produced (0 before it was sent)."""
        return int((self.usage or {}).get("output_tokens", 0))

    @property
    def stream(self) -> bool:
        """The CLI asked for a streamed (SSE) reply."""
        return bool(self.body.get("stream", False))

    @property
    def model(self) -> str:
        """The model the CLI asked for."""
        return str(self.body.get("model", ""))

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The `messages` of the body: the history, oldest first (with the CLI's `role: "system"` entries)."""
        messages = self.body.get("messages", [])
        return messages if isinstance(messages, list) else []

    @property
    def system_text(self) -> str:
        """The `system` blocks joined by blank lines."""
        system = self.body.get("system", "")
        if isinstance(system, str):
            return system
        return "\n\n".join(str(b.get("text", "")) for b in system if isinstance(b, dict))

    @property
    def tool_names(self) -> list[str]:
        """Names of the tools offered, in order."""
        return [str(t.get("name")) for t in self.body.get("tools", []) if isinstance(t, dict)]

    @property
    def tool_results(self) -> list[ToolResultView]:
        """Every tool_result block in the history, oldest first."""
        names: dict[str, str] = {}
        results: list[ToolResultView] = []
        for message in self.messages:
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use":
                    names[str(block.get("id"))] = str(block.get("name"))
                elif block.get("type") == "tool_result":
                    tool_use_id = str(block.get("tool_use_id"))
                    results.append(
                        ToolResultView(
                            tool_use_id=tool_use_id,
                            text=content_text(block.get("content")),
                            is_error=bool(block.get("is_error", False)),
                            tool_name=names.get(tool_use_id),
                        )
                    )
        return results

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        """Every tool_use block in the history, oldest first."""
        return [
            block
            for message in self.messages
            if message.get("role") == "assistant" and isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_use"
        ]

    def tool_result(self, tool_use_id: str) -> ToolResultView:
        """The result of one call; `KeyError` naming the ids present if it is not in this request."""
        for result in self.tool_results:
            if result.tool_use_id == tool_use_id:
                return result
        present = [r.tool_use_id for r in self.tool_results]
        raise KeyError(f"no tool_result for {tool_use_id!r} in request #{self.seq}; present: {present}")

    @property
    def last_user_text(self) -> str:
        """The text of the last user message (tool_result texts included)."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return content_text(message.get("content"))
        return ""

    @property
    def sizes(self) -> RequestSizes:
        """Characters of each part of the request."""
        tool_results = sum(len(r.text) for r in self.tool_results)
        return RequestSizes(
            system=_chars(self.body.get("system")),
            tools=_chars(self.body.get("tools")),
            messages=_chars(self.body.get("messages")),
            tool_results=tool_results,
            total=_chars(self.body),
        )

    def __contains__(self, needle: object) -> bool:
        """`"x" in request`: does any string of the body (system, tools, messages) contain it?"""
        if not isinstance(needle, str):
            return False
        return any(needle in s for s in string_leaves(self.body))

    def count(self, needle: str) -> int:
        """How many times `needle` occurs across the body's strings."""
        return sum(s.count(needle) for s in string_leaves(self.body))

    def summary(self) -> str:
        """A few lines to read in a failure message."""
        sizes = self.sizes
        last = self.last_user_text.replace("\n", " ")
        lines = [
            f"request #{self.seq}: caller={self.caller} index={self.index} turn={self.turn} "
            f"stream={self.stream} model={self.model}",
            f"  sizes: system={sizes.system} tools={sizes.tools} messages={sizes.messages} "
            f"tool_results={sizes.tool_results} total={sizes.total}",
            f"  tools offered: {', '.join(self.tool_names) or '-'}",
            f"  system starts: {self.system_text[:160]!r}",
            f"  last user text (end): {last[-300:]!r}",
        ]
        if self.answer:
            lines.append(f"  answered: {self.answer}")
        return "\n".join(lines)
