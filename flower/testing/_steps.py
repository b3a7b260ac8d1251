"""What a script can answer: replies (text, tool calls, thinking, usage) and failures.

A script is a list of steps, or a callable that returns one step per request. A step is one of:

- a `Reply` (build it with `reply(...)`; a bare `str` or `ToolUse` in a list is shorthand for a reply
  holding just that block);
- a failure: `http_error(529)`, `prompt_too_long(...)`, `drop_connection()`, `stream_error()`;
- a callable `step(request) -> step` deciding from the request it answers (read a tool_result, follow a
  pointer), possibly returning another callable's answer.

Example::

    steps = [
        reply(bash("ls"), bash("pwd")),           # two parallel tool calls in one message
        http_error(529),                          # the CLI retries this request...
        lambda req: f"saw {len(req.tool_results)} results",   # ...and this answers the retry
    ]
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from .._errors import SpecError

if TYPE_CHECKING:
    from ._requests import RecordedRequest

__all__ = [
    "Block",
    "DropConnection",
    "HttpError",
    "Reply",
    "Step",
    "StepFunction",
    "StreamError",
    "Text",
    "Thinking",
    "ToolUse",
    "Usage",
    "agent",
    "bash",
    "drop_connection",
    "http_error",
    "prompt_too_long",
    "read",
    "reply",
    "stream_error",
    "tool_use",
]


@dataclass(frozen=True)
class Text:
    """A text block of an assistant message."""

    text: str
    """The text the model "writes"."""

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise SpecError(f"Text needs a str, got {type(self.text).__name__}")


@dataclass(frozen=True)
class Thinking:
    """A thinking block (sent before the other blocks, with a fake signature)."""

    thinking: str
    """The thinking text."""
    signature: str = "c2NyaXB0ZWQtbW9kZWw="
    """The block's signature (the CLI passes it back as is; any string does)."""

    def __post_init__(self) -> None:
        if not isinstance(self.thinking, str):
            raise SpecError(f"Thinking needs a str, got {type(self.thinking).__name__}")


