"""The fixed prefix of a session's requests (system prompt, tool definitions) against flower's coordinator's.

Every request carries the tools and the system prompt before the conversation. A coordinator sends its
own: flower's coordinator prompt and rules instead of the CLI's preset, and `Agent` plus its workers' tools
(`flower._options.session_tools`). So the delegation estimate's main thread is not the recorded prefix with
the tool work taken out: each of its requests is longer or shorter by the difference, which this module
computes from two real things, never from a fitted number:

- what the session sent: the CLI records the shape of its requests in the transcript (an
  `api-request-shape` entry: the system blocks and the tool definitions, CLI 2.1.3xx on);
- what flower's coordinator would send: its system prompt as `flower._options.build_options` writes it for
  `coordinator()` (the CLI's own identity block kept), and its tools as `session_tools` lists them for a
  worker given the session's hands-on tools (those of flower's default worker it had, and any other it
  called), each sized as the session's transcript records it (the same CLI's definition); `Agent`, which
  a plain session seldom has, as measured (`AGENT_TOOL_CHARS`, by model) where it has none.

The attachments that list what the tools offer (the agents, the skills, the deferred tools) count with
them: flower's coordinator gets its own agent listing, and no skill or deferred-tool listing unless it
offers those tools. Characters become tokens at the rate of the session's own first request: its
recorded context over the characters it held (the shape, the first prompt and what the CLI attached
before it). A transcript that records no shape (older CLIs) gives no difference: the recorded prefix is
kept, and the report says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ..._agents import coordinator, worker
from ..._options import DELEGATING, build_options, session_tools
from ..._util.content import text_of
from ..._wall._tools import KNOWN_TOOLS, WORKER_TOOLS
from .replay import Thread

__all__ = [
    "AGENT_LISTING_CHARS",
    "AGENT_TOOL_CHARS",
    "LISTINGS",
    "RecordedShape",
    "agent_tool_chars",
    "coordinator_delta",
    "coordinator_shape",
    "recorded_shape",
]

AGENT_TOOL_CHARS: Final[Mapping[str, int]] = {"claude-sonnet-4-6": 7_457, "claude-opus-5-5": 4_942}
"""The `Agent` tool's definition (JSON characters) a flower coordinator sends, by model: the bundled CLI
2.1.337 writes its tool texts in a longer form for some models than for others (its Bash tool too),
measured from the request log (the benchmark's coordinator, and the test suite's), without the CLI's
`fork` type (a coordinator runs with `CLAUDE_CODE_FORK_SUBAGENT=0`). Another model takes the longer: the
estimate then saves less, not more."""

LISTINGS: Final = {"agent_listing_delta": "Agent", "skill_listing": "Skill", "deferred_tools_delta": ""}
"""The attachments the CLI adds to a first request to list what a tool offers (the agents, the skills, the
deferred tools), and the tool that brings each ("": tools the CLI defers, which a coordinator's short
explicit tool list has none of)."""
AGENT_LISTING_CHARS: Final = 283
"""The agent listing a flower coordinator with one worker gets (CLI 2.1.332, the benchmark's: 283 chars)."""
_SHAPE: Final = "api-request-shape"
_INSTRUCTIONS: Final = "Drive the task."
"""The coordinator's own instructions: a line (a user's own add what they say)."""
_WORKER: Final = ("Runs commands and reports.", "You do hands-on work: run what you are asked, then report.")


@dataclass(frozen=True)
class RecordedShape:
    """What a session's first request carried before its conversation, in characters."""

    system: tuple[int, ...]
    """Each system block's JSON."""
    tools: Mapping[str, int]
    """Each tool definition's JSON, by tool name."""
    messages: int
    """The conversation of the first request: the prompt and what the CLI attached before it."""
    listings: Mapping[str, int] = field(default_factory=dict)
    """Of those attachments, the ones that list what the tools offer (`LISTINGS`), by type: carried from
    the first request on like the tools themselves."""

    @property
    def chars(self) -> int:
        """The fixed prefix: system blocks, tools and their listings."""
        return sum(self.system) + sum(self.tools.values()) + sum(self.listings.values())


def _size(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False))


