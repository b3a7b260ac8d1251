"""The handoff gate: past the handoff threshold with background workers out, the coordinator is asked to
end its turn instead of being interrupted.

Past the threshold no turn goes on working. Interrupting the turn is immediate, but the CLI's interrupt
stops the session's background workers too (measured with CLI 2.1.332: they end as `stopped`, with no
report), so their reports are lost. While workers are out, the session closes this gate instead: a
PreToolUse hook, installed in every session that has a handoff policy, refuses each further tool call of
the main thread (its hook input has no `agent_id`) with `HANDOFF_REASON`. The model ends its turn, the
session waits for the reports as the end of a step does (`settle`), and the handoff document is asked
for once the coordinator has read them. Workers' calls always pass.

It fails safe, back to the interrupt: when the model goes on calling tools (`REFUSALS` refused calls in
one turn), when a call the gate should have refused ran anyway (the hook is not in effect), and when no
worker is out (the interrupt then loses nothing).

The hook decides a call only once the run has read the reply that made it (`saw`): the SDK runs hook
callbacks beside the message stream, so without this the call that crosses the threshold could pass
before the run knows the threshold was crossed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, cast

import anyio
from claude_agent_sdk import (
    AssistantMessage,
    HookContext,
    HookMatcher,
    ResultMessage,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from claude_agent_sdk.types import HookEvent, HookInput, HookJSONOutput

from .._util.calls import deny

__all__ = ["HANDOFF_REASON", "REFUSALS", "Gate"]

HANDOFF_REASON: Final = (
    "flower: your context has reached the handoff line, so this call was not run. End your turn now: "
    "reply in a few words, without calling any tool. The reports of your background workers will reach "
    "you in this session; you will then be asked to write the handoff document for the session that "
    "takes over."
)
"""What the coordinator reads for a tool call refused at the handoff line."""

REFUSALS: Final = 3
"""Refused calls in one turn after which the next tool-calling reply is interrupted."""

_SEEN_WAIT: Final = 10.0  # seconds a hook waits for the run to read the reply (below the CLI's 60 s)


def _calls(message: object) -> list[str]:
    """The ids of the tool calls of a main-thread reply."""
    if not isinstance(message, AssistantMessage) or message.parent_tool_use_id is not None:
        return []
    return [block.id for block in message.content if isinstance(block, ToolUseBlock)]


class Gate:
    """One session's gate; `hooks()` go into its options, the run `saw()` every message it reads."""

    def __init__(self, reason: str = HANDOFF_REASON) -> None:
        self.reason = reason
        self.closed = False
        """Main-thread tool calls are refused."""
        self.refused: set[str] = set()
        """The ids of the calls the hook refused (they are not the wall's denials: `StepResult.denials`
        leaves them out)."""
        self.bypassed = False
        """A call the gate should have refused ran: the hook is not in effect in this session."""
        self._held: set[str] = set()  # calls made while the gate was closed
        self._in_turn = 0  # calls held in the current turn
        self._seen: set[str] = set()
        self._waiting: dict[str, anyio.Event] = {}

    def hooks(self) -> dict[HookEvent, list[HookMatcher]]:
        """The PreToolUse hook (every tool) to add to the session's options."""
        return {"PreToolUse": [HookMatcher(matcher=None, hooks=[self._decide])]}

    def holds(self, message: object, workers: int) -> bool:
        """A main-thread reply past the threshold calls tools: True when the gate refuses its calls, False
        when the run must interrupt (no worker out, too many refusals, or a hook not in effect)."""
        if not workers or self.bypassed or self._in_turn >= REFUSALS:
            return False
        calls = _calls(message)
        self.closed = True
        self._held.update(calls)
        self._in_turn += len(calls)
        return True

    def saw(self, message: object) -> None:
        """The run has read `message`: release the hooks waiting on its calls; notice a held call that
        ran anyway; a result ends the turn's count of refusals."""
        for call in _calls(message):
            self._seen.add(call)
            event = self._waiting.pop(call, None)
            if event is not None:
                event.set()
        if isinstance(message, UserMessage) and message.parent_tool_use_id is None:
            blocks = message.content if isinstance(message.content, list) else []
            for block in blocks:
                if isinstance(block, ToolResultBlock) and block.tool_use_id in self._held:
                    self.bypassed = self.bypassed or block.tool_use_id not in self.refused
        if isinstance(message, ResultMessage):
            self._in_turn = 0

    def open(self) -> None:
        """The handoff turn: the session may use its tools to write the document."""
        self.closed = False

    async def _decide(self, data: HookInput, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
        raw = cast(Mapping[str, Any], data)
        if raw.get("agent_id"):  # a worker's call
            return {}
        key = raw.get("tool_use_id") or tool_use_id
        if isinstance(key, str) and key not in self._seen:
            event = self._waiting.setdefault(key, anyio.Event())
            with anyio.move_on_after(_SEEN_WAIT):
                await event.wait()
        if not self.closed:
            return {}
        if isinstance(key, str):
            self.refused.add(key)
        return deny(self.reason)
