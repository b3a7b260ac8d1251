"""`Route`: where a session's appends go while a Runtime run writes it (the run's side of the outbox)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Protocol

from claude_agent_sdk import SessionKey, SessionStoreEntry

__all__ = ["Route"]


class Route(Protocol):
    """Where the appends of one session go while a run writes it (the Runtime's outbox)."""

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None: ...

    def loaded(self, subpath: str, lines: int, stored: Collection[str] = ()) -> None:
        """A load handed the SDK `lines` transcript lines to copy for a resume ('' is the main one),
        from stored entries with the uuids `stored`."""
