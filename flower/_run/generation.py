"""One session of a step (a generation): run a prompt to its end, or until it must hand off.

The watermark is the main thread's context from the usage of its own assistant messages (input + cache
read + cache creation). Measured against the CLI's `get_context_usage()`: both give the same number at
each main-thread assistant message; the call costs a control round trip, so flower reads the usage and
asks the CLI once per session, for the window of the model it actually serves (`rawMaxTokens`).
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing, nullcontext

import anyio
from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, Message, ResultMessage

from .._handoff.document import HandoffPolicy
from .._options import merge_hooks
from .._warm import KeepWarm
from ..events import HandoffWarning
from .course import Course, Kind, Outcome
from .gate import Gate
from .settle import DEFAULT_WORKER_TIMEOUT, Settle
from .stream import Tracker
from .tether import connected, tether

logger = logging.getLogger("flower.runtime")

DEFAULT_WINDOW = 200_000
"""Used only if the CLI does not report its window."""

Keeper = Callable[[ClaudeAgentOptions], KeepWarm]
"""A session's options -> the `KeepWarm` that pings its coordinator's cache while it waits on a worker."""


async def _reported_window(client: ClaudeSDKClient) -> int:
    try:
        usage = await client.get_context_usage()
        return int(usage.get("rawMaxTokens") or usage.get("maxTokens") or DEFAULT_WINDOW)
    except Exception:
        return DEFAULT_WINDOW


async def _stop(client: ClaudeSDKClient, stream: AsyncIterator[Message], tracker: Tracker) -> None:
    """Interrupt the turn and read the stream up to the result the interrupt produces."""
    await client.interrupt()
    async for message in stream:
        await tracker.feed(message)
        if isinstance(message, ResultMessage):
            return


def _stalled(timeout: float) -> str:
    return f"the CLI sent nothing for {timeout:g} s after the coordinator's turn ended (worker_timeout)"


async def run_generation(
    options: ClaudeAgentOptions,
    prompt: str,
    tracker: Tracker,
    policy: HandoffPolicy | None,
    keeper: Keeper | None = None,
    worker_timeout: float = DEFAULT_WORKER_TIMEOUT,
    until: int | None = None,
) -> Outcome:
    """Run `prompt` in one session; with a policy, hand off before the context reaches the CLI's lines.

    The session is done when the CLI owes the coordinator no further turn (`settle`): a background
    worker's report is read before the step ends. Once the coordinator's turn is over, a CLI silent for
    `worker_timeout` seconds while workers are out ends the session as `stalled`.

    Past the threshold no turn goes on working, and the same session is asked for its handoff document;
    that writing turn is exempt from the threshold. A reply that calls tools with no background worker
    out is interrupted (nothing is lost). With workers out, an interrupt would stop them too, so their
    reports would never come: the session's gate (`flower._run.gate`, a PreToolUse hook installed with
    the policy) refuses the coordinator's calls instead, telling it to end its turn. If it goes on
    calling tools (`gate.REFUSALS` refused calls in a turn), or the hook is not in effect, the turn is
    interrupted after all and the workers it stops are reported lost. A turn that simply ends is left to
    end: the step is done, and a later resume hands off at once if it must. A handoff with background
    workers out waits first, as the end of a step does, so the coordinator reads their reports in the
    session that launched them and its document can carry them; a turn the CLI starts for a report is
    held or stopped like a work turn if it calls tools. Past `worker_timeout` of silence the session
    hands off without them (`Outcome.lost`). With a `keeper`, the coordinator's cache is pinged while it
    waits on a worker, never in the handoff turn or after the session. `until`: a coordinator's inline
    session, which hands off at that many tokens (asked `policy.inline_prompt`) and warns of nothing.
    """
    tracker.context = 0
    tracker.writing = False
    tracker.interrupted = False
    gate = Gate()
    tracker.refusing = gate.refused  # flower's own refusals are not the run's denials
    active = policy is not None and policy.enabled
    if active:
        options = dataclasses.replace(options, hooks=merge_hooks(options.hooks, gate.hooks()))
    logger.info(
        "session starting in %s (resume=%s, fork=%s)", options.cwd, options.resume, options.fork_session
    )
    options = tether(options)  # the CLI, and what it starts, end with this process (`_run.supervise`)
    async with (
        connected(options) as client,
        keeper(options) if keeper is not None else nullcontext() as warm,
    ):
        window = (policy.window if policy and policy.window else None) or (
            await _reported_window(client) if active else DEFAULT_WINDOW
        )
        course = Course.of(policy, window, until)
        await client.query(prompt)
        async with aclosing(client.receive_messages()) as stream:  # type: ignore[type-var]
            ended = await _work(client, stream, tracker, course, gate, warm, worker_timeout)
        if ended is not None:
            return ended
        if not course.due or policy is None:
            return _end(course, tracker, "done")
        if warm is not None:
            warm.stop()  # the handoff turn: no wait on a worker is kept warm
        if until is not None:
            ask = policy.inline_prompt.format(used=tracker.context, until=until)
        else:
            ask = policy.prompt.format(used=tracker.context, window=course.window)
        return await _handoff(client, tracker, course, gate, ask)
    raise AssertionError("unreachable: the client's context manager does not swallow exceptions")


def _end(course: Course, tracker: Tracker, kind: Kind, document: str = "", why: str = "") -> Outcome:
    return course.outcome(kind, tracker.session_id, tracker.context, document, why)


async def _work(
    client: ClaudeSDKClient,
    stream: AsyncIterator[Message],
    tracker: Tracker,
    course: Course,
    gate: Gate,
    warm: KeepWarm | None,
    worker_timeout: float,
) -> Outcome | None:
    """The prompt's turns, up to the end of the wait on workers: an Outcome when the session ends here,
    None when it is done or must hand off (`course.due`)."""
    settle = Settle()
    while True:
        # the hang guard counts only while the coordinator's turn is over and its workers are out
        with anyio.move_on_after(worker_timeout if settle.waiting else math.inf) as silence:
            message = await anext(stream, None)
        if silence.cancelled_caught:
            why = _stalled(worker_timeout)  # hand off without them when due, as a session that could not wait
            return None if course.gives_up(why) == "handoff" else _end(course, tracker, "stalled", why=why)
        if message is None:
            return None
        await tracker.feed(message)
        done = settle.feed(message, tracker.pending_tasks)
        if warm is not None:
            warm.feed(message)
        if tracker.unreachable:
            await _stop(client, stream, tracker)
            return _end(course, tracker, "unreachable")
        if course.warns(tracker.context):
            await tracker.emit(
                HandoffWarning(context=tracker.context, threshold=course.threshold, window=course.window)
            )
        # past the threshold no turn goes on working: the work turn, or a turn the CLI started to hand the
        # coordinator a worker's report while the handoff waits for it; with workers out the gate refuses
        # its calls, since an interrupt would stop them too
        interrupt = course.over(message, tracker.context) and not gate.holds(message, tracker.pending_tasks)
        gate.saw(message)  # after `holds`: the hooks it releases see the gate as it now stands
        if interrupt:
            course.interrupting()
            tracker.interrupted = True
            await client.interrupt()
        if isinstance(message, ResultMessage):
            overflow = course.ended(message, tracker.context, tracker.pending_tasks)
            if overflow:
                return _end(course, tracker, "overflow", why=overflow)
        if done:
            return None


async def _handoff(
    client: ClaudeSDKClient, tracker: Tracker, course: Course, gate: Gate, ask: str
) -> Outcome:
    """The handoff turn: the same session is asked (`ask`) for its handoff document."""
    tracker.writing = True
    gate.open()
    await client.query(ask)
    async with aclosing(client.receive_messages()) as stream:  # type: ignore[type-var]
        async for message in stream:
            await tracker.feed(message)
            gate.saw(message)
            if isinstance(message, ResultMessage):
                if message.is_error:
                    why = f"the handoff turn failed: {message.result or message.subtype}"
                    return _end(course, tracker, "handoff", why=why)
                return _end(course, tracker, "handoff", document=message.result or "")
    return _end(course, tracker, "handoff", why="the CLI ended during the handoff turn")
