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
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["USER_SOURCES", "Turns"]

logger = logging.getLogger("flower.delegate")

USER_SOURCES = frozenset({"sdk", "user"})
"""`promptSource` values of a prompt a person or the app sent (a turn the CLI starts itself says
`"system"`)."""


@dataclass
class _Session:
    prompt: str = ""
    """The last prompt id met."""
    taken: int = 0
    """Hands-on steps taken in the current user turn."""


@dataclass
class Turns:
    """Hands-on steps taken per session in its current user turn."""

    sessions: dict[str, _Session] = field(default_factory=dict)

    def taken(self, data: Mapping[str, Any]) -> int:
        """The steps already taken in the user turn of the call `data` (a PreToolUse hook input)."""
        session = self.sessions.setdefault(str(data.get("session_id")), _Session())
        prompt = data.get("prompt_id")
        if isinstance(prompt, str) and prompt and prompt != session.prompt:
            session.prompt = prompt
            if _sent_by_user(data.get("transcript_path"), prompt):
                session.taken = 0
        return session.taken

    def take(self, data: Mapping[str, Any]) -> None:
        """Count one step in the current user turn of the call's session."""
        self.sessions.setdefault(str(data.get("session_id")), _Session()).taken += 1


def _sent_by_user(path: object, prompt: str) -> bool:
    """Whether the transcript's entry that opened `prompt` is a prompt the user (the app) sent."""
    if not isinstance(path, str) or not path:
        return False
    needle = json.dumps(prompt)
    try:
        with open(path, encoding="utf-8", errors="replace") as transcript:
            for line in transcript:
                if needle not in line or '"promptSource"' not in line:
                    continue
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if (
                    entry.get("promptId") == prompt
                    and entry.get("type") == "user"
                    and "promptSource" in entry
                ):
                    return entry.get("promptSource") in USER_SOURCES
    except OSError as error:
        logger.warning("own steps: the transcript could not be read (%s); the user turn goes on", error)
    return False
