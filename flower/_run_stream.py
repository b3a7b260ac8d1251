"""`RunStream`: a run's events as an async iterator, then its `StepResult` (what `Runtime.stream()` returns).

The shape is openai-agents' `Runner.run_streamed()`: the call returns at once, iterating gives the
events as they happen, and the outcome is on the stream object once the iteration ends::

    stream = rt.stream(lead, "Start.")
    async for event in stream:
        match event:
            case ToolCall(agent=None, name=name):
                print("coordinator calls", name)
    print(stream.result.ok, stream.result.text)

The result is not an item of the iteration, so the loop's items are all typed `Event` and a `match`
over them stays exhaustive.

Leaving the loop early (`break`, an exception, a cancellation) ends the run: the CLI process is shut
down. Inside `async with rt.stream(...) as stream:` that happens before the block exits; a bare
`async for` relies on the event loop closing the abandoned iterator, which asyncio does at once.
The run advances as the events are consumed (no buffer): a consumer that stops reading holds the run,
as a slow `on_event` callback would.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from types import TracebackType

import anyio

from ._errors import SpecError
from ._result import StepResult
from .events import Event, SessionStarted

__all__ = ["RunStream"]

Emit = Callable[[Event], Awaitable[None]]


class RunStream:
    """The events of one `Runtime` run as they happen; its `StepResult` once they end.

    Iterate it once (`async for event in stream`). `result` is None until the iteration ends; a run
    that fails as a run (API errors, a crashed CLI) still ends normally, with `result.ok` False; an
    exception of the run (a missing CLI, missing credentials, a bad workspace) is raised by the
    iteration. Needs asyncio (the run goes on in a task of its own while you consume its events).
    """

    def __init__(self, run: Callable[[Emit], Awaitable[StepResult]]) -> None:
        self._run = run
        self._outcome = _Outcome()
        # weak: a `break` must leave the iterator unreferenced, so that the event loop closes it at once;
        # strong inside `async with`, whose exit closes it
        self._events: weakref.ref[AsyncGenerator[Event, None]] | None = None
        self._held: AsyncGenerator[Event, None] | None = None
        self._entered = False

    @property
    def result(self) -> StepResult | None:
        """The run's `StepResult` once the iteration has ended (None before, or after an early exit)."""
        return self._outcome.result

    @property
    def session_id(self) -> str | None:
        """The session the run writes, as soon as it is known (a `SessionStarted` event went by), before
        its first tool call: a process that dies can resume it. None before; at the end, the result's
        (a resume refused before it started sends no `SessionStarted`)."""
        return self._outcome.session_id

    @property
    def done(self) -> bool:
        """The run is over and `result` is set."""
        return self._outcome.result is not None

    def __aiter__(self) -> AsyncIterator[Event]:
        if self._events is not None:
            raise SpecError("RunStream: a stream can be iterated once; call Runtime.stream() again")
        events = _iterate(self._run, self._outcome)
        self._events = weakref.ref(events)
        if self._entered:
            self._held = events
        return events

    async def aclose(self) -> None:
        """End the run now if it is still going (the CLI is shut down); idempotent."""
        events = self._events() if self._events is not None else None
        self._held = None
        if events is not None:
            await events.aclose()

    async def __aenter__(self) -> RunStream:
        self._entered = True
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


class _Outcome:
    result: StepResult | None = None
    session_id: str | None = None


async def _iterate(
    run: Callable[[Emit], Awaitable[StepResult]], outcome: _Outcome
) -> AsyncGenerator[Event, None]:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        raise SpecError(
            "Runtime.stream needs asyncio; with another event loop, use "
            "`await rt.run(spec, prompt, on_event=...)`"
        ) from None
    send, receive = anyio.create_memory_object_stream[Event]()

    scope = anyio.CancelScope()

    async def produce() -> StepResult | None:
        with scope:
            async with send:
                return await run(send.send)
        return None  # cancelled: the consumer left

    # A task of its own, not a task group: an abandoned `async for` is closed by the event loop from
    # another task, and a task group's cancel scope cannot be left from another task. It is stopped
    # through an anyio scope, not `task.cancel()`: the SDK's shutdown of the CLI is shielded against
    # the former only.
    task = loop.create_task(produce())
    try:
        async for event in receive:
            if isinstance(event, SessionStarted):
                outcome.session_id = event.session_id
            yield event
        outcome.result = await task
        if outcome.result is not None and outcome.session_id is None:  # a run that failed first
            outcome.session_id = outcome.result.session_id
    finally:
        scope.cancel()
        with anyio.CancelScope(shield=True):  # the CLI shuts down even when the consumer is cancelled
            await asyncio.wait([task])
        if task.done() and not task.cancelled():
            task.exception()  # retrieved: an error after an early exit is not "never retrieved"
        receive.close()
