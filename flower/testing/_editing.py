"""Server-side context editing, as the Messages API applies it before the model reads a request.

`ClearToolUses` is the API's `clear_tool_uses_20250919` edit (beta `context-management-2025-06-27`):
once the prompt exceeds `trigger` input tokens, the oldest tool results become a placeholder, the
`keep` most recent stay, and the edit is skipped when it would reclaim less than `clear_at_least`
tokens. The client keeps sending the whole history; the API's documentation says that after a clear
"subsequent requests can reuse the newly cached prefix", so a clear is an event, not a rewrite on every
request: the edit is replayed over the history, request by request (each user message that ends a turn
is one earlier request), and a result cleared once stays cleared. The trigger is checked against each
earlier request as edited so far.

`ScriptedModel` applies the edits a request asks for in its `context_management` field (as the API
does), and any `edit` it is given (an app's or a benchmark's strategy) on top: the request log and the
scripts see the edited request, the one the model reads.

Tokens are characters / 4 of each block's JSON (`flower._cost.tokens_of`).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from .._cost.cache import tokens_of
from .._errors import SpecError

__all__ = ["CLEARED", "ClearToolUses", "Edit", "apply_context_management"]

CLEARED = "[cleared]"
"""The placeholder a cleared tool result reads."""

Edit: TypeAlias = Callable[[dict[str, Any]], dict[str, Any]]
"""A server-side rewrite of a request body (it must not modify its argument)."""


def _size(value: Any) -> int:
    return tokens_of(len(json.dumps(value, ensure_ascii=False)))


@dataclass(frozen=True, kw_only=True)
class ClearToolUses:
    """The API's `clear_tool_uses_20250919` edit, callable on a request body.

    Example: `ScriptedModel(edit=ClearToolUses(trigger=50_000, keep=3, clear_at_least=20_000))`.
    """

    trigger: int = 100_000
    """Input tokens above which results are cleared (the API's default)."""
    keep: int = 3
    """Most recent tool results never cleared."""
    clear_at_least: int = 0
    """Skip a clear that would reclaim fewer tokens than this."""
    exclude_tools: tuple[str, ...] = ()
    """Tools whose results are never cleared."""
    placeholder: str = CLEARED
    """What a cleared result reads."""

    def __post_init__(self) -> None:
        for name in ("trigger", "keep", "clear_at_least"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise SpecError(f"ClearToolUses.{name} must be a non-negative int, got {value!r}")

    @classmethod
    def from_request(cls, edit: Mapping[str, Any]) -> ClearToolUses:
        """The edit as a request's `context_management.edits` entry spells it (input-token triggers)."""
        trigger = edit.get("trigger") or {}
        keep = edit.get("keep") or {}
        least = edit.get("clear_at_least") or {}
        return cls(
            trigger=int(trigger.get("value", 100_000)) if isinstance(trigger, dict) else 100_000,
            keep=int(keep.get("value", 3)) if isinstance(keep, dict) else 3,
            clear_at_least=int(least.get("value", 0)) if isinstance(least, dict) else 0,
            exclude_tools=tuple(edit.get("exclude_tools") or ()),
        )

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages")
        if not isinstance(messages, list):
            return body
        cleared = self._replay(body, messages)
        if not cleared:
            return body
        out = copy.copy(body)
        out["messages"] = _with_cleared(messages, cleared, self.placeholder)
        return out

    def _replay(self, body: Mapping[str, Any], messages: list[Any]) -> set[tuple[int, int]]:
        """(message, block) of every result cleared, replaying the history request by request."""
        names: dict[str, str] = {}
        results: list[tuple[int, int, int]] = []  # (message, block, tokens saved if cleared)
        cleared: set[tuple[int, int]] = set()
        note = _size(self.placeholder)
        total = _size(body.get("system")) + _size(body.get("tools"))
        saved = 0
        for m, message in enumerate(messages):
            total += _size(message)
            content = message.get("content") if isinstance(message, dict) else None
            for b, block in enumerate(content if isinstance(content, list) else []):
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use":
                    names[str(block.get("id"))] = str(block.get("name"))
                elif (
                    block.get("type") == "tool_result"
                    and names.get(str(block.get("tool_use_id"))) not in self.exclude_tools
                ):
                    results.append((m, b, max(0, _size(block.get("content")) - note)))
            ends_turn = message.get("role") == "user" and (
                m + 1 == len(messages) or messages[m + 1].get("role") == "assistant"
            )
            if not ends_turn or total - saved <= self.trigger:
                continue
            older = results[: max(0, len(results) - self.keep)]
            fresh = [(mm, bb, s) for mm, bb, s in older if (mm, bb) not in cleared]
            gain = sum(s for _, _, s in fresh)
            if fresh and gain >= max(1, self.clear_at_least):
                cleared.update((mm, bb) for mm, bb, _ in fresh)
                saved += gain
        return cleared


def _with_cleared(messages: list[Any], cleared: set[tuple[int, int]], placeholder: str) -> list[Any]:
    out = list(messages)
    for m in sorted({m for m, _ in cleared}):
        message = dict(out[m])
        content = list(message["content"])
        for b in sorted(b for mm, b in cleared if mm == m):
            content[b] = {**content[b], "content": placeholder}
        message["content"] = content
        out[m] = message
    return out


def apply_context_management(body: dict[str, Any]) -> dict[str, Any]:
    """The body with the `clear_tool_uses_20250919` edits its `context_management` asks for applied."""
    management = body.get("context_management")
    edits = management.get("edits") if isinstance(management, dict) else None
    for edit in edits if isinstance(edits, list) else []:
        if isinstance(edit, dict) and edit.get("type") == "clear_tool_uses_20250919":
            body = ClearToolUses.from_request(edit)(body)
    return body
