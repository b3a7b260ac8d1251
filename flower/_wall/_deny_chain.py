"""When the wall and an app's own PreToolUse hook both deny a call, the model reads both reasons.

Measured with CLI 2.1.332: the CLI runs every PreToolUse callback of a call at once, and when several deny,
the model gets the reason of the one that finishes last, alone (two denying hooks in either order, and
with the first delayed: each time one reason). An app hook that refuses a call for its own reason would
then hide the wall's way out ("delegate it"), or the wall would hide the app's policy.

`chain_denials()` wraps the wall's callback and the app's PreToolUse callbacks; they meet by `tool_use_id`:
- an app callback registers as it starts and records its reason when it denies;
- the wall, when it denies, waits for the app callbacks of the call (those that may match its tool get
  up to `_GRACE` to start; they start within a millisecond, measured) and returns every reason, the app's
  first, then its own;
- an app callback that denies waits for the wall's decision and, when the wall denies too, returns the
  same combined reason. Whichever ends last, the model reads both.
A call only one of them denies is left exactly as that hook decided.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, cast

import anyio
from claude_agent_sdk import HookContext, HookMatcher
from claude_agent_sdk.types import HookCallback, HookEvent, HookInput, HookJSONOutput

from .._spill._chain import may_match
from .._util.calls import RecentCalls, await_others

Hooks = dict[HookEvent, list[HookMatcher]]

_GRACE: Final = 0.5  # seconds a denying wall waits for an app callback that may come
_WAIT: Final = 30.0  # seconds either side waits for the other (below the CLI's 60 s hook timeout)


@dataclass
class _Call:
    app: list[anyio.Event] = field(default_factory=list)
    app_reasons: list[str] = field(default_factory=list)
    wall: anyio.Event = field(default_factory=anyio.Event)
    wall_reason: str | None = None


def denial_reason(result: object) -> str | None:
    """The reason of a PreToolUse callback's deny ("" when it gave none), or None when it did not deny."""
    if not isinstance(result, Mapping):
        return None
    specific = result.get("hookSpecificOutput")
    if isinstance(specific, Mapping) and specific.get("permissionDecision") == "deny":
        return str(specific.get("permissionDecisionReason") or "")
    if result.get("decision") == "block":
        return str(result.get("reason") or "")
    return None


def _with_reason(result: HookJSONOutput, reason: str) -> HookJSONOutput:
    answer = cast(Mapping[str, Any], result)
    specific = answer.get("hookSpecificOutput")
    if isinstance(specific, Mapping) and specific.get("permissionDecision") == "deny":
        return cast(
            HookJSONOutput, {**answer, "hookSpecificOutput": {**specific, "permissionDecisionReason": reason}}
        )
    return cast(HookJSONOutput, {**answer, "reason": reason})


def chain_denials(
    wall: Mapping[HookEvent, Sequence[HookMatcher]], app: Mapping[HookEvent, Sequence[HookMatcher]] | None
) -> tuple[Hooks, Hooks]:
    """The `wall`'s and the `app`'s hooks, their PreToolUse callbacks wrapped to join two denials' reasons.

    Nothing changes when either side has no PreToolUse callback.
    """
    ours: Hooks = {event: list(matchers) for event, matchers in wall.items()}
    theirs: Hooks = {event: list(matchers) for event, matchers in (app or {}).items()}
    if not ours.get("PreToolUse") or not theirs.get("PreToolUse"):
        return ours, theirs
    chain = _Chain([m.matcher for m in theirs["PreToolUse"] if m.hooks])
    ours["PreToolUse"] = [
        dataclasses.replace(m, hooks=[chain.wall_callback(h) for h in m.hooks]) if m.hooks else m
        for m in ours["PreToolUse"]
    ]
    theirs["PreToolUse"] = [
        dataclasses.replace(m, hooks=[chain.app_callback(h) for h in m.hooks]) if m.hooks else m
        for m in theirs["PreToolUse"]
    ]
    return ours, theirs


class _Chain:
    """The shared state of one chain: the recent calls by `tool_use_id` (the oldest forgotten)."""

    def __init__(self, matchers: list[str | None]) -> None:
        self._matchers = matchers
        self._calls = RecentCalls(_Call)

    def _call(self, data: Mapping[str, Any], tool_use_id: str | None) -> _Call | None:
        key = data.get("tool_use_id") or tool_use_id
        if data.get("hook_event_name") != "PreToolUse" or not isinstance(key, str) or not key:
            return None
        return self._calls[key]

    def _joined(self, call: _Call) -> str:
        reasons = [r for r in dict.fromkeys([*call.app_reasons, call.wall_reason or ""]) if r]
        return "\n".join(reasons)

    def wall_callback(self, callback: HookCallback) -> HookCallback:
        async def wall(data: HookInput, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
            raw = cast(Mapping[str, Any], data)
            call = self._call(raw, tool_use_id)
            try:
                result = await callback(data, tool_use_id, context)
            except BaseException:
                if call is not None:
                    call.wall.set()  # never leave an app callback waiting
                raise
            reason = denial_reason(result)
            if call is None:
                return result
            call.wall_reason = reason
            call.wall.set()
            if reason is None:
                return result
            tool = str(raw.get("tool_name"))
            expected = any(may_match(m, tool) for m in self._matchers)
            await await_others(call.app, expected=expected, grace=_GRACE, wait=_WAIT)
            return _with_reason(result, self._joined(call)) if call.app_reasons else result

        return wall

    def app_callback(self, callback: HookCallback) -> HookCallback:
        async def app(data: HookInput, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
            call = self._call(cast(Mapping[str, Any], data), tool_use_id)
            if call is None:
                return await callback(data, tool_use_id, context)
            done = anyio.Event()
            call.app.append(done)
            reason: str | None = None
            try:
                result = await callback(data, tool_use_id, context)
                reason = denial_reason(result)
                if reason:
                    call.app_reasons.append(reason)
            finally:
                done.set()
            if reason is None:
                return result
            with anyio.move_on_after(_WAIT):
                await call.wall.wait()
            return _with_reason(result, self._joined(call)) if call.wall_reason else result

        return app
