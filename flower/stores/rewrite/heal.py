"""Orphans: a call with no result anywhere gets one, so that every `tool_use` has its `tool_result`.

A call is left without a result when the process dies while the tool runs. The Messages API rejects a
history where a `tool_use` is not answered in the next user message, so a resumed session could fail on
every request. (Measured with CLI 2.1.327: the CLI now repairs this itself on resume, with a result of
its own for a parallel call, or by leaving out a message whose only calls are orphans; healing here keeps
the repair explicit, with our wording, and independent of the CLI version.)

The added entry is shaped like the CLI's own result entries: a user entry whose `parentUuid` and
`sourceToolAssistantUUID` are the entry holding the call, placed after the last entry of that API
message. No existing entry changes. Its uuid is derived from the holding entry and the calls (`uuid5`),
so every load of the same history adds the same entry, and entries a resumed session appends under it
stay connected.

Example::

    before: assistant[tool_use T "make build"]                     (the process died)
    after:  assistant[tool_use T "make build"]  user[tool_result T "[no result: the session ended ...]"]
"""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Sequence
from typing import Any

from ..policies import Change, PrunePolicy
from ._transcript import Entry, Rewritten, block_size, check_entries, iter_blocks

__all__ = ["HEAL_NAMESPACE", "heal_orphans"]

HEAL_NAMESPACE = uuidlib.UUID("6d1c3c52-53a4-4c62-9f0e-2a6f3f2b7a41")
"""The `uuid5` namespace of added result entries."""

_COPIED = (
    "isSidechain",
    "agentId",
    "userType",
    "entrypoint",
    "cwd",
    "sessionId",
    "version",
    "gitBranch",
    "timestamp",
)


def _message_id(entry: Entry) -> Any:
    message = entry.get("message")
    return message.get("id") if isinstance(message, dict) else None


def heal_orphans(entries: Sequence[Any], policy: PrunePolicy | None = None) -> Rewritten:
    """Add a result entry with `policy.orphan_note` for each call that has no result in the history."""
    policy = policy if policy is not None else PrunePolicy()
    entries = check_entries(entries)
    answered = {
        block.get("tool_use_id") for entry in entries for _, block in iter_blocks(entry, "tool_result")
    }
    orphans: dict[int, list[str]] = {}  # index of the holding entry -> its unanswered call ids
    for position, entry in enumerate(entries):
        if entry.get("type") != "assistant" or not isinstance(entry.get("uuid"), str):
            continue
        for _, block in iter_blocks(entry, "tool_use"):
            ident = block.get("id")
            if isinstance(ident, str) and ident not in answered:
                orphans.setdefault(position, []).append(ident)
                answered.add(ident)  # a duplicated id is healed once
    if not orphans:
        return Rewritten(entries)
    after: dict[int, list[Entry]] = {}
    changes: list[Change] = []
    for position, idents in orphans.items():
        holder = entries[position]
        heal = _heal_entry(holder, idents, policy.orphan_note)
        end = position
        message_id = _message_id(holder)
        while (
            message_id is not None
            and end + 1 < len(entries)
            and entries[end + 1].get("type") == "assistant"
            and _message_id(entries[end + 1]) == message_id
        ):
            end += 1  # after the other blocks of the same API message, as the CLI places results
        after.setdefault(end, []).append(heal)
        for ident, block in zip(idents, heal["message"]["content"], strict=True):
            changes.append(
                Change(kind="orphan", uuid=heal["uuid"], tool_use_id=ident, chars_saved=-block_size(block))
            )
    out: list[Entry] = []
    for position, entry in enumerate(entries):
        out.append(entry)
        out.extend(after.get(position, ()))
    return Rewritten(out, tuple(changes))


def _heal_entry(holder: Entry, idents: list[str], note: str) -> Entry:
    name = "\n".join([holder["uuid"], *idents])
    entry: Entry = {
        "parentUuid": holder["uuid"],
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": ident, "content": note, "is_error": True}
                for ident in idents
            ],
        },
        "uuid": str(uuidlib.uuid5(HEAL_NAMESPACE, name)),
        "sourceToolAssistantUUID": holder["uuid"],
    }
    for field in _COPIED:
        if field in holder:
            entry[field] = holder[field]
    return entry
