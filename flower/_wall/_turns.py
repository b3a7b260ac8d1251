"""Which user turn a main-thread call belongs to: own steps are counted per user turn.

Every hook input carries the CLI's `prompt_id`, but the CLI gives a new one to each turn it starts
itself too: a background worker's report (a task notification) starts a turn with its own prompt id
(measured, CLI 2.1.337). What tells the two apart is in the transcript: the user entry that opens a turn
has `promptSource` `"sdk"` for a prompt the app sent, `"system"` (and `turnOrigin: "task_notification"`)
for one the CLI sent. So a new prompt id opens a new user turn only when the transcript says the app
(the user) sent it; when it cannot tell (no prompt id, no transcript, an entry without `promptSource`),
the count goes on: unsure, it refuses rather than hand out a new step.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio

__all__ = ["ENTRY_WAIT", "USER_SOURCES", "Turns", "wait_for_entry"]

logger = logging.getLogger("flower.delegate")

USER_SOURCES = frozenset({"sdk", "user"})
"""`promptSource` values of a prompt a person or the app sent (a turn the CLI starts itself says
`"system"`)."""

ENTRY_WAIT = 10.0
"""Seconds the wall waits for the CLI to write the entry that opened a turn (a hang bound, never reached
in a run that works: the entry comes within milliseconds)."""
_POLL = 0.02

_Entry = TypeVar("_Entry")


async def wait_for_entry(read: Callable[[], _Entry | None]) -> _Entry | None:
    """What `read` finds in a transcript, read again until the CLI has written it, for at most
    `ENTRY_WAIT` seconds (None then); `read` raises `OSError` when the transcript cannot be read."""
    waited = 0.0
    while (found := read()) is None and waited < ENTRY_WAIT:
        await anyio.sleep(_POLL)
        waited += _POLL
    return found


@dataclass
class _Session:
    prompt: str = ""
    """The last prompt id met."""
    taken: int = 0
    """Hands-on steps taken in the current user turn."""
    settling: anyio.Event | None = None
    """Set while the first call of a new prompt id reads the transcript."""


@dataclass
class Turns:
    """Hands-on steps taken per session in its current user turn."""

    sessions: dict[str, _Session] = field(default_factory=dict)
    read: dict[str, int] = field(default_factory=dict)
    """Per transcript: how far it was read (a turn's entries come after those of the turns before)."""

    async def settle(self, data: Mapping[str, Any]) -> None:
        """Start a new count when the call `data` (a PreToolUse hook input) is the first of a user turn.

        Awaited before `taken()`: calls of one message reach the hook at once, and the one that meets a
        new prompt id may wait on the transcript; the others wait for its answer, so that a count is
        never reset after a step was taken in the turn."""
        session = self.sessions.setdefault(str(data.get("session_id")), _Session())
        prompt = data.get("prompt_id")
        if isinstance(prompt, str) and prompt and prompt != session.prompt:
            session.prompt = prompt
            done = session.settling = anyio.Event()
            try:
                if await self._sent_by_user(data.get("transcript_path"), prompt):
                    session.taken = 0
            finally:
                done.set()
                session.settling = None
        elif session.settling is not None:
            await session.settling.wait()

    def taken(self, data: Mapping[str, Any]) -> int:
        """The steps already taken in the current user turn of the call's session."""
        return self.sessions.setdefault(str(data.get("session_id")), _Session()).taken

    def take(self, data: Mapping[str, Any]) -> None:
        """Count one step in the current user turn of the call's session."""
        self.sessions.setdefault(str(data.get("session_id")), _Session()).taken += 1

    async def _sent_by_user(self, path: object, prompt: str) -> bool:
        """Whether the transcript's entry that opened `prompt` is a prompt the user (the app) sent.

        The CLI may write that entry a moment after the turn's first tool call reaches the hook
        (measured: a client's second prompt), so the transcript is read again until it is there, for at
        most `ENTRY_WAIT` seconds; then the turn counts as not the user's."""
        if not isinstance(path, str) or not path:
            return False
        try:
            source = await wait_for_entry(lambda: self._source(path, prompt))
        except OSError as error:
            logger.warning("own steps: the transcript could not be read (%s); the user turn goes on", error)
            return False
        return source is not None and source in USER_SOURCES

    def _source(self, path: str, prompt: str) -> str | None:
        """The `promptSource` of the user entry that opened `prompt`, read from where the last read
        ended; None when it is not written yet."""
        needle = json.dumps(prompt).encode()
        with open(path, "rb") as transcript:
            transcript.seek(self.read.get(path, 0))
            for line in transcript:
                if not line.endswith(b"\n"):
                    break  # being written: read again next time
                self.read[path] = transcript.tell()
                if needle not in line:
                    continue
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if entry.get("promptId") == prompt and entry.get("type") == "user":
                    return str(entry.get("promptSource"))
        return None
