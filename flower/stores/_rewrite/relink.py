"""Dropping entries without breaking the `parentUuid` chain.

The CLI rebuilds a conversation by walking `parentUuid` links back from the newest entry, so an entry
cannot simply disappear: whatever pointed at it must point at its nearest surviving ancestor instead.
That ancestor can only be found through the dropped entries themselves, so the relinking must see the
full list, dropped entries included (another implementation of this design relinked the list after filtering,
which broke the chain whenever the dropped entry sat in the middle of it).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from ._transcript import Entry, check_entries

__all__ = ["REFERENCE_FIELDS", "drop_entries"]

REFERENCE_FIELDS = ("parentUuid", "logicalParentUuid", "leafUuid")
"""Fields that name another entry by uuid: the parent link, a compaction boundary's logical parent and
a `last-prompt` entry's leaf. Each one that names a dropped entry is re-pointed."""


def drop_entries(entries: Sequence[Any], uuids: Collection[str]) -> list[Entry]:
    """The entries without those whose `uuid` is in `uuids`, every reference re-pointed over the gap.

    A reference to a dropped entry becomes a reference to its nearest ancestor that survives (or `None`
    when none does). Entries that do not change are returned as they are; changed ones are copies.
    """
    entries = check_entries(entries)
    drop = set(uuids)
    if not drop:
        return list(entries)
    parents: dict[str, Any] = {}
    for entry in entries:
        uuid = entry.get("uuid")
        if isinstance(uuid, str) and uuid in drop:
            parents[uuid] = entry.get("parentUuid")

    def survivor(ref: Any) -> Any:
        seen: set[str] = set()
        while isinstance(ref, str) and ref in parents and ref not in seen:
            seen.add(ref)  # a cycle of dropped entries ends the walk at no parent
            ref = parents[ref]
        return None if isinstance(ref, str) and ref in parents else ref

    out: list[Entry] = []
    for entry in entries:
        uuid = entry.get("uuid")
        if isinstance(uuid, str) and uuid in drop:
            continue
        stale = [
            name for name in REFERENCE_FIELDS if isinstance(entry.get(name), str) and entry[name] in parents
        ]
        if stale:
            entry = dict(entry)
            for name in stale:
                entry[name] = survivor(entry[name])
        out.append(entry)
    return out
