"""Offline, deterministic testing of Claude Agent SDK setups through the real Claude Code CLI.

`ScriptedModel` is an Anthropic Messages API server on 127.0.0.1 that answers from scripts; the real
bundled CLI talks to it as it would to the API, so hooks, subagents, transcripts and resume are all real,
and every request it logs is exactly the context the model saw. See docs/testing.md.

Every wait here is a hang guard, not a speed check: `ScriptedModel.run`, `wait_for` and the OTLP
receiver's waits default to `hang_guard()`, 10 minutes or `FLOWER_TEST_HANG_GUARD` seconds, so a slow or
busy machine makes a test slower, never red. Wait on what the run does (a request, a span), not on time.

`OtlpReceiver`, an OTLP/HTTP endpoint for tracing tests, needs the `otel` extra: it is imported on first
use (`from flower.testing import OtlpReceiver`), so `flower.testing` itself never loads OpenTelemetry.
`pass_time` moves a SQLite store's timestamps back, as a real pause between two runs would.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._errors import ScriptTimeout, UnconsumedSteps, UnexpectedRequest
from ._editing import ClearToolUses
from ._guard import hang_guard
from ._pass_time import pass_time
from ._requests import RecordedRequest
from ._run import ScriptedRun
from ._server import ScriptedModel
from ._steps import (
    Reply,
    Text,
    ToolUse,
    Usage,
    agent,
    bash,
    drop_connection,
    http_error,
    prompt_too_long,
    read,
    reply,
    stream_error,
    tool_use,
)

if TYPE_CHECKING:
    from ._otlp import OtlpReceiver

__all__ = [
    "ClearToolUses",
    "OtlpReceiver",
    "RecordedRequest",
    "Reply",
    "ScriptTimeout",
    "ScriptedModel",
    "ScriptedRun",
    "Text",
    "ToolUse",
    "UnconsumedSteps",
    "UnexpectedRequest",
    "Usage",
    "agent",
    "bash",
    "drop_connection",
    "hang_guard",
    "http_error",
    "pass_time",
    "prompt_too_long",
    "read",
    "reply",
    "stream_error",
    "tool_use",
]


def __getattr__(name: str) -> Any:
    """`OtlpReceiver` on first use: it needs the `otel` extra, which the rest of `flower.testing` does not."""
    if name == "OtlpReceiver":
        from ._otlp import OtlpReceiver

        return OtlpReceiver
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
