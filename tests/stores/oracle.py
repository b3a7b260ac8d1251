"""What a transcript holds, read from the CLI's formats without flower's code: the oracle of the corpus tests.

Written from the transcript format (the CLI's fields and fixed sentences), so that a test compares what
flower did with what is there rather than with flower's own reading of it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from flower.stores._rewrite import replayed

INTERRUPTED = (  # the CLI's whole sentences for an interrupted call, as its old-format entries hold them
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
    "edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to "
    "tell you how to proceed.",
    "The user doesn't want to take this action right now. STOP what you are doing and wait for the user to "
    "tell you how to proceed.",
)
REFUSED = re.compile(r"Permission to use (\S+) (?:with command (.*) )?has been denied\.", re.DOTALL)


def blocks(entry: dict[str, Any]) -> list[dict[str, Any]]:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def text(block: dict[str, Any]) -> str | None:
    """A result's text, or None when it holds more than text."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text" for p in content):
        return "\n".join(str(p.get("text", "")) for p in content)
    return None


def on_branch(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [entries[i] for i in sorted(replayed(entries))]


def refusals(entries: Iterable[dict[str, Any]], calls: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """The calls whose results are rule refusals (`refused`) or interrupts (`interrupted`), in order:
    `toolDenialKind`, else (an old-format entry) an error result that is exactly one of the CLI's
    sentences, a refusal naming its own call's tool and command."""
    found: dict[str, list[str]] = {"refused": [], "interrupted": []}
    for entry in entries:
        results = [b for b in blocks(entry) if b.get("type") == "tool_result"]
        if entry.get("type") != "user" or entry.get("isMeta") or entry.get("isCompactSummary") or not results:
            continue
        ident = str(results[0].get("tool_use_id"))
        kind = entry.get("toolDenialKind")
        if kind == "permission-rule":
            found["refused"].append(ident)
        elif kind == "user-rejected" and "permissionDecision" not in entry:
            found["interrupted"].append(ident)
        elif kind is None and "permissionDecision" not in entry and len(results) == 1:
            body = text(results[0])
            if results[0].get("is_error") is not True or body is None:
                continue
            if body in INTERRUPTED:
                found["interrupted"].append(ident)
            refusal = REFUSED.fullmatch(body.partition("\n")[0])
            call = calls.get(ident, {})
            if refusal and refusal.group(1) == call.get("name"):
                command = (call.get("input") or {}).get("command")
                if refusal.group(2) is None or refusal.group(2) == command:
                    found["refused"].append(ident)
    return found


def calls(entries: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """tool_use id -> its block (the first one)."""
    found: dict[str, dict[str, Any]] = {}
    for entry in entries:
        for block in blocks(entry):
            if block.get("type") == "tool_use" and entry.get("type") == "assistant":
                found.setdefault(str(block.get("id")), block)
    return found


@dataclass
class Reply:
    """One API reply: the assistant entries sharing a `message.id`, the last usage they carry."""

    model: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    stopped: bool = False
    blocks: list[dict[str, Any]] = field(default_factory=list)

    def count(self, name: str) -> int:
        value = self.usage.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

    @property
    def written_1h(self) -> int:
        split = self.usage.get("cache_creation")
        hour = split.get("ephemeral_1h_input_tokens") if isinstance(split, dict) else 0
        hour = hour if isinstance(hour, int) and hour > 0 else 0
        return min(hour, self.count("cache_creation_input_tokens"))


def replies(entries: Iterable[dict[str, Any]]) -> list[Reply]:
    """The model's replies, one per `message.id` (the CLI writes an entry per block and repeats the
    usage on each), the CLI's own `<synthetic>` ones left out."""
    found: dict[str, Reply] = {}
    for index, entry in enumerate(entries):
        message = entry.get("message")
        if entry.get("type") != "assistant" or not isinstance(message, dict):
            continue
        if entry.get("isApiErrorMessage") is True or message.get("model") == "<synthetic>":
            continue
        reply = found.setdefault(str(message.get("id") or entry.get("uuid") or f"#{index}"), Reply())
        reply.model = str(message.get("model") or reply.model)
        if isinstance(message.get("usage"), dict):
            reply.usage = message["usage"]
        reply.stopped |= bool(message.get("stop_reason"))
        reply.blocks.extend(blocks(entry))
    return list(found.values())
