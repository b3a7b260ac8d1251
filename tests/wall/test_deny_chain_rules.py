"""chain_denials, rule by rule: a call found by either id, what each side hands on, a reason-less denial,
and a wall that fails."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from claude_agent_sdk import HookMatcher

from flower._wall._deny_chain import chain_denials
from tests.wall.deny_chain_calls import allow, call, deny

BARE_DENY = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"}}


async def bare(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
    return BARE_DENY


def chained(wall: Any, app: Any) -> tuple[Any, Any]:
    ours, theirs = chain_denials(
        {"PreToolUse": [HookMatcher(matcher=None, hooks=[wall])]},
        {"PreToolUse": [HookMatcher(matcher=None, hooks=[app])]},
    )
    return ours["PreToolUse"][0].hooks[0], theirs["PreToolUse"][0].hooks[0]


async def together(wall: Any, app: Any, data: dict[str, Any], argument: str | None) -> tuple[Any, Any]:
    results: dict[str, Any] = {}

    async def run(name: str, hook: Any) -> None:
        results[name] = await hook(data, argument, {"signal": None})

    async with anyio.create_task_group() as group:
        group.start_soon(run, "wall", wall)
        group.start_soon(run, "app", app)
    return results["wall"], results["app"]


def reason(result: Any) -> str:
    return str(result["hookSpecificOutput"]["permissionDecisionReason"])


@pytest.mark.parametrize(("in_input", "argument"), [("toolu_1", None), (None, "toolu_2")])
async def test_a_call_is_found_by_the_id_in_its_input_or_by_the_callbacks_argument(
    in_input: str | None, argument: str | None
) -> None:
    wall, app = chained(deny("WALL"), deny("APP"))
    data = call()
    data.pop("tool_use_id")
    if in_input:
        data["tool_use_id"] = in_input
    from_wall, from_app = await together(wall, app, data, argument)
    assert reason(from_wall) == reason(from_app) == "APP\nWALL"


async def test_each_side_gets_the_id_and_context_it_was_given() -> None:
    seen: list[tuple[Any, str | None, Any]] = []

    def recording(answer: Any) -> Any:
        async def hook(data: Any, tool_use_id: str | None, context: Any) -> Any:
            seen.append((data, tool_use_id, context))
            return await answer(data, tool_use_id, context)

        return hook

    wall, app = chained(recording(deny("WALL")), recording(deny("APP")))
    data = call()
    context = {"signal": None}
    await together(wall, app, data, "toolu_1")
    assert seen == [(data, "toolu_1", context)] * 2
    other = {**call(), "hook_event_name": "PostToolUse"}  # not a PreToolUse: the app's callback alone
    seen.clear()
    assert await app(other, "toolu_3", context) == (await deny("APP")(other, None, None))
    assert seen == [(other, "toolu_3", context)]


async def test_a_denial_without_a_reason_adds_none_to_the_joined_one() -> None:
    wall, app = chained(bare, deny("APP"))
    from_wall, _ = await together(wall, app, call(), "toolu_1")
    assert reason(from_wall) == "APP"
    wall, app = chained(bare, allow)
    from_wall, from_app = await together(wall, app, call(), "toolu_1")
    assert from_wall == BARE_DENY and from_app == {}  # nothing to join: left as the wall decided
    wall, app = chained(allow, bare)
    from_wall, from_app = await together(wall, app, call(), "toolu_1")
    assert from_wall == {} and from_app == BARE_DENY  # and as the app decided


async def test_a_wall_that_fails_raises_its_own_error() -> None:
    async def broken(data: Any, tool_use_id: str | None, context: Any) -> Any:
        raise ValueError("the wall broke")

    wall, _ = chained(broken, allow)
    with pytest.raises(ValueError, match="the wall broke"):
        await wall({**call(), "tool_use_id": None}, None, {"signal": None})  # no id: no call to release


async def test_a_call_id_that_is_not_a_string_joins_nothing() -> None:
    wall, app = chained(deny("WALL"), deny("APP"))
    data = {**call(), "tool_use_id": 5}
    from_wall, from_app = await together(wall, app, data, None)
    assert (reason(from_wall), reason(from_app)) == ("WALL", "APP")
