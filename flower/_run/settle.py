"""When a prompt is done: its last turn has ended and no background worker's report is still owed to it.

The Agent tool runs a worker in the background by default. A worker that finishes while the coordinator's
turn goes on is reported in the SDK stream at once (`TaskNotificationMessage`), but the coordinator reads
the report only later: in the next request of that turn when the turn still calls tools, or, when the
turn is ending, in a new turn the CLI starts after the result (measured with CLI 2.1.332: a second
`ResultMessage` in the same stream). So neither a result with no task open nor the notification tells
that the coordinator has read everything; a run that stopped there lost the worker's report silently.

The CLI knows: with `CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS=1` (`STATE_ENV`) it sends
`session_state_changed` messages, `running` when a turn starts and `idle` once no further turn is owed
(its own schema: "fires after heldBackResult flushes and the bg-agent do-while exits: authoritative
turn-over signal"). A prompt is done at `idle` after a result, with no task flower saw start left open.

A CLI that sends no state (none seen by the first result) is read from the stream instead: a
notification that came after the coordinator's last input (the start of its turn, or a tool result)
missed that request, so a further turn is owed. This reading can be wrong when a worker ends just as
the CLI sends a request; the silence guard then ends the wait.

The wait itself has a hang guard (`Runtime(worker_timeout=...)`): once the coordinator's turn has ended,
a CLI silent for that long while it waits on workers is given up on, and the step says which workers
never reported.
"""

from __future__ import annotations

import math
from typing import Final

from claude_agent_sdk import (
    ResultMessage,
    SystemMessage,
    TaskNotificationMessage,
    UserMessage,
)

from .._errors import SpecError

__all__ = ["DEFAULT_WORKER_TIMEOUT", "STATE_ENV", "Settle", "check_worker_timeout"]

STATE_ENV: Final = "CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS"
"""Asks the CLI for its `session_state_changed` messages in the SDK stream (the SDK's own request for
them, `CLAUDE_CODE_SDK_READS_SESSION_STATE`, keeps them out of the stream)."""

DEFAULT_WORKER_TIMEOUT: Final = 1800.0
"""Seconds of silence from the CLI, after the coordinator's turn ended, before a run stops waiting for its
background workers. A busy worker is never silent that long: each of its requests and tool calls shows in
the stream, the CLI cuts a Bash call at 10 minutes at most, and a request at its API timeout (10 minutes)."""


def check_worker_timeout(timeout: float | None, owner: str) -> float:
    """`worker_timeout` (typed by the caller's `@checked`): seconds > 0, or None for no limit (returned as
    `math.inf`)."""
    if timeout is None:
        return math.inf
    if not 0 < timeout < math.inf:
        raise SpecError(f"{owner}: worker_timeout must be a number of seconds > 0 or None, got {timeout!r}")
    return float(timeout)


class Settle:
    """Follows one session's stream and says when its prompt is done; `feed` it every message."""

    def __init__(self) -> None:
        self.state: str | None = None
        """The CLI's latest session state (`running`, `idle`, `requires_action`), None while it sent none."""
        self.answered = False
        """A result came since the CLI last started a turn: the coordinator's turn is over."""
        self._owed = False  # without states: a notification came after the coordinator's last input

    @property
    def waiting(self) -> bool:
        """The coordinator's turn has ended and the prompt is not done: the run waits on its workers."""
        return self.answered

    def feed(self, message: object, open_tasks: int) -> bool:
        """Take one message; True when the prompt is done (`open_tasks`: tasks started, not ended)."""
        if isinstance(message, SystemMessage) and message.subtype == "session_state_changed":
            self.state = str(message.data.get("state") or "")
            if self.state == "running":
                self.answered = False
            return self.state == "idle" and self.answered and not open_tasks
        if isinstance(message, TaskNotificationMessage):
            self._owed = True
        elif isinstance(message, SystemMessage) and message.subtype == "init":
            self._owed = False  # a new turn: its first request carries what was notified before it
            self.answered = False
        elif isinstance(message, UserMessage) and message.parent_tool_use_id is None:
            self._owed = False  # the coordinator's next request carries it
        elif isinstance(message, ResultMessage):
            self.answered = True
            if self.state is None:
                return not open_tasks and not self._owed
            return self.state == "idle" and not open_tasks  # a CLI that says idle just before the result
        return False