@dataclass(frozen=True)
class ToolUse:
    """A tool call. Several in one `Reply` are parallel calls; `id` is generated when omitted."""

    name: str
    """The tool's name as the CLI offers it (`Bash`, `Read`, `Agent`...)."""
    input: Mapping[str, Any]
    """The call's arguments (JSON-serialisable)."""
    id: str | None = None
    """The `tool_use` id; generated when None. Fix it to find the result later (`request.tool_result(id)`)."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise SpecError("ToolUse needs a non-empty tool name")
        if not isinstance(self.input, Mapping):
            raise SpecError(f"ToolUse input must be a mapping, got {type(self.input).__name__}")
        try:
            json.dumps(dict(self.input))
        except (TypeError, ValueError) as exc:
            raise SpecError(f"ToolUse input for {self.name!r} is not JSON-serialisable: {exc}") from exc


Block: TypeAlias = Text | Thinking | ToolUse


@dataclass(frozen=True, kw_only=True)
class Usage:
    """Token counts reported with a reply.

    The CLI's idea of its context size comes from these numbers alone (measured with CLI 2.1.327), so a script
    can simulate a growing or nearly full context. `input_tokens=None` means "estimate from the request"
    (chars / 4).
    """

    input_tokens: int | None = None
    """Uncached input tokens; None estimates them from the request (characters / 4)."""
    output_tokens: int | None = None
    """Output tokens; None estimates them from the reply."""
    cache_read_input_tokens: int = 0
    """Tokens read from the prompt cache (counted as context by the CLI)."""
    cache_creation_input_tokens: int = 0
    """Tokens written to the prompt cache (counted as context by the CLI), both lifetimes together."""
    ephemeral_1h_input_tokens: int = 0
    """Of `cache_creation_input_tokens`, those written to the 1-hour cache; the reply reports the split as
    the API does (`cache_creation: {ephemeral_5m_input_tokens, ephemeral_1h_input_tokens}`)."""

    def __post_init__(self) -> None:
        for name in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
            "ephemeral_1h_input_tokens",
        ):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                raise SpecError(f"Usage.{name} must be a non-negative int, got {value!r}")
        if self.ephemeral_1h_input_tokens > self.cache_creation_input_tokens:
            raise SpecError("Usage.ephemeral_1h_input_tokens is part of cache_creation_input_tokens")

    @property
    def context_tokens(self) -> int | None:
        """Input + cache read + cache creation: what the CLI counts as context (None if estimated)."""
        if self.input_tokens is None:
            return None
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens


StopReason = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence"]


def _check_delay(delay: float) -> None:
    if not isinstance(delay, int | float) or isinstance(delay, bool) or delay < 0:
        raise SpecError(f"delay must be a non-negative number of seconds, got {delay!r}")


@dataclass(frozen=True, kw_only=True)
class Reply:
    """One assistant message. `stop_reason` defaults to `tool_use` when it holds a call, else `end_turn`."""

    content: tuple[Block, ...]
    """The blocks, in order: `Text`, `Thinking`, `ToolUse` (several calls are parallel calls)."""
    usage: Usage | None = None
    """The usage reported with the reply; None estimates it from the request."""
    stop_reason: StopReason | None = None
    """None: `tool_use` when the reply holds a call, else `end_turn`."""
    delay: float = 0.0
    """Seconds to wait before answering (simulates a slow model)."""

    def __post_init__(self) -> None:
        if not self.content:
            raise SpecError("a Reply needs at least one block")
        for block in self.content:
            if not isinstance(block, Text | Thinking | ToolUse):
                raise SpecError(f"a Reply holds Text, Thinking or ToolUse blocks, got {type(block).__name__}")
        ids = [b.id for b in self.content if isinstance(b, ToolUse) and b.id is not None]
        if len(ids) != len(set(ids)):
            raise SpecError(f"tool_use ids must be unique within a reply: {ids}")
        _check_delay(self.delay)

    @property
    def effective_stop_reason(self) -> StopReason:
        """The stop reason sent: `stop_reason`, or the default it stands for."""
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if any(isinstance(b, ToolUse) for b in self.content) else "end_turn"


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass(frozen=True, kw_only=True)
class HttpError:
    """Answer with an HTTP error and an Anthropic error body. The CLI retries 429, 500 and 529."""

    status: int
    """The HTTP status, 4xx or 5xx."""
    message: str = ""
    """The error message; "" gives `scripted <status> <type>`."""
    error_type: str = ""
    """The Anthropic error type; "" picks the one the API uses for `status` (529: `overloaded_error`...)."""
    retry_after: float | None = None
    """A `retry-after` header, in seconds, or none."""
    delay: float = 0.0
    """Seconds to wait before answering."""

    def __post_init__(self) -> None:
        if not isinstance(self.status, int) or not 400 <= self.status <= 599:
            raise SpecError(f"HttpError status must be a 4xx or 5xx int, got {self.status!r}")
        _check_delay(self.delay)

    @property
    def resolved_type(self) -> str:
        """The error type sent: `error_type`, or the API's type for `status`."""
        return self.error_type or _ERROR_TYPES.get(self.status, "api_error")

    @property
    def resolved_message(self) -> str:
        """The message sent: `message`, or a generated one."""
        return self.message or f"scripted {self.status} {self.resolved_type}"


@dataclass(frozen=True, kw_only=True)
class DropConnection:
    """Reset the TCP connection (the CLI sees ECONNRESET), before any byte or after `message_start`."""

    after_start: bool = False
    """False: reset before any byte; True: after the stream's `message_start`."""
    delay: float = 0.0
    """Seconds to wait before the reset."""

    def __post_init__(self) -> None:
        _check_delay(self.delay)


@dataclass(frozen=True, kw_only=True)
class StreamError:
    """Start a streamed reply, then send an SSE `event: error`; the CLI retries with `stream: false`."""

    error_type: str = "overloaded_error"
    """The error type of the SSE `error` event."""
    message: str = "scripted mid-stream error"
    """Its message."""
    partial_text: str = "partial "
    """Text streamed before the error."""
    delay: float = 0.0
    """Seconds to wait before answering."""

    def __post_init__(self) -> None:
        _check_delay(self.delay)


StepFunction: TypeAlias = Callable[["RecordedRequest"], "Step | Awaitable[Step | None] | None"]
Step: TypeAlias = Reply | HttpError | DropConnection | StreamError | str | ToolUse | StepFunction


