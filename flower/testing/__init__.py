"""Offline, deterministic testing of Claude Agent SDK setups through the real Claude Code CLI.

`ScriptedModel` is an Anthropic Messages API server on 127.0.0.1 that answers from scripts; the real
bundled CLI talks to it as it would to the API, so hooks, subagents, transcripts and resume are all real,
and every request it logs is exactly the context the model saw. See docs/testing.md.

Every wait here is a hang guard, not a speed check: `ScriptedModel.run`, `wait_for` and the OTLP
receiver's waits default to `hang_guard()`, 10 minutes or `FLOWER_TEST_HANG_GUARD` seconds, so a slow or
busy machine makes a test slower, never red. Wait on what the run does (a request, a span), not on time.
"""

from .._errors import ScriptError, ScriptTimeout, UnconsumedSteps, UnexpectedRequest
from ._callers import COMPACT, MAIN, SUBAGENT, agent_marker
from ._editing import ClearToolUses
from ._guard import HANG_GUARD_ENV, hang_guard
from ._requests import RecordedRequest, RequestSizes, ToolResultView
from ._run import ScriptedRun
from ._scripts import Script
from ._server import ScriptedModel
from ._steps import (
    DropConnection,
    HttpError,
    Reply,
    StreamError,
    Text,
    Thinking,
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

__all__ = [
    "COMPACT",
    "HANG_GUARD_ENV",
    "MAIN",
    "SUBAGENT",
    "ClearToolUses",
    "DropConnection",
    "HttpError",
    "RecordedRequest",
    "Reply",
    "RequestSizes",
    "Script",
    "ScriptError",
    "ScriptTimeout",
    "ScriptedModel",
    "ScriptedRun",
    "StreamError",
    "Text",
    "Thinking",
    "ToolResultView",
    "ToolUse",
    "UnconsumedSteps",
    "UnexpectedRequest",
    "Usage",
    "agent",
    "agent_marker",
    "bash",
    "drop_connection",
    "hang_guard",
    "http_error",
    "prompt_too_long",
    "read",
    "reply",
    "stream_error",
    "tool_use",
]
