"""Typed events a `Runtime` streams to `on_event` while a run goes.

Each event says which agent it comes from: `agent=None` is the main thread; otherwise the subagent's
type (a worker's name) as the main thread called it. Match on the class::

    def on_event(event: Event) -> None:
        match event:
            case ToolCall(agent=None, name=name):
                print("coordinator calls", name)
            case SubagentFinished(agent=agent, summary=summary):
                print(agent, "reported:", summary[:80])
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from .stores import LoadReport

__all__ = [
    "ApiError",
    "Event",
    "HandoffDone",
    "HandoffWarning",
    "Result",
    "StoreReport",
    "SubagentFinished",
    "SubagentStarted",
    "Text",
    "ToolCall",
    "ToolResult",
]


@dataclass(frozen=True, kw_only=True)
class Text:
    """Prose an agent wrote (the main thread's, unless the CLI forwards subagent text)."""

    agent: str | None
    text: str


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """An agent called a tool."""

    agent: str | None
    name: str
    tool_use_id: str
    input: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ToolResult:
    """A tool call's result came back (its text; images are left out)."""

    agent: str | None
    tool_use_id: str
    text: str
    is_error: bool


@dataclass(frozen=True, kw_only=True)
class SubagentStarted:
    """The main thread started a subagent with the Agent tool."""

    agent: str | None
    """The subagent's type (a worker's name), when known."""
    task_id: str
    tool_use_id: str | None
    description: str
    background: bool


@dataclass(frozen=True, kw_only=True)
class SubagentFinished:
    """A subagent ended (`status`: completed, failed, stopped, killed); `summary` is its report."""

    agent: str | None
    task_id: str
    tool_use_id: str | None
    status: str
    summary: str


@dataclass(frozen=True, kw_only=True)
class Result:
    """The CLI finished a turn of the main thread; a run with background subagents has several."""

    agent: str | None = None
    session_id: str
    text: str
    is_error: bool
    cost_usd: float
    num_turns: int


@dataclass(frozen=True, kw_only=True)
class ApiError:
    """An API call failed: `retrying=True` while the CLI retries it, False once it gave up."""

    agent: str | None
    message: str
    status: int | None
    retrying: bool


@dataclass(frozen=True, kw_only=True)
class HandoffWarning:
    """The main thread's context is nearing the handoff threshold (sent once per session)."""

    agent: str | None = None
    context: int
    threshold: int
    window: int


@dataclass(frozen=True, kw_only=True)
class HandoffDone:
    """A session handed off: `retired` is done, the next generation starts from `document`."""

    agent: str | None = None
    generation: int
    """The generation that starts now (the first session is generation 1)."""
    retired: str
    reason: str
    """`threshold` (the context reached it) or `overflow` (the CLI refused a prompt too long)."""
    degraded: bool
    """The document was rebuilt mechanically because the session could not write it."""
    context: int
    path: str | None
    """Where the document was saved (None without a workbench)."""
    document: str


@dataclass(frozen=True, kw_only=True)
class StoreReport:
    """Layer 4 rewrote a history for a resume: what it expired, trimmed and pruned (`report`)."""

    agent: str | None = None
    report: LoadReport


Event: TypeAlias = (
    Text
    | ToolCall
    | ToolResult
    | SubagentStarted
    | SubagentFinished
    | Result
    | ApiError
    | HandoffWarning
    | HandoffDone
    | StoreReport
)
