"""`start_guard`: workers started together read the prefix the first one writes, not each write it.

Every worker of one type sends the same tools and system prompt (with `mandate_guard`, the same billing
block too), and the prompt cache keeps that prefix for 5 minutes after its last use. But the API can read
a cache entry only once the response of the request that wrote it has begun: the first requests of
workers started together (several Agent calls in one message, or one right after another) all miss it,
and each writes the whole prefix at 1.25x input instead of reading it at 0.1x. The CLI sends them at the
same instant (measured, CLI 2.1.332), and holds its own workflow agents back for exactly this reason
(`CLAUDE_CODE_WORKFLOW_PREFIX_STAGGER_MS`, 5 seconds), but not Agent calls.

So this PreToolUse hook on the main thread's Agent calls lets the first start of a worker type through
when that type's prefix is cold, and holds the other starts of the type until the first worker shows a
sign of its first reply (a tool call of a worker of that type, or a worker stopping), at most `hold`
seconds. From then on the type counts as warm for `WARM_FOR` seconds after the last sign of any of its
workers, and its starts pass at once. A start that finds the prefix warm, a start of another type and every
call that is not a main-thread Agent call are never held: sequential delegation is not slowed at all.

Worker types can share a prefix too: the CLI caches a worker's tools, its billing block and the SDK's
identity line under one mark of their own, before the type's own system prompt, so types offered the
same tools (in the same order, as `build_options` sends them) and the same model read what the first of
them wrote. `groups` maps each type to its prefix group (`prefix_groups`); the guard holds and warms by
group. A type it does not list is a group of its own.

It only ever waits: it never denies nor rewrites a call, and if deciding raises, the call goes through and
the error is logged (it fails open).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
from claude_agent_sdk import HookContext
from claude_agent_sdk.types import HookCallback, HookJSONOutput

from .._errors import SpecError

__all__ = ["START_HOLD", "WARM_FOR", "prefix_groups", "start_guard"]

logger = logging.getLogger("flower.starts")

START_HOLD: Final = 5.0
"""Seconds a start waits at most for the first worker of its type: the CLI's own cap for its workflow
agents (`CLAUDE_CODE_WORKFLOW_PREFIX_STAGGER_MS`, 5,000 ms, CLI 2.1.332); a response has begun by then."""

WARM_FOR: Final = 270.0
"""Seconds a worker type's prefix counts as cached after the last sign of one of its workers: inside the
cache's 5-minute lifetime, as the CLI counts its own (270 s)."""

_AGENT_TOOLS: Final = frozenset({"Agent", "Task"})


@dataclass
class _Prefix:
    """What one worker type's shared prefix is known to be: being written, or warm until `warm_until`."""

    writing: anyio.Event | None = None
    """Set when the first start's worker shows its first reply; None when no start is in flight."""
    since: float = -math.inf
    """When the start being written was let through."""
    warm_until: float = -math.inf


@dataclass
class _Starts:
    hold: float
    prefixes: dict[str, _Prefix] = field(default_factory=dict)

    async def start(self, kind: str) -> None:
        """Return when a main-thread start of worker type `kind` may go."""
        prefix = self.prefixes.setdefault(kind, _Prefix())
        now = anyio.current_time()
        if prefix.writing is not None and now < prefix.since + self.hold:
            with anyio.move_on_after(prefix.since + self.hold - now):
                await prefix.writing.wait()
            return
        if now < prefix.warm_until:
            return
        prefix.writing, prefix.since = anyio.Event(), now  # the first start: it writes the prefix
        prefix.warm_until = now + self.hold + WARM_FOR  # the others go after at most `hold` seconds

    def seen(self, kind: str) -> None:
        """A worker of type `kind` has replied: its prefix is written and was just used."""
        prefix = self.prefixes.setdefault(kind, _Prefix())
        prefix.warm_until = anyio.current_time() + WARM_FOR
        if prefix.writing is not None:
            prefix.writing.set()
            prefix.writing = None


def _kind(tool_input: object) -> str:
    kind = tool_input.get("subagent_type") if isinstance(tool_input, Mapping) else None
    return kind if isinstance(kind, str) else ""


def prefix_groups(workers: Mapping[str, tuple[Sequence[str], str | None]]) -> dict[str, str]:
    """Each worker type's prefix group, from `{type: (its tools as sent, its model)}`: types with the same
    tools in the same order and the same model share a group (named after the first of them)."""
    first: dict[tuple[tuple[str, ...], str | None], str] = {}
    return {name: first.setdefault((tuple(tools), model), name) for name, (tools, model) in workers.items()}


def start_guard(hold: float = START_HOLD, *, groups: Mapping[str, str] | None = None) -> HookCallback:
    """Build the hook that holds a worker's start while another worker of its type writes their prefix.

    Register the same callback for `PreToolUse` and `SubagentStop`, both with matcher None: it sees the
    main thread's Agent calls (the starts) and the workers' own tool calls and stops (the signs that a
    worker has replied). `hold` (seconds, positive) caps each wait. Pair it with `mandate_guard`: workers
    whose mandates start differently send different billing blocks and share no prefix to wait for.
    `groups` (`prefix_groups`) lets types that send the same tools wait for each other.
    """
    if isinstance(hold, bool) or not isinstance(hold, int | float) or not 0 < hold <= 30:
        raise SpecError(f"start_guard: hold must be a number of seconds in (0, 30], got {hold!r}")
    if groups is not None and not (
        isinstance(groups, Mapping)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in groups.items())
    ):
        raise SpecError(
            f"start_guard: groups must map worker types to group names (str to str), got {groups!r}"
        )
    starts = _Starts(float(hold))
    group = dict(groups or {})

    async def guard(input_data: Any, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
        try:
            data: Mapping[str, Any] = input_data if isinstance(input_data, Mapping) else {}
            event = data.get("hook_event_name")
            if data.get("agent_id"):  # a worker's own call, or a worker stopping: it has replied
                kind = str(data.get("agent_type") or "")
                starts.seen(group.get(kind, kind))
            elif event == "PreToolUse" and data.get("tool_name") in _AGENT_TOOLS:
                kind = _kind(data.get("tool_input"))
                await starts.start(group.get(kind, kind))
        except Exception:
            logger.exception("start_guard failed; the call goes through")
        return {}

    return guard
