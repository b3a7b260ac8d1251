"""Offline, deterministic testing of Claude Agent SDK setups through the real Claude Code CLI.

`ScriptedModel` is an Anthropic Messages API server on 127.0.0.1 that answers from scripts; the real
bundled CLI talks to it as it would to the API, so hooks, subagents, transcripts and resume are all real,
and every request it logs is exactly the context the model saw. See docs/testing.md.
"""

from .._errors import ScriptError, ScriptTimeout, UnconsumedSteps, UnexpectedRequest
from .callers import COMPACT, MAIN, SUBAGENT, agent_marker
from .editing import ClearToolUses
from .requests import RecordedRequest, RequestSizes, ToolResultView
from .run import ScriptedRun
from .scripts import Script
from .server import ScriptedModel
from .steps import (
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
    "http_error",
    "prompt_too_long",
    "read",
    "reply",
    "stream_error",
    "tool_use",
]
