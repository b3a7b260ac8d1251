"""Orphans: a call with no result anywhere gets one, so that every `tool_use` has its `tool_result`.

A call is left without a result when the process dies while the tool runs. The Messages API rejects a
history where a `tool_use` is not answered in the next user message, so a resumed session could fail on
every request. (Measured with CLI 2.1.332: the CLI now answers such a call itself on resume, "[Tool call
interrupted: the session ended before this call's result was recorded ...]"; healing here keeps the
repair explicit, with our wording, and independent of the CLI version.) Only the calls of the branch a
resume replays are healed (`replayed`).

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
from .branch import replayed

__all__ = ["HEAL_NAMESPACE", "heal_orphans", "is_healed"]

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
    """Add a result entry with `policy.orphan_note` for each call of the replayed branch (`replayed`)
    that has no result on it."""
    policy = policy if policy is not None else PrunePolicy()
    entries = check_entries(entries)
    scope = replayed(entries)
    answered = {
        block.get("tool_use_id")
        for position in scope
        for _, block in iter_blocks(entries[position], "tool_result")
    }
    orphans: dict[int, list[str]] = {}  # index of the holding entry -> its unanswered call ids
    for position, entry in enumerate(entries):
        if position not in scope or entry.get("type") != "assistant":
            continue
        if not isinstance(entry.get("uuid"), str):
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
        added = heal["message"]["content"]
        overhead = block_size(added) - sum(block_size(block) for block in added)  # brackets and commas
        for number, (ident, block) in enumerate(zip(idents, added, strict=True)):
            cost = block_size(block) + (overhead if number == 0 else 0)
            changes.append(Change(kind="orphan", uuid=heal["uuid"], tool_use_id=ident, chars_saved=-cost))
    out: list[Entry] = []
    for position, entry in enumerate(entries):
        out.append(entry)
        out.extend(after.get(position, ()))
    return Rewritten(out, tuple(changes))


def _heal_uuid(holder: str, idents: Sequence[str]) -> str:
    return str(uuidlib.uuid5(HEAL_NAMESPACE, "\n".join([holder, *idents])))


def is_healed(entry: Entry) -> bool:
    """Whether the entry is one `heal_orphans` added (its uuid is derived from its parent and calls).

    A copied history (a fork) can hold one; expiry and trim leave it alone, so that a second rewrite
    decides exactly as the first did.
    """
    if "toolUseResult" in entry or "sourceToolAssistantUUID" not in entry:
        return False  # the CLI's own result entries carry toolUseResult; an added one never does
    parent, uuid = entry.get("parentUuid"), entry.get("uuid")
    idents = [block.get("tool_use_id") for _, block in iter_blocks(entry, "tool_result")]
    names = [ident for ident in idents if isinstance(ident, str)]
    if not (isinstance(parent, str) and isinstance(uuid, str) and names) or len(names) != len(idents):
        return False
    return uuid == _heal_uuid(parent, names)


def _heal_entry(holder: Entry, idents: list[str], note: str) -> Entry:
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
        "uuid": _heal_uuid(holder["uuid"], idents),
        "sourceToolAssistantUUID": holder["uuid"],
    }
    for field in _COPIED:
        if field in holder:
            entry[field] = holder[field]
    return entry
