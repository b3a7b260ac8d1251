"""chain_denials on plain hook inputs: two denials of one call both carry both reasons, in any timing."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from claude_agent_sdk import HookMatcher

from flower import build_options, coordinator, delegate_guard, worker
from flower._wall._deny_chain import chain_denials, denial_reason
from tests.wall.deny_chain_calls import allow, call, deny


async def both(wall: Any, app: Any, data: dict[str, Any], *, app_late: float = 0.0) -> tuple[Any, Any, str]:
    """Run the chained wall and app callbacks of one call at once, as the CLI does; also which ended last
    (the CLI shows that one's reason)."""
    ours, theirs = chain_denials(
        {"PreToolUse": [HookMatcher(matcher=None, hooks=[wall])]},
        {"PreToolUse": [HookMatcher(matcher=None, hooks=[app])]},
    )
    (chained_wall,) = ours["PreToolUse"][0].hooks
    (chained_app,) = theirs["PreToolUse"][0].hooks
    results: dict[str, Any] = {}

    async def run(name: str, hook: Any, late: float) -> None:
        await anyio.sleep(late)
        results[name] = await hook(data, data["tool_use_id"], {"signal": None})

    async with anyio.create_task_group() as group:
        group.start_soon(run, "wall", chained_wall, 0.0)
        group.start_soon(run, "app", chained_app, app_late)
    return results["wall"], results["app"], list(results)[-1]


@pytest.mark.parametrize(("app_delay", "app_late"), [(0.0, 0.0), (0.2, 0.0), (0.0, 0.1), (0.0, 0.7)])
async def test_two_denials_carry_both_reasons_whatever_the_timing(app_delay: float, app_late: float) -> None:
    wall, app, last = await both(
        delegate_guard(own_steps=0), deny("APP: no", app_delay), call(), app_late=app_late
    )
    reason = denial_reason({"wall": wall, "app": app}[last])
    assert reason is not None and reason.startswith("APP: no\nflower: the coordinator does not use Write")
    if app_late < 0.5:  # the app started within the wall's grace: both answers carry both reasons
        assert denial_reason(wall) == denial_reason(app)


async def test_one_denial_is_left_as_its_hook_decided() -> None:
    wall, app, _ = await both(delegate_guard(own_steps=0), allow, call())
    assert denial_reason(wall) == denial_reason(await delegate_guard(own_steps=0)(call(), "toolu_1", {}))  # type: ignore[arg-type]
    assert app == {}
    wall, app, _ = await both(delegate_guard(own_steps=0), deny("APP: no"), call("Read"))
    assert wall == {} and denial_reason(app) == "APP: no"
    strict = delegate_guard(own_steps=0)
    wall, app, _ = await both(strict, deny("APP: no"), call("Write", agent_id="a1"))  # a subagent
    assert wall == {} and denial_reason(app) == "APP: no"


async def test_a_wall_without_an_app_hook_is_untouched() -> None:
    hooks = {"PreToolUse": [HookMatcher(matcher=None, hooks=[allow])]}
    ours, theirs = chain_denials(hooks, {"PostToolUse": []})
    assert ours["PreToolUse"][0].hooks == [allow] and theirs == {"PostToolUse": []}


def test_build_options_joins_the_wall_and_the_specs_own_hooks() -> None:
    lead = coordinator(
        "lead", "Go.", {"w": worker("W.", "W.")}, hooks={"PreToolUse": [HookMatcher(hooks=[allow])]}
    )
    pre = build_options(lead).hooks["PreToolUse"]  # type: ignore[index]
    # the wall, the mandate line, then the spec's callback: wrapped, still there
    assert len(pre) == 3 and pre[2].hooks != [allow]
