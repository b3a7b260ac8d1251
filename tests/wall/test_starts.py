"""`start_guard`: which starts wait, for what, and which never do (plain hook inputs; the CLI's side is in
tests/e2e/test_delegation_cost.py)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from claude_agent_sdk.types import HookCallback

from flower import SpecError, start_guard

HANG_GUARD = 30  # seconds: a hang guard, not a speed limit


def start(kind: str = "analyst") -> dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "tool_name": "Agent", "tool_input": {"subagent_type": kind}}


def worker_call(kind: str = "analyst") -> dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "tool_name": "Bash", "agent_id": "a1", "agent_type": kind}


def worker_stop(kind: str = "analyst") -> dict[str, Any]:
    return {"hook_event_name": "SubagentStop", "agent_id": "a1", "agent_type": kind}


async def _call(guard: HookCallback, data: dict[str, Any], done: list[str], name: str) -> None:
    assert await guard(data, None, None) == {}  # type: ignore[arg-type]  # it only ever waits
    done.append(name)


async def _settle() -> None:
    for _ in range(20):
        await anyio.sleep(0)


@pytest.mark.parametrize("sign", [worker_call, worker_stop])
async def test_a_second_start_waits_for_the_first_workers_reply(sign: Any) -> None:
    guard = start_guard()
    done: list[str] = []
    with anyio.fail_after(HANG_GUARD):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_call, guard, start(), done, "first")
            await _settle()
            tasks.start_soon(_call, guard, start(), done, "second")
            tasks.start_soon(_call, guard, start("other"), done, "other type")
            tasks.start_soon(
                _call, guard, {"tool_name": "Read", "hook_event_name": "PreToolUse"}, done, "read"
            )
            await _settle()
            assert done == ["first", "other type", "read"]  # the second start waits
            await _call(guard, sign(), done, "sign")
    assert done[-2:] == ["sign", "second"]


async def test_once_a_worker_replied_its_type_starts_at_once() -> None:
    guard = start_guard()
    done: list[str] = []
    with anyio.fail_after(HANG_GUARD):
        await _call(guard, start(), done, "first")
        await _call(guard, worker_call(), done, "sign")
        async with anyio.create_task_group() as tasks:
            for n in range(3):
                tasks.start_soon(_call, guard, start(), done, f"parallel {n}")
            await _settle()
            assert len(done) == 5  # none of them waited


async def test_a_start_waits_at_most_hold_seconds() -> None:
    guard = start_guard(hold=0.05)
    done: list[str] = []
    with anyio.fail_after(HANG_GUARD):
        await _call(guard, start(), done, "first")
        await _call(guard, start(), done, "second")  # no worker ever replies: the hold runs out
        await _call(guard, start(), done, "third")  # the prefix counts as written by now
    assert done == ["first", "second", "third"]


def test_a_hold_out_of_range_is_refused() -> None:
    for bad in (0, -1, 31, True, "5"):
        with pytest.raises(SpecError, match="hold must be a number of seconds"):
            start_guard(hold=bad)  # type: ignore[arg-type]


async def test_starts_of_no_type_or_a_type_that_is_not_a_string_share_the_untyped_prefix() -> None:
    guard = start_guard()
    done: list[str] = []
    untyped = {"hook_event_name": "PreToolUse", "tool_name": "Agent", "tool_input": {}}
    with anyio.fail_after(HANG_GUARD):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_call, guard, start(5), done, "first")  # type: ignore[arg-type]
            await _settle()
            tasks.start_soon(_call, guard, untyped, done, "second")
            await _settle()
            assert done == ["first"]  # the same (untyped) worker type: the second start waits
            await _call(guard, worker_call(""), done, "sign")
    assert done == ["first", "sign", "second"]


def test_prefix_groups_join_types_that_send_the_same_tools_and_model() -> None:
    from flower._wall.starts import prefix_groups

    groups = prefix_groups(
        {
            "a": (["Bash", "Read"], "inherit"),
            "b": (["Bash", "Read"], "inherit"),
            "c": (["Read", "Bash"], "inherit"),  # another order is another prefix
            "d": (["Bash", "Read"], "claude-sonnet-4-6"),
        }
    )
    assert groups == {"a": "a", "b": "a", "c": "c", "d": "d"}


async def test_a_start_of_another_type_in_the_group_waits_for_the_first() -> None:
    guard = start_guard(groups={"analyst": "analyst", "reader": "analyst"})
    done: list[str] = []
    with anyio.fail_after(HANG_GUARD):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_call, guard, start("analyst"), done, "first")
            await _settle()
            tasks.start_soon(_call, guard, start("reader"), done, "same group")
            tasks.start_soon(_call, guard, start("other"), done, "other group")
            await _settle()
            assert done == ["first", "other group"]
            await _call(guard, worker_call("analyst"), done, "sign")
    assert done[-2:] == ["sign", "same group"]
