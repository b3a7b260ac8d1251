"""What the CLI replays on resume: the current branch of the transcript, after the last compaction.

A transcript is a tree, not a list: every entry names its parent (`parentUuid`), a rewind or an edited
prompt starts a sibling branch, a `/clear` or a compaction starts a new root (`parentUuid: null`), and
the results of parallel calls hang off their own calls. The CLI (measured with 2.1.332 on 15 real
sessions written by CLI 2.0.74 to 2.1.42: the calls and results it sent matched, id for id and in
order) rebuilds the conversation like this:

1. the *leaf* is the newest user or assistant entry that ends a branch: from each entry no other entry
   names as its parent, walk up over non-message entries (progress, system, attachments) to the first
   user or assistant entry; the one latest in the transcript wins (a sidechain entry only in a
   subagent's own transcript);
2. the *chain* is that leaf and its ancestors, up to the root: a compaction's boundary has no parent,
   so nothing before the last compaction is replayed, and neither is an abandoned branch;
3. the other entries of each API message on the chain (same `message.id`, parallel calls written on
   a side branch) and the results answering them are brought back in.

Everything else is history the model never sees again: rewriting it saves nothing, and a count of it
would overstate what a resume saves.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from ._transcript import Entry, content_blocks

__all__ = ["branch_uuids", "on_branch", "replayed"]

_MESSAGES = ("user", "assistant")


def _message_id(entry: Entry) -> str | None:
    message = entry.get("message")
    ident = message.get("id") if isinstance(message, dict) else None
    return ident if isinstance(ident, str) and ident else None


def _holds_result(entry: Entry) -> bool:
    return any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content_blocks(entry) or ())


def replayed(entries: Sequence[Any]) -> frozenset[int]:
    """The indices of the entries the CLI replays on resume (the current branch, see the module doc).

    Entries without a `uuid` (queue operations, `last-prompt`, snapshots ...) are never in it. A history
    whose messages carry no `uuid` at all cannot be walked: every index is returned.
    """
    count = len(entries)
    uuids: list[str | None] = [None] * count
    position: dict[str, int] = {}
    for index, entry in enumerate(entries):
        if isinstance(entry, dict):
            uuid = entry.get("uuid")
            if isinstance(uuid, str) and uuid:
                uuids[index] = uuid
                position[uuid] = index
    if not position:
        return frozenset(range(count))
    parent: list[int | None] = [None] * count
    named: set[int] = set()  # indices some entry names as its parent
    message = [False] * count
    sidechain = True
    for index, uuid in enumerate(uuids):
        if uuid is None:
            continue
        entry = entries[index]
        up = entry.get("parentUuid")
        if isinstance(up, str) and up in position:
            parent[index] = position[up]
            named.add(position[up])
        if entry.get("type") in _MESSAGES:
            message[index] = True
            sidechain = sidechain and entry.get("isSidechain") is True
    nearest: dict[int, int | None] = {}  # index -> nearest user/assistant entry at or above it

    def walk(index: int) -> int | None:
        path: list[int] = []
        current: int | None = index
        found: int | None = None
        while current is not None:
            if current in nearest:
                found = nearest[current]
                break
            if message[current]:
                found = current
                break
            nearest[current] = None  # provisional: a cycle ends the walk here
            path.append(current)
            current = parent[current]
        for step in path:
            nearest[step] = found
        return found

    leaf: int | None = None
    for index in range(count):
        if uuids[index] is None or index in named:
            continue
        found = walk(index)
        if found is None or (entries[found].get("isSidechain") is True and not sidechain):
            continue
        if leaf is None or found > leaf:
            leaf = found
    if leaf is None:
        return frozenset()
    chain: set[int] = set()
    current: int | None = leaf
    while current is not None and current not in chain:
        chain.add(current)
        current = parent[current]
    return frozenset(chain | _siblings(entries, chain, parent, uuids))


def _siblings(
    entries: Sequence[Any], chain: set[int], parent: list[int | None], uuids: list[str | None]
) -> set[int]:
    """The other entries of the chain's API messages, and the results answering any of them."""
    ids = {ident for index in chain if (ident := _message_id(entries[index])) is not None}
    if not ids:
        return set()
    holders = {
        index
        for index, entry in enumerate(entries)
        if uuids[index] is not None and entry.get("type") == "assistant" and _message_id(entry) in ids
    }
    found = set(holders)
    for index, entry in enumerate(entries):
        if parent[index] in holders and entry.get("type") == "user" and _holds_result(entry):
            found.add(index)
    return found - chain


def branch_uuids(entries: Sequence[Any]) -> frozenset[str] | None:
    """The uuids of the replayed entries, or None for a history without uuids (all of it replays).

    Unlike indices, uuids stay valid while the rewrites drop entries (a dropped entry's children are
    relinked onto the same branch): the pipeline computes them once and hands them to each step.
    """
    uuids = frozenset(u for i in replayed(entries) if isinstance(u := entries[i].get("uuid"), str))
    return uuids or None


def on_branch(entries: Sequence[Any], branch: Collection[str] | None) -> frozenset[int]:
    """The indices of the entries on `branch` (`branch_uuids`), or `replayed(entries)` when None."""
    if branch is None:
        return replayed(entries)
    return frozenset(i for i, e in enumerate(entries) if isinstance(e, dict) and e.get("uuid") in branch)
