"""Turn the SDK's message stream into flower events, and keep what a `StepResult` needs."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    Message,
    ResultMessage,
    SystemMessage,
    TaskNotificationMessage,
    TaskStartedMessage,
    TaskUpdatedMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from claude_agent_sdk.types import TERMINAL_TASK_STATUSES

from .._glance import take_warnings
from .._usage import TokenUsage, UsageMeter
from .._util.content import refused_by_cli, text_of
from .._util.handlers import call_handler
from .._versions import version_warnings
from ..events import (
    ApiError,
    Event,
    KeepWarmPing,
    Result,
    SubagentFinished,
    SubagentStarted,
    TaskFinished,
    TaskStarted,
    Text,
    ToolCall,
    ToolResult,
)
from .reach import UNREACHABLE_AFTER, is_unreachable, retry_message

logger = logging.getLogger("flower.runtime")

EventHandler = Callable[[Event], "Awaitable[None] | None"]


def _brief(tool_input: dict[str, Any]) -> str:
    for key in ("description", "command", "file_path", "pattern", "url", "prompt"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return value if len(value) <= 120 else value[:117] + "..."
    return ""


def _describe(event: Event) -> str:
    """An event in one short line, for the debug log."""
    fields = []
    for name, value in vars(event).items():
        text = repr(value)
        fields.append(f"{name}={text if len(text) <= 80 else text[:77] + '...'}")
    return f"{type(event).__name__}({', '.join(fields)})"


class Tracker:
    """Follows one run: emits events, and records session, results, cost, context and denials."""

    def __init__(self, on_event: EventHandler | None) -> None:
        self._on_event = on_event
        self._agents: dict[str, str] = {}  # Agent tool_use id -> subagent type
        self._open_tasks: dict[str, str | None] = {}  # task id -> the tool_use id that started it
        self._kinds: dict[str, str] = {}  # task id -> the CLI's task_type, for a task that is not a subagent
        self._callers: dict[str, str | None] = {}  # tool_use id -> the agent that made the call
        self._ended: dict[str, str] = {}  # task id -> terminal status seen in a task_updated patch
        self.session_id: str | None = None
        self.results: list[ResultMessage] = []
        self.answers: list[ResultMessage] = []  # results of work turns (not of handoff-writing turns)
        self.writing = False  # a handoff turn is under way
        self._later: list[Event] = []  # events from outside the stream (the store), sent at the next message
        self.peak_context = 0
        self.context = 0  # the main thread's latest context (tokens)
        self.texts: list[str] = []  # the main thread's prose, for a degraded handoff
        self.calls: list[str] = []  # the main thread's tool calls, in one line each
        self.denials: list[str] = []
        self.usage = UsageMeter()
        self.answered = False  # the API answered at least once in this step
        self.unreachable_retries = 0  # retries in a row for no response (or refused credentials)
        self.unreachable_status: int | None = None
        self.mirror_errors: list[str] = []  # batches the SDK dropped after its store failed (mirror_error)
        self.pings: list[KeepWarmPing] = []  # the keep-warm requests of the run (`flower._warm`)
        self.unreported: dict[str, str] = {}  # task id -> what it was, for tasks whose end never came
        self._described: dict[str, str] = {}  # task id -> its description, as the CLI started it
        self._background: set[str] = set()  # tasks the CLI started in the background
        self.reports: list[str] = []  # this session's background workers' reports, for a degraded handoff
        self.interrupted = False  # flower interrupted this session at the handoff threshold
        self.refusing: set[str] = set()  # calls flower's handoff gate refused: not denials of the run

    @property
    def unreachable(self) -> bool:
        """Before any answer, the CLI retried `UNREACHABLE_AFTER` times in a row without reaching the API."""
        return not self.answered and self.unreachable_retries >= UNREACHABLE_AFTER

    @property
    def pending_tasks(self) -> int:
        """Tasks (subagents, background commands) started with no sign of an end."""
        return len(set(self._open_tasks) - set(self._ended))

    async def flush(self) -> None:
        """At the end of the stream: report subagents whose end came only as a status update."""
        for task_id, status in list(self._ended.items()):
            await self._task_finished(task_id, None, status, "")

    async def abandon(self, why: str) -> None:
        """At the end of a session: tasks still open will never report; each ends as `killed` (the CLI
        ends them with it), with `why` as its summary, and is kept in `unreported`."""
        for task_id in list(self._open_tasks):
            self.unreported[task_id] = self._what(task_id)
            logger.warning("task %s: %s", self.unreported[task_id], why)
            await self._task_finished(task_id, self._open_tasks[task_id], "killed", why)

    def _what(self, task_id: str) -> str:
        """A task in a few words: its worker's type (or the command's kind), id and description."""
        kind = self._kinds.get(task_id)
        name = self._agents.get(self._open_tasks.get(task_id) or "") if kind is None else kind
        return f"{name or 'task'} {task_id} ({self._described.get(task_id, '')!r})"

    async def emit(self, event: Event) -> None:
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("event %s", _describe(event))
        if self._on_event is None:
            return
        try:
            await call_handler(self._on_event, event)
        except Exception:  # a broken UI callback must not break the run
            logger.exception("on_event raised on %s; the run goes on", type(event).__name__)

    def _agent(self, parent_tool_use_id: str | None) -> str | None:
        if parent_tool_use_id is None:
            return None
        return self._agents.get(parent_tool_use_id, "subagent")

    async def ping(self, event: KeepWarmPing) -> None:
        """A keep-warm ping ended: its tokens count in the step's usage and cost; the event goes out."""
        self.pings.append(event)
        if event.usage.total:
            self.usage.add_ping(event.model, event.usage)
        await self.emit(event)

    def later(self, event: Event) -> None:
        """Queue an event that happened outside the message stream; it goes out before the next one."""
        self._later.append(event)

    async def feed(self, message: Message) -> None:
        while self._later:
            await self.emit(self._later.pop(0))
        for jailless in take_warnings():  # the coordinator met no glance jail (once per process)
            await self.emit(jailless)
        session = getattr(message, "session_id", None)
        if isinstance(session, str) and session:
            self.session_id = session
        if isinstance(message, AssistantMessage):
            await self._assistant(message)
        elif isinstance(message, UserMessage):
            await self._user(message)
        elif isinstance(message, ResultMessage):
            await self._result(message)
        elif isinstance(message, TaskStartedMessage):
            await self._task_started(message)
        elif isinstance(message, TaskNotificationMessage):
            await self._task_finished(message.task_id, message.tool_use_id, message.status, message.summary)
        elif isinstance(message, TaskUpdatedMessage):
            status = str((message.patch or {}).get("status", ""))
            if status in TERMINAL_TASK_STATUSES and message.task_id in self._open_tasks:
                # the notification with the report usually follows; flush() covers the case it does not
                self._ended[message.task_id] = status
        elif isinstance(message, SystemMessage) and message.subtype == "api_retry":
            await self._retry(message.data)
        elif isinstance(message, SystemMessage) and message.subtype == "mirror_error":
            # the SDK could not hand a batch to the store and dropped it: the run's store failed
            self.mirror_errors.append(str(getattr(message, "error", "") or message.data.get("error", "")))
            logger.warning(
                "the SDK dropped transcript entries its store did not take: %s", self.mirror_errors[-1]
            )
        elif isinstance(message, SystemMessage) and message.subtype == "init":
            for warning in version_warnings(message.data.get("claude_code_version")):
                await self.emit(warning)

    async def _retry(self, data: dict[str, Any]) -> None:
        code = data.get("error_status")
        if is_unreachable(data):
            self.unreachable_retries += 1
            self.unreachable_status = code if isinstance(code, int) else None
        else:
            self.unreachable_retries = 0
        await self.emit(
            ApiError(
                agent=None,
                message=retry_message(data),
                status=code if isinstance(code, int) else None,
                retrying=True,
            )
        )

    async def _assistant(self, message: AssistantMessage) -> None:
        agent = self._agent(message.parent_tool_use_id)
        if agent is None and message.model:
            self.usage.main_model = message.model
        if agent is None and message.usage:
            self.context = TokenUsage.from_api(message.usage).context
            self.peak_context = max(self.peak_context, self.context)
        session = message.session_id or self.session_id
        if message.error is None and session and message.message_id:  # counted if no result follows
            self.usage.add_reply(
                session, message.message_id, message.model, message.usage, main=agent is None
            )
        if message.error is None:
            self.answered = True
        else:
            text = " ".join(b.text for b in message.content if isinstance(b, TextBlock))
            await self.emit(
                ApiError(agent=agent, message=text or str(message.error), status=None, retrying=False)
            )
            return
        for block in message.content:
            if isinstance(block, TextBlock) and block.text:
                if agent is None:
                    self.texts.append(block.text)
                await self.emit(Text(agent=agent, text=block.text))
            elif isinstance(block, ToolUseBlock):
                self._callers[block.id] = agent
                if agent is None:
                    self.calls.append(f"{block.name} {_brief(block.input)}")
                if block.name in ("Agent", "Task") and agent is None:
                    self._agents[block.id] = str(block.input.get("subagent_type") or "subagent")
                await self.emit(
                    ToolCall(agent=agent, name=block.name, tool_use_id=block.id, input=dict(block.input))
                )

    async def _user(self, message: UserMessage) -> None:
        if isinstance(message.content, str):
            return
        agent = self._agent(message.parent_tool_use_id)
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                await self.emit(
                    ToolResult(
                        agent=agent,
                        tool_use_id=block.tool_use_id,
                        text=text_of(block.content),
                        is_error=bool(block.is_error),
                        refused=refused_by_cli(block.is_error, block.content),
                    )
                )

    async def _result(self, message: ResultMessage) -> None:
        self.results.append(message)
        self.usage.add_result(message.session_id, message.usage, message.model_usage)
        if not self.writing:
            self.answers.append(message)
        for denial in message.permission_denials or []:
            if isinstance(denial, dict) and denial.get("tool_use_id") not in self.refusing:
                self.denials.append(str(denial.get("tool_name", "")))
        await self.emit(
            Result(
                session_id=message.session_id,
                text=message.result or "",
                is_error=message.is_error,
                cost_usd=message.total_cost_usd or 0.0,
                num_turns=message.num_turns,
            )
        )

    async def _task_started(self, message: TaskStartedMessage) -> None:
        data = message.data
        self._open_tasks[message.task_id] = message.tool_use_id
        self._described[message.task_id] = message.description
        if data.get("is_backgrounded"):
            self._background.add(message.task_id)
        kind = _task_kind(message)
        if kind is not None and not data.get("subagent_type") and message.tool_use_id not in self._agents:
            self._kinds[message.task_id] = kind
            await self.emit(
                TaskStarted(
                    agent=self._callers.get(message.tool_use_id or ""),
                    task_id=message.task_id,
                    tool_use_id=message.tool_use_id,
                    description=message.description,
                    kind=kind,
                )
            )
            return
        agent = data.get("subagent_type") or self._agents.get(message.tool_use_id or "", None)
        await self.emit(
            SubagentStarted(
                agent=str(agent) if agent else None,
                task_id=message.task_id,
                tool_use_id=message.tool_use_id,
                description=message.description,
                background=bool(data.get("is_backgrounded", False)),
            )
        )

    async def _task_finished(self, task_id: str, tool_use_id: str | None, status: str, summary: str) -> None:
        if task_id not in self._open_tasks:
            return
        if status == "stopped" and self.interrupted and task_id in self._background:
            # the CLI's interrupt stops background workers too (measured, CLI 2.1.332): flower's own
            # interrupt at the handoff threshold cut this one off before its report
            cut = "stopped by the interrupt at the handoff threshold"
            self.unreported[task_id] = f"{self._what(task_id)}, {cut}"
            summary = "flower: the interrupt at the handoff threshold stopped this task before it reported"
            logger.warning("task %s", self.unreported[task_id])
        elif status == "completed" and summary and task_id in self._background:
            self.reports.append(f"{self._what(task_id)}:\n{summary}")
        tool_use_id = tool_use_id or self._open_tasks[task_id]
        del self._open_tasks[task_id]
        self._ended.pop(task_id, None)
        kind = self._kinds.pop(task_id, None)
        who = self._agents if kind is None else self._callers  # a subagent's type; who ran a command
        ended: dict[str, Any] = {"task_id": task_id, "tool_use_id": tool_use_id, "status": status}
        ended.update(agent=who.get(tool_use_id or ""), summary=summary)
        await self.emit(SubagentFinished(**ended) if kind is None else TaskFinished(kind=kind, **ended))


def _task_kind(message: TaskStartedMessage) -> str | None:
    """The CLI's kind of a task that is not a subagent (`local_bash`...), None for a subagent's.

    The CLI names it (`task_type`: `local_agent` for a subagent); a CLI that does not is taken to start
    subagents only, as CLIs before background commands did.
    """
    kind = getattr(message, "task_type", None) or message.data.get("task_type")
    if not isinstance(kind, str) or not kind or kind == "local_agent":
        return None
    return kind
