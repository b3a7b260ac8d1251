"""The course of one session against its handoff line: a pure object fed what the run reads, answering
what to do (warn, hold or stop the turn, hand off, give up waiting).

`run_generation` keeps the I/O (the client, the stream, the gate's hooks, the keeper); `Course` keeps its
decisions and the state they need, so they are tested as tables (`tests/handoff/test_course.py`):

- the first context seen is the session's floor (what a fresh session costs before any work);
- crossing `warn_at` once is a `HandoffWarning`;
- past the threshold no main-thread turn goes on working: a reply that calls tools makes the handoff due,
  and the turn is held by the gate or interrupted (`over`); once flower's interrupt is out, the replies
  before the result it produces are not stopped again;
- a result past the threshold with workers still out makes the handoff due too (the session waits for
  their reports, then hands off);
- a result the CLI refused as a prompt too long ends the session as an overflow;
- a wait on workers that runs past its guard hands off without them when the handoff is due (`lost`),
  and otherwise ends the session as stalled.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Literal

from claude_agent_sdk import AssistantMessage, ResultMessage, ToolUseBlock

from .._handoff.document import HandoffPolicy

__all__ = ["OVERFLOW_REASONS", "Course", "Kind", "Outcome"]

OVERFLOW_REASONS = frozenset({"blocking_limit", "prompt_too_long"})
"""`ResultMessage.terminal_reason` when the CLI refused a prompt too long, locally or after a 400."""

Kind = Literal["done", "handoff", "overflow", "unreachable", "stalled"]

NEVER = sys.maxsize
"""A warning line no context reaches."""


@dataclass(frozen=True)
class Outcome:
    """How a generation ended."""

    kind: Kind
    session_id: str | None
    context: int
    window: int
    threshold: int
    floor: int
    """The main thread's context at its first reply: what a fresh session costs before any work."""
    document: str = ""
    """The text the session wrote in its handoff turn ("" when it could not write one)."""
    why: str = ""
    lost: str = ""
    """Why the session handed off with workers still out: the wait for their reports ran past its guard."""


def continues(message: object) -> bool:
    """A main-thread reply that calls tools: the turn goes on, and the context with it."""
    return (
        isinstance(message, AssistantMessage)
        and message.parent_tool_use_id is None
        and any(isinstance(block, ToolUseBlock) for block in message.content)
    )


@dataclass
class Course:
    """One session's decisions about its handoff line, fed the messages the run reads."""

    active: bool
    """The session has a handoff policy that is enabled (else it never warns nor hands off)."""
    window: int
    threshold: int
    warn_at: int
    floor: int = 0
    warned: bool = False
    due: bool = False
    """A handoff is due: the session hands off once its work turn (and the wait for workers) is over."""
    reached: int = 0
    """The context when the handoff became due."""
    stopping: bool = False
    """flower's interrupt is out and the turn it stops has not ended yet."""
    lost: str = ""

    @classmethod
    def of(cls, policy: HandoffPolicy | None, window: int, until: int | None = None) -> Course:
        """A session's course under `policy` (None: no handoff) in a context window of `window` tokens;
        `until`: a coordinator's inline session, which hands off at that size (or at the policy's line,
        if lower) and warns of nothing."""
        if policy is None:
            return cls(active=False, window=window, threshold=window, warn_at=window)
        threshold, warn_at = policy.threshold(window), policy.warn_at(window)
        if until is not None:
            threshold = min(threshold, until)
            warn_at = NEVER
        return cls(active=policy.enabled, window=window, threshold=threshold, warn_at=warn_at)

    def warns(self, context: int) -> bool:
        """After each message: the floor is its first context; True once, when the warning line is crossed."""
        self.floor = self.floor or context
        if self.active and not self.warned and context >= self.warn_at:
            self.warned = True
            return True
        return False

    def over(self, message: object, context: int) -> bool:
        """A main-thread reply calling tools past the threshold: the handoff is due and this turn must not
        go on (the gate holds it, or it is interrupted). Never while flower's interrupt is out."""
        if not (self.active and context >= self.threshold and not self.stopping and continues(message)):
            return False
        self.due, self.reached = True, self.reached or context
        return True

    def interrupting(self) -> None:
        """flower interrupts the turn: the replies up to its result are not stopped again."""
        self.stopping = True

    def ended(self, message: ResultMessage, context: int, pending: int) -> str:
        """A result: why the session overflowed ("" when it did not); past the threshold with workers
        out, the handoff is due (after their reports)."""
        self.stopping = False
        if message.is_error and message.terminal_reason in OVERFLOW_REASONS:
            return f"the CLI refused a prompt too long ({message.terminal_reason})"
        if self.active and context >= self.threshold and pending:
            self.due, self.reached = True, self.reached or context
        return ""

    def gives_up(self, why: str) -> Kind:
        """The wait on workers ran past its guard: hand off without them if due, else the session stalled."""
        if self.due:
            self.lost = why
            return "handoff"
        return "stalled"

    def outcome(
        self, kind: Kind, session_id: str | None, context: int, document: str = "", why: str = ""
    ) -> Outcome:
        """How the session ended; its context is the one the handoff became due at, if it did."""
        return Outcome(
            kind,
            session_id,
            self.reached or context,
            self.window,
            self.threshold,
            self.floor,
            document,
            why,
            lost=self.lost,
        )
