"""Chain an app's PostToolUse output rewrites and flower's spill, which the CLI runs side by side.

Measured with CLI 2.1.327: all PostToolUse callbacks of one tool call get the original output and run at
once (they start within a millisecond of each other), and when several return `updatedToolOutput` the
one that finishes last wins; the others are dropped without a trace. An app hook that rewrites a Bash or
Read output (a redactor, say) and flower's spill would then race: the app's rewrite or the spill is lost,
depending on timing, and the original output is written to `spill/`.

`chain_spill()` puts them in order, the app first, then the spill:
- each app PostToolUse callback is wrapped: it registers with the call (`tool_use_id`) as it starts;
  when it rewrote the output of a tool the spill acts on, the wrapper spills the rewritten output itself;
- flower's spill callback waits for the app callbacks of the call and steps aside (returns nothing) when
  one of them rewrote the output. Which app callbacks will come is the CLI's business (its matcher rules
  have aliases and regexes), so for an output big enough to spill, of a tool an app matcher may match,
  the spill waits up to `_GRACE` for one to start; they usually start within a millisecond.
Should an app callback start later still (a loaded machine), both rewrite; the app's wrapper then
returns only after flower's spill of that call has ended, so the app's version still wins (the original
output was spilled too, to the user-only `spill/`).
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, cast

import anyio
from claude_agent_sdk import HookContext, HookMatcher
from claude_agent_sdk.types import HookCallback, HookEvent, HookInput, HookJSONOutput

from .._util.calls import RecentCalls, await_others
from ._shape import find_candidates
from .spill_policy import SpillPolicy

logger = logging.getLogger("flower.spill")

Hooks = dict[HookEvent, list[HookMatcher]]

_GRACE: Final = 0.5  # seconds a spill of a big output waits for an app callback that may come
_NAMES: Final = re.compile(r"[A-Za-z0-9_|]+")
_START: Final = 2.0  # seconds an app callback waits for flower's spill of its call to start
_WAIT: Final = 30.0  # seconds either side waits for the other to end (below the CLI's 60 s hook timeout)


@dataclass
class _Call:
    app: list[anyio.Event] = field(default_factory=list)
    rewrote: bool = False
    spill: anyio.Event | None = None


def _updated(result: object) -> object | None:
    specific = result.get("hookSpecificOutput") if isinstance(result, Mapping) else None
    return specific.get("updatedToolOutput") if isinstance(specific, Mapping) else None


def chain_spill(
    layers: Mapping[HookEvent, Sequence[HookMatcher]],
    app: Mapping[HookEvent, Sequence[HookMatcher]] | None,
    policy: SpillPolicy,
) -> tuple[Hooks, Hooks]:
    """flower's `layers` and the `app`'s hooks, with the app's PostToolUse rewrites chained before spill.

    Nothing changes when spilling is off or the app has no PostToolUse hook.
    """
    ours: Hooks = {event: list(matchers) for event, matchers in layers.items()}
    theirs: Hooks = {event: list(matchers) for event, matchers in (app or {}).items()}
    spill_at = [i for i, m in enumerate(ours.get("PostToolUse", [])) if m.matcher == policy.matcher]
    if not policy.enabled or not theirs.get("PostToolUse") or len(spill_at) != 1:
        return ours, theirs
    matcher = ours["PostToolUse"][spill_at[0]]
    (spill,) = matcher.hooks
    watched = {t for t in policy.tools if any(may_match(m.matcher, t) for m in theirs["PostToolUse"])}
    chain = _Chain(spill, policy, frozenset(watched))
    ours["PostToolUse"][spill_at[0]] = dataclasses.replace(matcher, hooks=[chain.spill_callback()])
    theirs["PostToolUse"] = [
        dataclasses.replace(m, hooks=[chain.app_callback(h) for h in m.hooks]) for m in theirs["PostToolUse"]
    ]
    return ours, theirs


def may_match(matcher: str | None, tool: str) -> bool:
    """Whether the CLI may call a matcher's hooks for `tool`: no for a list of other names, else yes."""
    if not matcher or matcher == "*" or not _NAMES.fullmatch(matcher):
        return True  # every tool, or a regex: assume it may
    return tool in {name.strip() for name in matcher.split("|")}


class _Chain:
    """The shared state of one chain: the recent tool calls, by `tool_use_id` (the oldest forgotten)."""

    def __init__(self, spill: HookCallback, policy: SpillPolicy, watched: frozenset[str]) -> None:
        self._spill = spill
        self._policy = policy
        self._tools = frozenset(policy.tools)
        self._watched = watched  # tools an app PostToolUse matcher may match
        self._calls = RecentCalls(_Call)

    def _call(self, key: str) -> _Call:
        return self._calls[key]

    def _key(self, data: Mapping[str, Any], tool_use_id: str | None) -> str | None:
        if data.get("hook_event_name") != "PostToolUse" or data.get("tool_name") not in self._tools:
            return None
        key = data.get("tool_use_id") or tool_use_id
        return key if isinstance(key, str) and key else None

    def _worth_waiting(self, data: Mapping[str, Any]) -> bool:
        """A big output of a tool an app callback may rewrite: worth a short wait for that callback."""
        tool = str(data.get("tool_name"))
        if tool not in self._watched or not self._policy.threshold:
            return False
        output = data.get("tool_response")
        return bool(find_candidates(tool, output, threshold=self._policy.threshold, lists=self._policy.lists))

    def spill_callback(self) -> HookCallback:
        async def spill(data: HookInput, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
            key = self._key(cast(Mapping[str, Any], data), tool_use_id)
            if key is None:
                return await self._spill(data, tool_use_id, context)
            call = self._call(key)
            call.spill = anyio.Event()
            try:
                expected = not call.app and self._worth_waiting(cast(Mapping[str, Any], data))
                await await_others(call.app, expected=expected, grace=_GRACE, wait=_WAIT)
                if call.rewrote:
                    return {}  # the app's wrapper spills the version it rewrote
                return await self._spill(data, tool_use_id, context)
            finally:
                call.spill.set()

        return spill

    def app_callback(self, callback: HookCallback) -> HookCallback:
        async def chained(data: HookInput, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
            raw = cast(Mapping[str, Any], data)
            key = self._key(raw, tool_use_id)
            if key is None:
                return await callback(data, tool_use_id, context)
            call = self._call(key)
            done = anyio.Event()
            call.app.append(done)
            try:
                result = await callback(data, tool_use_id, context)
                output = _updated(result)
                if output is not None:
                    call.rewrote = True
            finally:
                done.set()
            if output is None:
                return result
            rewritten = cast(HookInput, {**raw, "tool_response": output})
            spilled = _updated(await self._spill(rewritten, tool_use_id, context))
            if spilled is not None:
                answer = cast(Mapping[str, Any], result)
                specific = {**answer["hookSpecificOutput"], "updatedToolOutput": spilled}
                result = cast(HookJSONOutput, {**answer, "hookSpecificOutput": specific})
            with anyio.move_on_after(_START):
                while call.spill is None:  # flower's spill of this call has not started yet
                    await anyio.sleep(0.005)
            if call.spill is not None:
                with anyio.move_on_after(_WAIT):
                    await call.spill.wait()  # end after it: the last rewrite to end is the one kept
            logger.info(
                "an app hook rewrote a %s output; flower spilled the rewritten one", raw.get("tool_name")
            )
            return result

        return chained
