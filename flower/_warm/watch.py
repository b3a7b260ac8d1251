"""`Watch`: whether the coordinator waits on a worker, and since when, from the SDK's messages.

The coordinator waits on a worker when a foreground Agent call of its own has no result yet (its turn
is held until every call of the reply has one), or when its turn has ended and background workers are
still running (the CLI starts a new turn when one reports). Anything else the main thread does ends the
wait: a new reply, a tool result, a new turn.

The time of its last request is estimated by the last main-thread input before the reply (the tool
result, or the start of the turn): the CLI sends the request right after, so the estimate is early by
the CLI's own handling, never late, and a ping timed from it is early rather than too late.
"""

from __future__ import annotations

from claude_agent_sdk import (
    AssistantMessage,
    ResultMessage,
    SystemMessage,
    TaskNotificationMessage,
    TaskStartedMessage,
    TaskUpdatedMessage,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from claude_agent_sdk.types import TERMINAL_TASK_STATUSES

__all__ = ["AGENT_TOOLS", "Watch"]

AGENT_TOOLS = frozenset({"Agent", "Task"})
"""The delegation tool's names: `Agent` on the wire, `Task` in older CLIs and the SDK's init message."""


def _context(usage: object) -> int:
    """The request tokens an API `usage` object counts (input, cache reads, cache writes)."""
    if not isinstance(usage, dict):
        return 0
    keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    found = [usage.get(key) for key in keys]
    return sum(n for n in found if isinstance(n, int) and not isinstance(n, bool) and n > 0)


class Watch:
    """The main thread's state as far as keeping its cache warm goes; `feed` it every SDK message."""

    def __init__(self, now: float) -> None:
        self.session_id: str | None = None
        """The session, once the CLI named it."""
        self.requested_at = now
        """When the coordinator's last request went out (estimated: see the module docstring)."""
        self.reply: str | None = None
        """The uuid of the first entry of the coordinator's last reply (the request a ping sends again)."""
        self.epoch = 0
        """Counts the coordinator's replies: a ping series belongs to one of them."""
        self.context = 0
        """Tokens of the coordinator's last request (its reply's `usage`: input, cache reads and writes):
        the prefix a ping reads again."""
        self._input_at = now
        self._reply_id: str | None = None
        self._calls: set[str] = set()  # foreground-or-not Agent calls of the main thread without a result
        self._tasks: set[str] = set()  # subagent tasks started and not ended
        self._turn_over = False

    @property
    def waiting(self) -> bool:
        """The coordinator has nothing to do until a worker returns."""
        return bool(self._calls) or (self._turn_over and bool(self._tasks))

    def feed(self, message: object, now: float) -> None:
        """Take one message of the run's stream, received at `now`."""
        if isinstance(message, TaskStartedMessage):
            self._tasks.add(message.task_id)
        elif isinstance(message, TaskNotificationMessage):
            self._tasks.discard(message.task_id)
        elif isinstance(message, TaskUpdatedMessage):
            if str((message.patch or {}).get("status", "")) in TERMINAL_TASK_STATUSES:
                self._tasks.discard(message.task_id)
        elif isinstance(message, SystemMessage):
            if message.subtype == "init":  # a new turn: the CLI is about to send a request
                session = message.data.get("session_id")
                self.session_id = session if isinstance(session, str) and session else self.session_id
                self._turn_over, self._input_at = False, now
        elif isinstance(message, AssistantMessage):
            if message.parent_tool_use_id is None and message.error is None:
                self._reply(message)
        elif isinstance(message, UserMessage):
            if message.parent_tool_use_id is None:
                self._input_at = now
                if not isinstance(message.content, str):
                    for block in message.content:
                        if isinstance(block, ToolResultBlock):
                            self._calls.discard(block.tool_use_id)
        elif isinstance(message, ResultMessage):
            self._turn_over = True
            self._calls.clear()
            self.session_id = message.session_id or self.session_id

    def _reply(self, message: AssistantMessage) -> None:
        if message.message_id is None or message.message_id != self._reply_id:
            self._reply_id = message.message_id
            self.reply = message.uuid
            self.requested_at = self._input_at
            self.epoch += 1
            self.context = _context(message.usage)
        self._turn_over = False
        if message.session_id:
            self.session_id = message.session_id
        for block in message.content:
            if isinstance(block, ToolUseBlock) and block.name in AGENT_TOOLS:
                self._calls.add(block.id)
