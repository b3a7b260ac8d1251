"""Orphans: a call with no result anywhere gets one, so that every `tool_use` has its `tool_result`.

A call is left without a result when the process dies while the tool runs. The Messages API rejects a
history where a `tool_use` is not answered in the next user message, so a resumed session could fail on
every request. Healing here keeps the repair explicit, with our wording, and independent of the CLI
version. Only the calls of the branch a resume replays are healed (`replayed`).

What the CLI does without it (measured with CLI 2.1.332), and so what a heal saves (`Change.chars_saved`):

- a call of the last message of the history, where a process that died leaves it (the only place met
  in real transcripts): the CLI answers it itself with `CLI_ORPHAN_NOTE` (180 characters). The heal
  saves that result's size less ours: 57 characters with the default note;
- a call of an earlier message (a history that went on past it): the CLI drops the call, or, when its
  entry also holds an answered call, answers it "[Tool result missing due to internal error]". The heal
  counts our result's size as added (negative), which leaves out what the call itself adds back.

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

from .._policies import Change, PrunePolicy
from ._transcript import Entry, Rewritten, block_size, check_entries, iter_blocks
from .branch import replayed

__all__ = ["CLI_ORPHAN_NOTE", "HEAL_NAMESPACE", "heal_orphans", "is_healed"]

HEAL_NAMESPACE = uuidlib.UUID("6d1c3c52-53a4-4c62-9f0e-2a6f3f2b7a41")
"""The `uuid5` namespace of added result entries."""
CLI_ORPHAN_NOTE = (
    "[Tool call interrupted: the session ended before this call's result was recorded, so its outcome is "
    "unknown. Check whether it took effect before relying on it or running it again.]"
)
"""The result CLI 2.1.332 gives a call of the history's last message that has none, when it resumes."""

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
    last = _last_message(entries, scope)
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
            if position in last:  # instead of the result the CLI would add, in the same place
                cli = block_size({**block, "content": CLI_ORPHAN_NOTE}) + (overhead if number == 0 else 0)
                changes.append(
                    Change(
                        kind="orphan",
                        uuid=heal["uuid"],
                        tool_use_id=ident,
                        chars_saved=cli - cost,
                        detail=f"instead of the CLI's own result ({cli} chars)",
                    )
                )
            else:
                changes.append(Change(kind="orphan", uuid=heal["uuid"], tool_use_id=ident, chars_saved=-cost))
    out: list[Entry] = []
    for position, entry in enumerate(entries):
        out.append(entry)
        out.extend(after.get(position, ()))
    return Rewritten(out, tuple(changes))


def _last_message(entries: list[Entry], scope: frozenset[int]) -> frozenset[int]:
    """The indices of the entries of the replayed branch's last API message (the last assistant entry's
    `message.id`), when nothing but results follows it on the branch; empty otherwise. A `<synthetic>`
    API-error entry is passed over: the CLI does not replay it."""
    found: int | None = None
    for position in sorted(scope, reverse=True):
        entry = entries[position]
        if entry.get("type") == "assistant" and entry.get("isApiErrorMessage") is not True:
            found = position
            break
        if entry.get("type") == "user" and not any(True for _ in iter_blocks(entry, "tool_result")):
            return frozenset()  # a prompt after it: the history went on
    if found is None:
        return frozenset()
    ident = _message_id(entries[found])
    if ident is None:
        return frozenset({found})
    return frozenset(
        position
        for position in scope
        if entries[position].get("type") == "assistant" and _message_id(entries[position]) == ident
    )


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
