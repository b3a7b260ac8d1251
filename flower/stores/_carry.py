"""Entries a load adds to a history, carried into the store with the transcript's next append.

A load may add entries the store never had: `heal_orphans` answers a call a crash cut with an entry of
its own, and `mend_links` restores that answer when later entries name it. The SDK writes the loaded
history into the CLI's copy and the CLI chains the resumed turn to those entries; but the mirror sends
only the lines the CLI writes itself, never the copy's. Left at that, the store holds the resumed work
hanging off a parent it never received, and the next resume, walking back from the newest entry, stops
at the gap and replays the older branch (measured with CLI 2.1.332: the second resume after a kill saw
none of the first resume's work).

So a layer keeps what each load of a transcript added (`loaded`) and puts it in front of the next append
of that transcript (`take`): the store receives it before the resumed work that names it, and every
later resume walks one unbroken chain. A load nothing appends after (a report, a listing) stores nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from claude_agent_sdk import SessionKey, SessionStoreEntry

__all__ = ["Carried"]


def _slot(key: SessionKey) -> tuple[str, str, str]:
    return (str(key.get("project_key", "")), str(key.get("session_id", "")), key.get("subpath") or "")


def _uuid(entry: Any) -> str | None:
    uuid = entry.get("uuid") if isinstance(entry, dict) else None
    return uuid if isinstance(uuid, str) else None


class Carried:
    """What the last load of each transcript added, until its next append (see the module docstring)."""

    def __init__(self) -> None:
        self._added: dict[tuple[str, str, str], list[Any]] = {}

    def loaded(self, key: SessionKey, stored: Sequence[Any], returned: Sequence[Any]) -> frozenset[str]:
        """A load of `key` read `stored` and returned `returned`: keep what it added. The stored uuids."""
        have = frozenset(uuid for entry in stored if (uuid := _uuid(entry)) is not None)
        added = [entry for entry in returned if (uuid := _uuid(entry)) is not None and uuid not in have]
        if added:
            self._added[_slot(key)] = added
        else:
            self._added.pop(_slot(key), None)
        return have

    def take(self, key: SessionKey, entries: list[SessionStoreEntry]) -> list[SessionStoreEntry]:
        """`entries`, after what the last load of `key` added and they do not hold (once)."""
        added = self._added.pop(_slot(key), None)
        if not added:
            return entries
        present = {uuid for entry in entries if (uuid := _uuid(entry)) is not None}
        return [entry for entry in added if _uuid(entry) not in present] + entries
