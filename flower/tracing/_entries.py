"""Transcript entries as the span builder reads them: what spans need, without the texts by default.

`slim()` keeps an entry's structure (type, times, ids, usage, tool names, error flags, sizes) and drops
prompt, reply and tool texts unless `content` is asked for. A live run keeps these slim copies while it
goes (not the whole transcript twice), and an export after the fact reads stored entries through the
same function, so both build spans from the same fields.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Final, TypeAlias

from .._util.content import refused_by_cli, text_of

Entry: TypeAlias = Mapping[str, Any]

CONTENT_LIMIT: Final = 16_000
"""Characters of one text kept in a span attribute (`TracingPolicy.content`)."""
_HEAD: Final = 200  # of a string prompt, without content: enough to tell a prompt from the CLI's markers
_KEEP: Final = (
    "type",
    "subtype",
    "uuid",
    "timestamp",
    "promptSource",
    "isMeta",
    "isSidechain",
    "isCompactSummary",
    "isApiErrorMessage",
    "requestId",
    "toolDenialKind",
    "agentId",
    "agentType",
    "toolUseId",
    "requestShape",
)
_AGENT_INPUT: Final = ("subagent_type", "run_in_background")
_TASK_ID = re.compile(r"<task-id>\s*([\w-]+)\s*</task-id>")
_OLD_DENIAL = re.compile(r"^Permission to use \S+ (with command .* )?has been denied\.$", re.S)


def cut(text: str) -> str:
    """`text`, at most `CONTENT_LIMIT` characters."""
    return text if len(text) <= CONTENT_LIMIT else text[: CONTENT_LIMIT - 1] + "…"


def _block(block: Mapping[str, Any], content: bool) -> dict[str, Any]:
    kind = block.get("type")
    out: dict[str, Any] = {"type": kind}
    if kind == "text":
        text = str(block.get("text") or "")
        out["chars"] = len(text)
        if content:
            out["text"] = cut(text)
    elif kind == "thinking":
        out["chars"] = len(str(block.get("thinking") or ""))
    elif kind == "tool_use":
        raw = block.get("input")
        tool_input: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        out.update(id=block.get("id"), name=block.get("name"))
        out["input"] = (
            dict(tool_input) if content else {k: tool_input[k] for k in _AGENT_INPUT if k in tool_input}
        )
        out["prompt_chars"] = len(str(tool_input.get("prompt") or ""))
    elif kind == "tool_result":
        text = text_of(block.get("content"))
        out.update(tool_use_id=block.get("tool_use_id"), is_error=block.get("is_error") is True)
        out["refused"] = refused_by_cli(block.get("is_error"), block.get("content"))
        out["denied"] = out["is_error"] and bool(_OLD_DENIAL.match(text.strip()))
        out["chars"] = len(text)
        if content:
            out["text"] = cut(text)
    return out


def slim(entry: Entry, content: bool) -> dict[str, Any]:
    """The fields of `entry` the span builder reads (texts only with `content`)."""
    out: dict[str, Any] = {key: entry[key] for key in _KEEP if key in entry}
    origin = entry.get("origin")
    if isinstance(origin, Mapping) and isinstance(origin.get("kind"), str):
        out["origin"] = {"kind": origin["kind"]}
    result = entry.get("toolUseResult")
    if isinstance(result, Mapping):
        kept = {k: result[k] for k in ("agentId", "agentType", "isAsync", "status") if k in result}
        out["toolUseResult"] = {**kept, "promptChars": len(str(result.get("prompt") or ""))}
    message = entry.get("message")
    if isinstance(message, Mapping):
        kept = {k: message[k] for k in ("role", "id", "model", "stop_reason", "usage") if k in message}
        body = message.get("content")
        if isinstance(body, str):
            kept["content"] = cut(body) if content else body[:_HEAD]
        elif isinstance(body, list):
            kept["content"] = [_block(b, content) for b in body if isinstance(b, Mapping)]
        out["message"] = kept
    return out


def slim_all(entries: Iterable[Entry], content: bool) -> list[dict[str, Any]]:
    """`slim()` of every entry that is a mapping."""
    return [slim(e, content) for e in entries if isinstance(e, Mapping)]


def ns(stamp: object) -> int | None:
    """An entry's ISO timestamp as Unix nanoseconds (None when absent or unreadable)."""
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return int(moment.timestamp() * 1_000_000) * 1000


def blocks(entry: Entry) -> list[Mapping[str, Any]]:
    """The content blocks of an entry's message ([] for a string content or none)."""
    message = entry.get("message")
    body = message.get("content") if isinstance(message, Mapping) else None
    return [b for b in body if isinstance(b, Mapping)] if isinstance(body, list) else []


def string_content(entry: Entry) -> str | None:
    """The message content of an entry when it is a string (a prompt, a notification), else None."""
    message = entry.get("message")
    body = message.get("content") if isinstance(message, Mapping) else None
    return body if isinstance(body, str) else None


def notified_task(entry: Entry) -> str | None:
    """The task id a background task's notification (a user entry the CLI writes) names, else None."""
    if entry.get("type") != "user" or entry.get("promptSource") != "system":
        return None
    found = _TASK_ID.search(string_content(entry) or "")
    return found.group(1) if found else None


def messages_json(role: str, parts: Iterable[Mapping[str, Any]]) -> str:
    """One message in the GenAI conventions' JSON form (`gen_ai.input.messages` / `output.messages`)."""
    return json.dumps([{"role": role, "parts": list(parts)}], ensure_ascii=False)
