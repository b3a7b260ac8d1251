"""A stored chain with a missing link, mended on load: entries that name a parent the store never
received are joined back to the history they continue.

A run resumed after a crash could store entries whose parent it never stored: before flower stored them
too, the answer `heal_orphans` gives a call the crash cut was in the resumed copy only, and the CLI chained
the resumed turn to it. The CLI rebuilds a conversation by walking `parentUuid` links back from the newest
entry, so the next resume stopped at the missing link and replayed the older branch: the resumed run's
work was hidden. This step runs first at every load, over the whole history:

- a missing parent that is the answer `heal_orphans` gives a call still unanswered (its uuid is derived
  from the entry holding the call) is restored after that entry: the chain is whole again, exactly as
  the CLI had it;
- any other missing parent: the entry is relinked to the tip of the history before it (the newest entry
  that nothing before it continues), after an answer is added for that tip's calls when they have none:
  what the resume that wrote the entry continued from.

Only entries of the main thread (not `isSidechain`) with an earlier entry to attach to are mended: a
subagent's transcript may name the main transcript's entries (a compaction agent's do), and a file whose
first entry names an older one is a partial copy, not a crash. Each mend is a `Change` of kind
`relinked`. The stored entries never change; a restored answer is new to the store and reaches it with
the session's next append (`flower.stores._carry`), after which no load needs to mend it again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._policies import Change, PrunePolicy
from ._transcript import Entry, Rewritten, check_entries, iter_blocks
from .heal import _heal_entry, _heal_uuid

__all__ = ["mend_links"]


def _uuid(entry: Entry) -> str | None:
    uuid = entry.get("uuid")
    return uuid if isinstance(uuid, str) and uuid else None


def _message_id(entry: Entry) -> Any:
    message = entry.get("message")
    return message.get("id") if isinstance(message, dict) else None


def _unanswered(entries: list[Entry]) -> dict[int, list[str]]:
    """index of an assistant entry -> the ids of its calls no result in the history answers."""
    answered = {block.get("tool_use_id") for e in entries for _, block in iter_blocks(e, "tool_result")}
    found: dict[int, list[str]] = {}
    for index, entry in enumerate(entries):
        if entry.get("type") != "assistant" or _uuid(entry) is None:
            continue
        idents = [b.get("id") for _, b in iter_blocks(entry, "tool_use") if b.get("id") not in answered]
        if idents and all(isinstance(ident, str) for ident in idents):
            found[index] = [str(ident) for ident in idents]
    return found


def _message_end(entries: list[Entry], index: int) -> int:
    """The last entry of the API message `entries[index]` belongs to (parallel calls are written apart)."""
    end, message_id = index, _message_id(entries[index])
    while (
        message_id is not None
        and end + 1 < len(entries)
        and entries[end + 1].get("type") == "assistant"
        and _message_id(entries[end + 1]) == message_id
    ):
        end += 1
    return end


def _tip(entries: list[Entry], before: int, parents: dict[int, Any]) -> int | None:
    """The newest main-thread entry before `before` that no entry before `before` names as its parent."""
    named = {parents.get(i, entries[i].get("parentUuid")) for i in range(before)}
    for index in range(before - 1, -1, -1):
        entry = entries[index]
        uuid = _uuid(entry)
        if uuid is not None and entry.get("isSidechain") is not True and uuid not in named:
            return index
    return None


def mend_links(entries: Sequence[Any], policy: PrunePolicy | None = None) -> Rewritten:
    """The history with every main-thread entry that names a missing parent joined back (see the module
    docstring); an added answer carries `policy.orphan_note`."""
    policy = policy if policy is not None else PrunePolicy()
    entries = check_entries(entries)
    present = {uuid for entry in entries if (uuid := _uuid(entry)) is not None}
    broken = [
        index
        for index, entry in enumerate(entries)
        if _uuid(entry) is not None
        and entry.get("isSidechain") is not True
        and isinstance(entry.get("parentUuid"), str)
        and entry["parentUuid"] not in present
    ]
    if not broken:
        return Rewritten(entries)
    unanswered = _unanswered(entries)
    answers = {_heal_uuid(entries[i]["uuid"], idents): i for i, idents in unanswered.items()}
    added: dict[int, Entry] = {}  # the entry holding the calls -> the answer placed after its message
    parents: dict[int, Any] = {}  # index -> its new parent
    changes: list[Change] = []

    def answer(holder: int) -> str:
        heal = added.get(holder) or _heal_entry(entries[holder], unanswered[holder], policy.orphan_note)
        added[holder] = heal
        return str(heal["uuid"])

    for index in broken:
        entry, missing = entries[index], entries[index]["parentUuid"]
        if missing in answers:
            answer(answers[missing])
            detail = f"its parent {missing}, the answer to a call a crash cut, restored"
        else:
            tip = _tip(entries, index, parents)
            if tip is None:
                continue
            parents[index] = answer(tip) if tip in unanswered else entries[tip]["uuid"]
            detail = f"named {missing}, which the store does not hold; now {parents[index]}"
        changes.append(Change(kind="relinked", uuid=entry["uuid"], detail=detail))
    after: dict[int, list[Entry]] = {}
    for holder in sorted(added):
        after.setdefault(_message_end(entries, holder), []).append(added[holder])
    out: list[Entry] = []
    for index, entry in enumerate(entries):
        out.append({**entry, "parentUuid": parents[index]} if index in parents else entry)
        out.extend(after.get(index, ()))
    return Rewritten(out, tuple(changes))
