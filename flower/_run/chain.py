"""The check after a run: every entry the run stored names a parent the store holds.

The CLI rebuilds a conversation by walking `parentUuid` links back from the newest entry, so an entry
whose parent never reached the store hides itself and everything after it from the next resume: that
resume walks back from the older leaf and never sees the run's work. The check is cheap: it reads only
what the run itself handed to the store (its appends, routed through the outbox), against the uuids the
store returned when the run loaded the session. Each appended entry names no parent, or one of those,
or one the run appended itself; a link to anything else is a `Gap`, and the run ends `ok=False` naming
it. A session's transcripts (main and subagents) share one set: a subagent's entry may name the main
transcript's (a compaction agent's do).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Gap", "Links"]


@dataclass(frozen=True)
class Gap:
    """An entry the run stored whose parent the store never received."""

    session_id: str
    subpath: str
    """'' for the main transcript."""
    uuid: str
    parent: str
    kind: str
    """The entry's `type`."""

    def describe(self) -> str:
        where = self.session_id + (f"/{self.subpath}" if self.subpath else "")
        return f"entry {self.uuid} ({self.kind}) of session {where} names as its parent {self.parent}"


class Links:
    """The links of one session's entries, as a run loads and appends them (see the module docstring)."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self._known: set[str] = set()
        self._parents: dict[str, tuple[str, str, str]] = {}  # uuid -> (parent, subpath, type)
        self._appended: set[str] = set()

    def loaded(self, uuids: Iterable[str]) -> None:
        """A load returned entries with these uuids, as the store holds them."""
        self._known.update(uuids)

    def appended(self, subpath: str, entries: Sequence[Any]) -> None:
        """The run handed these entries of the transcript `subpath` to the store."""
        for entry in entries:
            uuid = entry.get("uuid") if isinstance(entry, dict) else None
            if not isinstance(uuid, str):
                continue
            self._appended.add(uuid)
            parent = entry.get("parentUuid")
            if isinstance(parent, str) and parent:
                self._parents[uuid] = (parent, subpath, str(entry.get("type") or "?"))

    def gaps(self) -> list[Gap]:
        """The appended entries whose parent is neither stored nor appended, in the order they came."""
        return [
            Gap(self.session_id, subpath, uuid, parent, kind)
            for uuid, (parent, subpath, kind) in self._parents.items()
            if parent not in self._appended and parent not in self._known
        ]
