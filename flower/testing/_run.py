"""Run the real CLI once with `query()` and keep everything it yields, bounded by a hang guard."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TypeVar

import anyio
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKError,
    Message,
    ResultMessage,
    SystemMessage,
    query,
)
from claude_agent_sdk._errors import ResultError

from .._errors import ScriptTimeout
from ._guard import HANG_GUARD_ENV, guard

__all__ = ["ScriptedRun", "run_query"]

M = TypeVar("M")


@dataclass
class ScriptedRun:
    """What one scripted run of the CLI produced."""

    messages: list[Message] = field(default_factory=list)
    """Every message `query()` yielded, in order."""
    stderr: list[str] = field(default_factory=list)
    """The CLI's stderr lines."""
    error: ClaudeSDKError | None = None
    """The `ResultError` the SDK raised after an error result (API retries exhausted, prompt too long...)."""

    def of_type(self, kind: type[M]) -> list[M]:
        """The messages of one SDK type, e.g. `run.of_type(AssistantMessage)`."""
        return [m for m in self.messages if isinstance(m, kind)]

    @property
    def results(self) -> list[ResultMessage]:
        """Every `ResultMessage` (background subagents make the CLI yield several in one run)."""
        return self.of_type(ResultMessage)

    @property
    def result(self) -> ResultMessage | None:
        """The last `ResultMessage`, if any."""
        results = self.results
        return results[-1] if results else None

    @property
    def text(self) -> str:
        """The final result text ('' when there is none)."""
        result = self.result
        return (result.result or "") if result is not None else ""

    @property
    def session_id(self) -> str | None:
        """The session's id, from the result or else the `init` message (resume it with `resume=`)."""
        result = self.result
        if result is not None:
            return result.session_id
        for message in self.of_type(SystemMessage):
            if message.subtype == "init":
                value = message.data.get("session_id")
                return str(value) if value else None
        return None

    @property
    def assistant_texts(self) -> list[str]:
        """Text blocks of the main thread's assistant messages."""
        return [
            block.text
            for message in self.of_type(AssistantMessage)
            if message.parent_tool_use_id is None
            for block in message.content
            if hasattr(block, "text") and isinstance(block.text, str)
        ]


async def run_query(
    prompt: str,
    options: ClaudeAgentOptions,
    *,
    timeout: float | None = None,
    describe: Callable[[], str] = lambda: "",
) -> ScriptedRun:
    """Iterate `query()` to its end; past `timeout` seconds (default `hang_guard()`) close it (the SDK stops
    the CLI) and raise `ScriptTimeout`."""
    timeout = guard(timeout)
    run = ScriptedRun()
    user_stderr = options.stderr

    def on_stderr(line: str) -> None:
        run.stderr.append(line)
        if user_stderr is not None:
            user_stderr(line)

    options = dataclasses.replace(options, stderr=on_stderr)
    try:
        with anyio.fail_after(timeout):
            async with aclosing(query(prompt=prompt, options=options)) as stream:  # type: ignore[type-var]
                async for message in stream:
                    run.messages.append(message)
    except ResultError as exc:
        run.error = exc
    except TimeoutError:
        tail = "\n".join(run.stderr[-10:])
        raise ScriptTimeout(
            f"the CLI run did not finish within {timeout:g} s ({len(run.messages)} messages so far): a hang, "
            f"or a machine slower than {HANG_GUARD_ENV} allows for.\n"
            f"last requests:\n{describe()}\nstderr tail:\n{tail}"
        ) from None
    return run
