"""Typed events a `Runtime` sends to `on_event`, or yields from `stream()`, while a run goes.

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

from ._usage import TokenUsage

if TYPE_CHECKING:
    from .stores._policies import LoadReport

__all__ = [
    "ApiError",
    "Event",
    "GlanceWarning",
    "HandoffDone",
    "HandoffWarning",
    "KeepWarmPing",
    "Result",
    "SessionStarted",
    "StoreReport",
    "StoreWarning",
    "SubagentFinished",
    "SubagentStarted",
    "TaskFinished",
    "TaskStarted",
    "Text",
    "ToolCall",
    "ToolResult",
    "TracingWarning",
    "VersionWarning",
    "WorkbenchWarning",
]


@dataclass(frozen=True, kw_only=True)
class Text:
    """Prose an agent wrote (the main thread's, unless the CLI forwards subagent text)."""

    agent: str | None
    """Who: None for the main thread, else the subagent's type (a worker's name)."""
    text: str
    """The text block, as the model wrote it."""


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """An agent called a tool: the call as the model wrote it (a hook may still deny it)."""

    agent: str | None
    """Who: None for the main thread, else the subagent's type (a worker's name)."""
    name: str
    """The tool's name (`Bash`, `Read`, `Agent`...)."""
    tool_use_id: str
    """The call's id; the matching `ToolResult` carries the same one."""
    input: Mapping[str, Any] = field(default_factory=dict)
    """The call's arguments, as the model wrote them."""


@dataclass(frozen=True, kw_only=True)
class ToolResult:
    """A tool call's result came back (its text; images are left out).

    The text is what the model sees: after spill, a pointer and a preview; after a denial, the reason.
    """

    agent: str | None
    """Who: None for the main thread, else the subagent's type (a worker's name)."""
    tool_use_id: str
    """The id of the `ToolCall` this answers."""
    text: str
    """The result's text blocks, joined."""
    is_error: bool
    """The tool failed, or the call was denied."""
    refused: bool = False
    """The CLI refused the call before the tool ran (its own checks: an unknown tool, invalid input, a
    subagent's Write of a `REPORT*.md`...); nothing happened. A hook's denial is named in
    `StepResult.denials`."""


@dataclass(frozen=True, kw_only=True)
class SubagentStarted:
    """The main thread started a subagent with the Agent tool (other tasks of the CLI, such as a Bash
    command in the background, are `TaskStarted`)."""

    agent: str | None
    """The subagent's type (a worker's name), when known."""
    task_id: str
    """The CLI's id for the subagent's task; `SubagentFinished` carries the same one."""
    tool_use_id: str | None
    """The id of the main thread's Agent call that started it."""
    description: str
    """The short description the main thread gave the task."""
    background: bool
    """It runs in the background (the Agent tool's default): the run waits for it before returning."""


@dataclass(frozen=True, kw_only=True)
class SubagentFinished:
    """A subagent ended (`status`: completed, failed, stopped, killed); `summary` is its report."""

    agent: str | None
    """The subagent's type (a worker's name), when known."""
    task_id: str
    """The CLI's id for the subagent's task, as in `SubagentStarted`."""
    tool_use_id: str | None
    """The id of the main thread's Agent call that started it."""
    status: str
    """How it ended: `completed`, `failed`, `stopped` or `killed` (also flower's word for a background
    subagent whose end never came: the run stopped waiting, the CLI ended, or the session handed off)."""
    summary: str
    """The CLI's account of its end: normally the subagent's final report ("" when none came); for a
    subagent flower gave up on, why (`StepResult.unreported` lists it)."""


@dataclass(frozen=True, kw_only=True)
class TaskStarted:
    """The CLI started a task that is not a subagent: a Bash command running in the background (the model
    asked for it, or the CLI moved a slow command there past its timeout), or another kind of CLI task.

    The run waits for it as for a background subagent: the CLI tells the model when it ends.
    """

    agent: str | None
    """Who started it: None for the main thread, else the subagent's type."""
    task_id: str
    """The CLI's id for the task; `TaskFinished` carries the same one."""
    tool_use_id: str | None
    """The id of the tool call that started it (the Bash call)."""
    description: str
    """The task's description (a Bash call's own `description`, else the command)."""
    kind: str
    """The CLI's kind of task: `local_bash` for a background command (others as the CLI names them)."""


@dataclass(frozen=True, kw_only=True)
class TaskFinished:
    """A task of `TaskStarted` ended (`status`: completed, failed, stopped, killed)."""

    agent: str | None
    """Who started it: None for the main thread, else the subagent's type."""
    task_id: str
    """The CLI's id for the task, as in `TaskStarted`."""
    tool_use_id: str | None
    """The id of the tool call that started it."""
    kind: str
    """The CLI's kind of task, as in `TaskStarted`."""
    status: str
    """How it ended: `completed`, `failed`, `stopped` or `killed` (also for a task whose end never came,
    as for `SubagentFinished`)."""
    summary: str
    """The CLI's account of its end, e.g. `Background command "..." completed (exit code 0)`; for a task
    flower gave up on, why."""


@dataclass(frozen=True, kw_only=True)
class Result:
    """The CLI finished a turn of the main thread; a run with background subagents has several."""

    agent: str | None = None
    """Always None: results are the main thread's."""
    session_id: str
    """The session the result belongs to."""
    text: str
    """The final answer of that turn (or the error message)."""
    is_error: bool
    """The turn ended in an error (API errors after retries, a budget or turn limit, a prompt too long)."""
    cost_usd: float
    """The session's cumulative cost so far, as the CLI reports it."""
    num_turns: int
    """The CLI's turn count for this result."""


@dataclass(frozen=True, kw_only=True)
class ApiError:
    """An API call failed: `retrying=True` while the CLI retries it, False once the run gave up on it.

    Before the API has answered once in a run, a connection that fails (DNS, refused, TLS) or credentials
    it refuses (401/403) end the run after two attempts (about 1.5 s) instead of the CLI's minutes of
    retries: the last `ApiError` then carries the cause in the CLI's words, e.g. "Can't reach the API
    server — check your internet or DNS (ENOTFOUND) — getaddrinfo ENOTFOUND api.example.invalid".
    """

    agent: str | None
    """Who: None for the main thread, else the subagent's type (a worker's name)."""
    message: str
    """The error, for a person: the HTTP status and kind while retrying, the cause once given up."""
    status: int | None
    """The HTTP status, when there was one (401, 429, 500, 529...); None when no response came."""
    retrying: bool
    """True while the CLI retries; False once the run gave up (it then fails with this message)."""


@dataclass(frozen=True, kw_only=True)
class HandoffWarning:
    """The main thread's context is nearing the handoff threshold (sent once per session)."""

    agent: str | None = None
    """Always None: the watermark is the main thread's."""
    context: int
    """The main thread's context now, in tokens (input + cache read + cache creation)."""
    threshold: int
    """The context at which the session will hand off."""
    window: int
    """The context window the threshold was computed from."""


@dataclass(frozen=True, kw_only=True)
class HandoffDone:
    """A session handed off: `retired` is done, the next generation starts from `document`."""

    agent: str | None = None
    """Always None: handoffs are the main thread's."""
    generation: int
    """The generation that starts now (the first session is generation 1)."""
    retired: str
    """The id of the session that handed off."""
    reason: str
    """`threshold` (the context reached it) or `overflow` (the CLI refused a prompt too long)."""
    degraded: bool
    """The document was rebuilt mechanically because the session could not write it."""
    context: int
    """The main thread's context when the handoff became due, in tokens."""
    path: str | None
    """Where the document was saved (None without a workbench)."""
    document: str
    """The handoff document (Markdown, five sections) the next generation starts from."""


@dataclass(frozen=True, kw_only=True)
class KeepWarmPing:
    """A keep-warm request renewed the coordinator's prompt cache while it waited on a worker.

    It read the coordinator's last request again for one output token, from a private fork of the
    session (`KeepWarmPolicy`): no entry in the session, its store or its transcript. Its tokens count in
    `StepResult.cost_usd` and `StepResult.usage.keep_warm`, and `flower report` reads them from the
    workspace's `.flower/keep-warm.jsonl`.
    """

    agent: str | None = None
    """Always None: the cache kept is the main thread's."""
    session_id: str
    """The coordinator's session."""
    number: int
    """1 for the first ping of this wait, then 2, 3..."""
    waited_s: float
    """Seconds since the coordinator's last request, when the ping started."""
    duration_s: float = 0.0
    """Seconds the ping took, its CLI's start included (about 1 to 3 s)."""
    ok: bool
    """The API answered it: the prefix was read, and lives another cache lifetime."""
    error: str | None = None
    """Why not: the API refused it, the fork failed, or the worker returned first (`cancelled`)."""
    cancelled: bool = False
    """The worker returned (or the run ended) while it was in flight: its CLI was stopped. If its request
    had already gone out, the API bills it, and flower counts it at its estimated price (`estimated`)."""
    estimated: bool = False
    """`usage` and `cost_usd` are flower's estimate of a request stopped in flight, not the CLI's count:
    the last ping of the same wait (the same request), else the coordinator's last request read again."""
    usage: TokenUsage = field(default_factory=TokenUsage)
    """Its tokens as the CLI counted them (cache read for the prefix, a few written, one output)."""
    model: str = ""
    """The model that answered (the coordinator's)."""
    cost_usd: float = 0.0
    """`usage` priced by flower's cost model, as `StepResult.cost_usd`."""
    cli_cost_usd: float = 0.0
    """The CLI's own price of it."""
    requests: int = 0
    """Requests it sent (1; more would mean the CLI retried a reply cut at one token)."""


@dataclass(frozen=True, kw_only=True)
class StoreReport:
    """Layer 4 rewrote a history for a resume: what it expired, trimmed and pruned (`report`).

    Sent once per transcript the resume loaded: the main one, then each subagent's (`report.subpath`).
    """

    agent: str | None = None
    """Always None (a subagent's transcript is named by `report.subpath`)."""
    report: LoadReport
    """What the load rewrote; `report.summary()` gives one line."""


@dataclass(frozen=True, kw_only=True)
class SessionStarted:
    """The run's session is known, before its CLI starts: a process that dies can be resumed by this id.

    Sent for the session a run starts, resumes or forks, then for each one a handoff starts.
    """

    agent: str | None = None
    """Always None: sessions are the main thread's."""
    session_id: str
    """The session the run writes from now on (`Runtime.run(..., resume=session_id)` continues it)."""
    resumed: bool
    """The run continues a session that existed (`resume=`, not a fork)."""
    fork_of: str | None = None
    """The session a fork copies (`fork=True`), else None."""


@dataclass(frozen=True, kw_only=True)
class StoreWarning:
    """The session store did not take the run's entries, or the lease of its session was lost; or, with
    `resolved=True`, it took them again (or the lease is back).

    The entries wait in the workspace's outbox meanwhile and the run goes on; what is still waiting when
    the run ends makes its `StepResult` fail, with the count (see docs/fleet.md, Durability).
    """

    agent: str | None = None
    """Always None."""
    message: str
    """What failed and why, or what recovered."""
    store: str
    """The store (its path, or its DSN without password)."""
    pending: int
    """Entries waiting in the outbox for the store."""
    resolved: bool = False
    """The store takes the entries again (or the lease was taken back)."""


@dataclass(frozen=True, kw_only=True)
class VersionWarning:
    """The installed SDK or the running CLI is outside the versions flower was tested with.

    Sent once per process and component, in the first run that meets it (and logged on `flower.versions`).
    The run goes on; `flower doctor` checks the facts flower relies on against what is installed.
    """

    agent: str | None = None
    """Always None."""
    component: str
    """`claude-agent-sdk` or `Claude Code CLI`."""
    version: str
    """The version found."""
    tested: str
    """The tested range, e.g. `0.2.184 to 0.2.189` (`flower doctor` prints it)."""
    message: str
    """The warning, for a person."""


@dataclass(frozen=True, kw_only=True)
class WorkbenchWarning:
    """The workbench could not be used at some point of the run; the run went on without it there.

    A read-only or full disk, or a directory where `INDEX.md` should be: the step then starts without
    the index in its prompt, or a handoff document is not saved (it still reaches the next generation).
    """

    agent: str | None = None
    """Always None: the workbench is the run's."""
    message: str
    """What failed and why (the `WorkbenchError`'s message)."""
    path: str | None
    """The file or directory involved, when known."""


@dataclass(frozen=True, kw_only=True)
class TracingWarning:
    """The run's spans or metrics could not all be exported (`flower.tracing`); the run is not affected.

    An endpoint that refuses or does not answer, or an export still going when `TracingPolicy.flush_timeout`
    ran out (it goes on in the background). Also logged on `flower.tracing`.
    """

    agent: str | None = None
    """Always None."""
    message: str
    """What failed, for a person."""


@dataclass(frozen=True, kw_only=True)
class GlanceWarning:
    """This machine gives glances no jail: the coordinator runs only glance's core commands itself.

    Sent once per process, in the run whose coordinator first meets it (and logged on `flower.glance`).
    The run goes on: other commands are refused with the reason, and the coordinator delegates them.
    `flower doctor` shows what the jail probe found.
    """

    agent: str | None = None
    """Always None: glances are the main thread's."""
    message: str
    """The warning, for a person."""
    reason: str
    """Why there is no jail (the probe's finding: the kernel has no Landlock, the launcher failed...)."""


Event: TypeAlias = (
    Text
    | ToolCall
    | ToolResult
    | SubagentStarted
    | SubagentFinished
    | TaskStarted
    | TaskFinished
    | Result
    | ApiError
    | HandoffWarning
    | HandoffDone
    | StoreReport
    | KeepWarmPing
    | WorkbenchWarning
    | VersionWarning
    | TracingWarning
    | GlanceWarning
    | SessionStarted
    | StoreWarning
)
"""Any event `Runtime.run(on_event=...)` may receive, or `Runtime.stream()` may yield."""
