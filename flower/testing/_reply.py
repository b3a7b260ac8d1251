"""Write one concrete script step to the HTTP `Responder`: how each step kind looks on the wire.

Kept apart from `ScriptedModel` (which decides *which* step answers a request) so the server module holds
dispatch and lifecycle only; the byte-level encoding itself lives in `_wire`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import anyio

from .._cost.cache import PromptCache
from . import _wire
from ._http import Responder
from ._requests import RecordedRequest
from ._scripts import Concrete
from ._steps import DropConnection, HttpError, Reply, StreamError, Text, Usage

__all__ = ["answer", "with_cache_usage"]


def with_cache_usage(step: Concrete, recorded: RecordedRequest, cache: PromptCache) -> Concrete:
    """`step`, sent through the simulated prompt cache when it answers (every `Reply` is), and given the
    cache's usage when its script set none (input, cache reads and writes; output stays estimated).

    Its response begins after the step's `delay`: only from then on can another request read what it
    wrote, so a `delay` plays the time a real response takes to begin (requests sent meanwhile miss)."""
    if not isinstance(step, Reply):
        return step
    found = cache.send(recorded.body, at=recorded.received_at, ready_at=recorded.received_at + step.delay)
    if step.usage is not None:
        return step
    usage = Usage(
        input_tokens=found.input,
        cache_read_input_tokens=found.cache_read,
        cache_creation_input_tokens=found.cache_creation + found.cache_creation_1h,
        ephemeral_1h_input_tokens=found.cache_creation_1h,
    )
    return dataclasses.replace(step, usage=usage)


async def answer(
    step: Concrete, recorded: RecordedRequest, size: int, responder: Responder
) -> dict[str, Any] | None:
    """Answer `recorded` (whose body was `size` bytes) with `step`, after the step's `delay`.

    `Reply` goes out as SSE or one JSON body, as the request asked; `HttpError` as an error status;
    `DropConnection` resets the connection (after the first event if `after_start` and streaming);
    `StreamError` as an in-stream error event, or a 529 when not streaming. Returns the usage a `Reply`
    reported (None for the other steps).
    """
    if step.delay:
        await anyio.sleep(step.delay)
    model = recorded.model or "claude-scripted"
    if isinstance(step, Reply):
        message = _wire.message_json(step, model, size)
        if recorded.stream:
            await responder.send_stream(_wire.sse_events(step, model, size, message=message))
        else:
            await responder.send_json(200, message)
        return dict(message["usage"])
    elif isinstance(step, HttpError):
        headers = {"retry-after": f"{step.retry_after:g}"} if step.retry_after is not None else {}
        await responder.send_json(step.status, _wire.error_body(step), headers)
    elif isinstance(step, DropConnection):
        if step.after_start and recorded.stream:
            events = _wire.sse_events(Reply(content=(Text("dropped"),)), model, size)

            async def stop_here() -> bool:
                return False

            await responder.send_stream(events, after_first=stop_here)
        else:
            await responder.reset()
    elif isinstance(step, StreamError):
        if recorded.stream:
            await responder.send_stream(_wire.stream_error_events(step, model, size))
        else:
            error = HttpError(status=529, message=step.message, error_type=step.error_type)
            await responder.send_json(529, _wire.error_body(error))
    return None