def reply(
    *blocks: str | Block,
    usage: Usage | None = None,
    thinking: str | None = None,
    stop_reason: StopReason | None = None,
    delay: float = 0.0,
) -> Reply:
    """Build a `Reply`: a `str` is a text block, `ToolUse`s are (parallel) tool calls.

    Example: `reply("Running both.", bash("ls"), bash("pwd"), usage=Usage(input_tokens=50_000))`.
    """
    content: list[Block] = [Thinking(thinking)] if thinking is not None else []
    for block in blocks:
        content.append(Text(block) if isinstance(block, str) else block)
    return Reply(content=tuple(content), usage=usage, stop_reason=stop_reason, delay=delay)


def tool_use(
    name: str, input: Mapping[str, Any] | None = None, /, *, id: str | None = None, **fields: Any
) -> ToolUse:
    """A call to any tool: `tool_use("Grep", pattern="TODO", path=".")`."""
    merged = {**(dict(input) if input else {}), **fields}
    return ToolUse(name=name, input=merged, id=id)


def bash(command: str, *, description: str | None = None, id: str | None = None) -> ToolUse:
    """A Bash call (the CLI runs it for real)."""
    if not isinstance(command, str) or not command.strip():
        raise SpecError("bash() needs a non-empty command")
    return ToolUse("Bash", {"command": command, "description": description or command[:60]}, id=id)


def read(file_path: str, *, id: str | None = None) -> ToolUse:
    """A Read call; the CLI wants an absolute path."""
    if not isinstance(file_path, str) or not file_path:
        raise SpecError("read() needs a file path")
    return ToolUse("Read", {"file_path": file_path}, id=id)


def agent(
    subagent_type: str,
    prompt: str,
    *,
    description: str = "delegated task",
    background: bool | None = False,
    id: str | None = None,
) -> ToolUse:
    """A call of the Agent tool. `background=False` waits for the report; `None` leaves the CLI's default
    (which is to run it in the background)."""
    if not subagent_type or not prompt:
        raise SpecError("agent() needs a subagent_type and a prompt")
    payload: dict[str, Any] = {"description": description, "prompt": prompt, "subagent_type": subagent_type}
    if background is not None:
        payload["run_in_background"] = background
    return ToolUse("Agent", payload, id=id)


def http_error(
    status: int, message: str = "", *, retry_after: float | None = None, delay: float = 0.0
) -> HttpError:
    """An HTTP error reply (429/500/529 are retried by the CLI with backoff, ~0.5 s then ~1 s...)."""
    return HttpError(status=status, message=message, retry_after=retry_after, delay=delay)


def prompt_too_long(tokens: int = 210_000, maximum: int = 200_000) -> HttpError:
    """The API's reactive overflow: a 400 that makes the CLI compact (or fail when compaction is off)."""
    return HttpError(status=400, message=f"prompt is too long: {tokens} tokens > {maximum} maximum")


def drop_connection(*, after_start: bool = False, delay: float = 0.0) -> DropConnection:
    """Reset the connection; the CLI retries it like a 5xx."""
    return DropConnection(after_start=after_start, delay=delay)


def stream_error(*, error_type: str = "overloaded_error", partial_text: str = "partial ") -> StreamError:
    """A mid-stream `event: error`; the CLI silently retries the request with `stream: false`."""
    return StreamError(error_type=error_type, partial_text=partial_text)


def as_concrete(step: object) -> Reply | HttpError | DropConnection | StreamError:
    """Turn shorthand (`str`, `ToolUse`) into a `Reply`; reject anything that is not a step."""
    if isinstance(step, Reply | HttpError | DropConnection | StreamError):
        return step
    if isinstance(step, str | ToolUse):
        return reply(step)
    raise SpecError(
        f"a script step must be a Reply, str, ToolUse, HttpError, DropConnection, StreamError or a callable; "
        f"got {type(step).__name__}: {step!r:.80}"
    )


def describe(step: Reply | HttpError | DropConnection | StreamError) -> str:
    """A one-line description of a concrete step, for the request log."""
    if isinstance(step, Reply):
        parts = []
        for block in step.content:
            if isinstance(block, Text):
                parts.append(f"text({block.text[:40]!r})")
            elif isinstance(block, ToolUse):
                parts.append(f"{block.name}({json.dumps(dict(block.input), ensure_ascii=False)[:60]})")
            else:
                parts.append("thinking")
        return "reply " + ", ".join(parts)
    if isinstance(step, HttpError):
        return f"http {step.status}"
    if isinstance(step, DropConnection):
        return "drop connection" + (" after start" if step.after_start else "")
    return "stream error"
