"""What the hook chains share: the state of recent tool calls, the wait for a call's other callbacks, and
the answer that refuses a call.

The CLI runs all hook callbacks of one tool call at once and keeps only the last answer to end (measured
for PostToolUse rewrites and PreToolUse denials), so `spill._chain` and `wall._deny_chain` make the
callbacks of one call meet by its `tool_use_id` and wait for each other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Generic, TypeVar

import anyio
from claude_agent_sdk.types import HookJSONOutput

__all__ = ["RecentCalls", "await_others", "deny"]

T = TypeVar("T")

_YIELDS: Final = 3  # event-loop turns a callback lets pass for the call's other callbacks to start
_REMEMBERED: Final = 1024  # recent calls remembered (a late callback still finds its call)


class RecentCalls(Generic[T]):
    """State per call, by `tool_use_id`; past `size` calls the oldest is forgotten."""

    def __init__(self, factory: Callable[[], T], size: int = _REMEMBERED) -> None:
        self._factory = factory
        self._size = size
        self._calls: dict[str, T] = {}

    def __getitem__(self, key: str) -> T:
        call = self._calls.get(key)
        if call is None:
            call = self._calls[key] = self._factory()
            while len(self._calls) > self._size:
                del self._calls[next(iter(self._calls))]
        return call


async def await_others(started: list[anyio.Event], *, expected: bool, grace: float, wait: float) -> None:
    """Let a call's other callbacks start (a few event-loop turns; up to `grace` seconds when one is
    `expected` and none has started), then wait up to `wait` seconds for those that started to end."""
    for _ in range(_YIELDS):
        await anyio.sleep(0)
    if expected and not started:
        with anyio.move_on_after(grace):
            while not started:
                await anyio.sleep(0.005)
    with anyio.move_on_after(wait):
        for event in list(started):
            await event.wait()


def deny(reason: str) -> HookJSONOutput:
    """A PreToolUse callback's answer that refuses the call; the model reads `reason` as its result."""
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }
