"""Encode script steps as Anthropic Messages API responses: an SSE event stream or one JSON body."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from typing import Any

from ._steps import HttpError, Reply, StreamError, Text, Thinking, ToolUse, Usage

__all__ = ["error_body", "estimate_tokens", "message_json", "sse_event", "sse_events", "stream_error_events"]


def estimate_tokens(chars: int) -> int:
    """The usual rough rule: four characters per token."""
    return max(1, chars // 4)


def _new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(12)}"


def _block_json(block: Text | Thinking | ToolUse, tool_id: str | None) -> dict[str, Any]:
    if isinstance(block, Text):
        return {"type": "text", "text": block.text}
    if isinstance(block, Thinking):
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    return {"type": "tool_use", "id": tool_id, "name": block.name, "input": dict(block.input)}


def _usage_json(usage: Usage | None, request_chars: int, output_chars: int) -> dict[str, Any]:
    usage = usage or Usage()
    hour = usage.ephemeral_1h_input_tokens
    return {
        "input_tokens": usage.input_tokens
        if usage.input_tokens is not None
        else estimate_tokens(request_chars),
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "cache_creation": {
            "ephemeral_5m_input_tokens": usage.cache_creation_input_tokens - hour,
            "ephemeral_1h_input_tokens": hour,
        },
        "cache_read_input_tokens": usage.cache_read_input_tokens,
        "output_tokens": usage.output_tokens
        if usage.output_tokens is not None
        else estimate_tokens(output_chars),
    }


def _tool_ids(step: Reply) -> list[str | None]:
    return [(b.id or _new_id("toolu")) if isinstance(b, ToolUse) else None for b in step.content]


def message_json(step: Reply, model: str, request_chars: int) -> dict[str, Any]:
    """The full message, as a non-streaming (`stream: false`) response body."""
    content = [_block_json(b, tid) for b, tid in zip(step.content, _tool_ids(step), strict=True)]
    output_chars = len(json.dumps(content, ensure_ascii=False))
    return {
        "id": _new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": step.effective_stop_reason,
        "stop_sequence": None,
        "usage": _usage_json(step.usage, request_chars, output_chars),
    }


def sse_event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def _pieces(text: str, parts: int = 3) -> list[str]:
    """Split a string into a few deltas so the client really assembles a stream."""
    if len(text) <= 1:
        return [text]
    size = max(1, -(-len(text) // parts))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _message_start(message: dict[str, Any]) -> bytes:
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
    start["usage"] = {**message["usage"], "output_tokens": 1}
    return sse_event("message_start", {"type": "message_start", "message": start})


def _block_start(index: int, block: dict[str, Any]) -> bytes:
    return sse_event(
        "content_block_start", {"type": "content_block_start", "index": index, "content_block": block}
    )


def _block_delta(index: int, delta: dict[str, Any]) -> bytes:
    return sse_event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})


def _block_events(index: int, block: dict[str, Any]) -> Iterator[bytes]:
    """Start, deltas and stop of one content block, the way the API streams it."""
    kind = block["type"]
    if kind == "text":
        yield _block_start(index, {"type": "text", "text": ""})
        for piece in _pieces(block["text"]):
            yield _block_delta(index, {"type": "text_delta", "text": piece})
    elif kind == "thinking":
        yield _block_start(index, {"type": "thinking", "thinking": "", "signature": ""})
        for piece in _pieces(block["thinking"]):
            yield _block_delta(index, {"type": "thinking_delta", "thinking": piece})
        yield _block_delta(index, {"type": "signature_delta", "signature": block["signature"]})
    else:
        yield _block_start(index, {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}})
        for piece in _pieces(json.dumps(block["input"], ensure_ascii=False)):
            yield _block_delta(index, {"type": "input_json_delta", "partial_json": piece})
    yield sse_event("content_block_stop", {"type": "content_block_stop", "index": index})


def sse_events(
    step: Reply, model: str, request_chars: int, *, message: dict[str, Any] | None = None
) -> Iterator[bytes]:
    """The streamed form of `message_json` (or of `message`, already built from `step`): message_start,
    one start/deltas/stop per block, message_delta."""
    message = message or message_json(step, model, request_chars)
    yield _message_start(message)
    for index, block in enumerate(message["content"]):
        yield from _block_events(index, block)
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    yield sse_event("message_delta", {"type": "message_delta", "delta": delta, "usage": message["usage"]})
    yield sse_event("message_stop", {"type": "message_stop"})


def stream_error_events(step: StreamError, model: str, request_chars: int) -> Iterator[bytes]:
    """A stream that starts a text block, then fails with an SSE `event: error`."""
    message = message_json(Reply(content=(Text(step.partial_text or "partial"),)), model, request_chars)
    yield _message_start(message)
    yield _block_start(0, {"type": "text", "text": ""})
    if step.partial_text:
        yield _block_delta(0, {"type": "text_delta", "text": step.partial_text})
    yield sse_event("error", {"type": "error", "error": {"type": step.error_type, "message": step.message}})


def error_body(step: HttpError) -> dict[str, Any]:
    return {"type": "error", "error": {"type": step.resolved_type, "message": step.resolved_message}}
