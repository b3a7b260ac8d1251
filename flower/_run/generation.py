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
from dataclasses import dataclass
from typing import Literal

import anyio
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    Message,
    ResultMessage,
    ToolUseBlock,
)

from ..events import HandoffWarning
from ..handoff.document import HandoffPolicy
from ..options import merge_hooks
from ..warm import KeepWarm
from .gate import Gate
from .settle import DEFAULT_WORKER_TIMEOUT, Settle
from .stream import Tracker
from .tether import tether

logger = logging.getLogger("flower.runtime")

OVERFLOW_REASONS = frozenset({"blocking_limit", "prompt_too_long"})
"""`ResultMessage.terminal_reason` when the CLI refused a prompt too long, locally or after a 400."""

DEFAULT_WINDOW = 200_000
"""Used only if the CLI does not report its window."""

Keeper = Callable[[ClaudeAgentOptions], KeepWarm]
"""A session's options -> the `KeepWarm` that pings its coordinator's cache while it waits on a worker."""


@dataclass(frozen=True)
class Outcome:
    """How a generation ended."""

    kind: Literal["done", "handoff", "overflow", "unreachable", "stalled"]
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


def _continues(message: object) -> bool:
    """A main-thread reply that calls tools: the turn goes on, and the context with it."""
    return (
        isinstance(message, AssistantMessage)
        and message.parent_tool_use_id is None
        and any(isinstance(block, ToolUseBlock) for block in message.content)
    )


def _overflowed(message: ResultMessage) -> bool:
    return message.is_error and message.terminal_reason in OVERFLOW_REASONS


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
    waits on a worker, never in the handoff turn or after the session.
    """
    tracker.context = 0
    tracker.writing = False
    tracker.interrupted = False
    floor = 0
    gate = Gate()
    tracker.refusing = gate.refused  # flower's own refusals are not the run's denials
    if policy is not None and policy.enabled:
        options = dataclasses.replace(options, hooks=merge_hooks(options.hooks, gate.hooks()))
    logger.info(
        "session starting in %s (resume=%s, fork=%s)", options.cwd, options.resume, options.fork_session
    )
    options = tether(options)  # the CLI, and what it starts, end with this process (`_run.supervise`)
    async with (
        ClaudeSDKClient(options=options) as client,
        keeper(options) if keeper is not None else nullcontext() as warm,
    ):
        active = policy is not None and policy.enabled
        window = (policy.window if policy and policy.window else None) or (
            await _reported_window(client) if active else DEFAULT_WINDOW
        )
        threshold = policy.threshold(window) if policy else window
        warn_at = policy.warn_at(window) if policy else window
        warned = due = False
        reached = 0  # the context when the handoff became due
        lost = ""  # why the workers still out were given up on before the handoff

        def outcome(
            kind: Literal["done", "handoff", "overflow", "unreachable", "stalled"],
            document: str = "",
            why: str = "",
        ) -> Outcome:
            context = reached or tracker.context
            return Outcome(
                kind, tracker.session_id, context, window, threshold, floor, document, why, lost=lost
            )

        settle = Settle()
        stopping = False  # flower's interrupt is out and the turn it stops has not ended yet
        await client.query(prompt)
        async with aclosing(client.receive_messages()) as stream:  # type: ignore[type-var]
            while True:
                # the hang guard counts only while the coordinator's turn is over and its workers are out
                with anyio.move_on_after(worker_timeout if settle.waiting else math.inf) as silence:
                    message = await anext(stream, None)
                if silence.cancelled_caught:
                    if due:  # hand off without them, as a session that could not wait
                        lost = _stalled(worker_timeout)
                        break
                    return outcome("stalled", why=_stalled(worker_timeout))
                if message is None:
                    break
                await tracker.feed(message)
                done = settle.feed(message, tracker.pending_tasks)
                if warm is not None:
                    warm.feed(message)
                if tracker.unreachable:
                    await _stop(client, stream, tracker)
                    return outcome("unreachable")
                floor = floor or tracker.context
                if active and not warned and tracker.context >= warn_at:
                    warned = True
                    await tracker.emit(
                        HandoffWarning(context=tracker.context, threshold=threshold, window=window)
                    )
                past = active and tracker.context >= threshold
                interrupt = False
                if past and not stopping and _continues(message):
                    # past the threshold no turn goes on working: the work turn, or a turn the CLI started
                    # to hand the coordinator a worker's report while the handoff waits for it; with
                    # workers out the gate refuses its calls, since an interrupt would stop them too
                    due, reached = True, reached or tracker.context
                    interrupt = not gate.holds(message, tracker.pending_tasks)
                gate.saw(message)  # after `holds`: the hooks it releases see the gate as it now stands
                if interrupt:
                    stopping = tracker.interrupted = True
                    await client.interrupt()
                if not isinstance(message, ResultMessage):
                    if done:
                        break
                    continue
                stopping = False
                if _overflowed(message):
                    return outcome(
                        "overflow", why=f"the CLI refused a prompt too long ({message.terminal_reason})"
                    )
                if active and tracker.context >= threshold and tracker.pending_tasks:
                    due, reached = True, reached or tracker.context
                if done:
                    break
        if not due or policy is None:
            return outcome("done")
        if warm is not None:
            warm.stop()  # the handoff turn: no wait on a worker is kept warm
        tracker.writing = True
        gate.open()
        await client.query(policy.prompt.format(used=tracker.context, window=window))
        async with aclosing(client.receive_messages()) as stream:  # type: ignore[type-var]
            async for message in stream:
                await tracker.feed(message)
                gate.saw(message)
                if isinstance(message, ResultMessage):
                    if message.is_error:
                        return outcome(
                            "handoff", why=f"the handoff turn failed: {message.result or message.subtype}"
                        )
                    return outcome("handoff", document=message.result or "")
        return outcome("handoff", why="the CLI ended during the handoff turn")
    raise AssertionError("unreachable: the client's context manager does not swallow exceptions")