def recorded_shape(entries: Sequence[Mapping[str, Any]]) -> RecordedShape | None:
    """The shape of the main thread's first request as the transcript records it, or None (no
    `api-request-shape` before its first reply)."""
    shape: Mapping[str, Any] | None = None
    messages = 0
    listings: dict[str, int] = {}
    for entry in entries:
        kind = entry.get("type")
        if kind == "assistant":
            break
        if kind == _SHAPE and shape is None and isinstance(entry.get("shape"), Mapping):
            shape = entry["shape"]
        elif kind == "attachment":
            rendered = entry.get("rendered")
            size = sum(len(str(r.get("content", ""))) for r in rendered or () if isinstance(r, Mapping))
            messages += size
            attached = entry.get("attachment")
            named = str(attached.get("type")) if isinstance(attached, Mapping) else ""
            if named in LISTINGS:
                listings[named] = listings.get(named, 0) + size
        elif kind == "user" and isinstance(entry.get("message"), Mapping):
            messages += len(text_of(entry["message"].get("content")))
    if shape is None:
        return None
    system, tools = shape.get("system"), shape.get("tools")
    blocks = system if isinstance(system, list) else []
    defined = [t for t in tools if isinstance(t, Mapping)] if isinstance(tools, list) else []
    return RecordedShape(
        system=tuple(_size(b) for b in blocks),
        tools={str(t.get("name")): _size(t) for t in defined},
        messages=messages,
        listings=listings,
    )


def agent_tool_chars(model: str) -> int:
    """The `Agent` tool's size for `model` (`AGENT_TOOL_CHARS`; the longer for another model)."""
    return AGENT_TOOL_CHARS.get(model, max(AGENT_TOOL_CHARS.values()))


def coordinator_shape(
    recorded: RecordedShape, model: str = "", used: Iterable[str] = (), inline_until: int | None = None
) -> int:
    """The characters of flower's coordinator's prefix, on `model`, for a session that recorded `recorded`
    and called the tools `used`: the CLI's identity block(s) (every recorded system block but the largest,
    the prompt flower replaces), flower's coordinator system prompt, and the tools of a coordinator whose
    worker has the session's hands-on tools (those of flower's default worker it had, and any other it
    called), each as long as recorded (`Agent`: as recorded if the session had it, else measured). With
    `inline_until`, the prefix of that coordinator's inline session instead
    (`build_options(inline_session=True)`): flower's short inline prompt, the same hands-on tools without
    `Agent` and `SendMessage`, and no agent listing."""
    called = set(used)
    own = [
        name
        for name in recorded.tools
        if name in KNOWN_TOOLS and name != "Agent" and (name in WORKER_TOOLS or name in called)
    ]
    hands = worker(_WORKER[0], _WORKER[1], tools=own or WORKER_TOOLS)
    spec = coordinator("coordinator", _INSTRUCTIONS, {"worker": hands}, inline_until=inline_until)
    inline = inline_until is not None
    options = build_options(spec, inline_session=inline)
    prompt = options.system_prompt if isinstance(options.system_prompt, str) else ""
    kept = sorted(recorded.system)[:-1]
    system = sum(kept) + _size({"type": "text", "text": prompt})
    agent = recorded.tools.get("Agent", agent_tool_chars(model))
    offered = [t for t in session_tools(spec) if not (inline and t in DELEGATING)]
    tools = sum(agent if name == "Agent" else recorded.tools.get(name, 0) for name in offered)
    listed = sum(
        AGENT_LISTING_CHARS if tool == "Agent" else recorded.listings.get(kind, 0)
        for kind, tool in LISTINGS.items()
        if tool and tool in offered
    )
    return system + tools + listed


def coordinator_delta(main: Thread, inline_until: int | None = None) -> int | None:
    """Tokens by which each main-thread request's prefix would differ under flower's coordinator (negative:
    shorter), or None when the transcript records no shape or no first request; with `inline_until`, under
    that coordinator's inline session (`coordinator_shape`)."""
    recorded = recorded_shape(main.entries)
    if recorded is None or not main.requests:
        return None
    held = recorded.chars - sum(recorded.listings.values()) + recorded.messages
    context = main.requests[0].usage.context
    if held <= 0 or context <= 0:
        return None
    used = {str(b.get("name")) for r in main.requests for b in r.blocks if b.get("type") == "tool_use"}
    ours = coordinator_shape(recorded, main.requests[0].model, used, inline_until)
    return round((ours - recorded.chars) * context / held)
