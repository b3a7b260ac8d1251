"""`mandate_guard`: what it rewrites and what it leaves alone (the CLI's side is in tests/e2e)."""

from __future__ import annotations

from typing import Any

import pytest

from flower import MANDATE_LINE, SpecError, coordinator, mandate_guard, worker


async def _decide(data: dict[str, Any], line: str = MANDATE_LINE) -> Any:
    return await mandate_guard(line)(data, "toolu_1", None)  # type: ignore[arg-type]


async def test_a_main_thread_mandate_gets_the_line_once() -> None:
    call = {"tool_name": "Agent", "tool_input": {"prompt": "Count.", "subagent_type": "w"}}
    out = await _decide(call)
    updated = out["hookSpecificOutput"]["updatedInput"]
    assert updated == {"prompt": f"{MANDATE_LINE}\nCount.", "subagent_type": "w"}
    assert "permissionDecision" not in out["hookSpecificOutput"]  # a rewrite, never an allow
    assert await _decide({"tool_name": "Agent", "tool_input": updated}) == {}


async def test_other_calls_pass_untouched() -> None:
    assert await _decide({"tool_name": "Bash", "tool_input": {"command": "ls"}}) == {}
    assert await _decide({"tool_name": "Agent", "tool_input": {"prompt": "x"}, "agent_id": "a1"}) == {}
    assert await _decide({"tool_name": "Agent", "tool_input": "not a mapping"}) == {}
    assert await _decide({"tool_name": "Agent", "tool_input": {"prompt": 3}}) == {}


def test_a_line_too_short_to_fix_the_fingerprint_is_refused() -> None:
    with pytest.raises(SpecError, match="line must be one line of at least 21"):
        mandate_guard("short")
    with pytest.raises(SpecError, match="mandate_line"):
        coordinator("c", "Goal.", {"w": worker("W.", "w")}, mandate_line="two\nlines that are long enough")
    assert coordinator("c", "Goal.", {"w": worker("W.", "w")}, mandate_line=None).mandate_line is None


async def test_the_rewrite_is_the_clis_pre_tool_use_answer_exactly() -> None:
    out = await _decide({"tool_name": "Agent", "tool_input": {"prompt": "Count.", "subagent_type": "w"}})
    assert out == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "updatedInput": {"prompt": f"{MANDATE_LINE}\nCount.", "subagent_type": "w"},
        }
    }


async def test_shared_prefix_hooks_put_the_line_first_and_one_start_guard_on_both_events() -> None:
    from flower._wall.mandate import shared_prefix_hooks

    assert shared_prefix_hooks(None) == {}
    line = "A line of the coordinator's own, long enough"
    hooks = shared_prefix_hooks(line)
    assert set(hooks) == {"PreToolUse", "SubagentStop"}
    (pre,) = hooks["PreToolUse"]
    (stop,) = hooks["SubagentStop"]
    assert pre.matcher is None and stop.matcher is None
    rewrite, starts = pre.hooks
    assert stop.hooks == [starts]  # one guard sees the starts and the stops
    out = await rewrite({"tool_name": "Agent", "tool_input": {"prompt": "Count."}}, "toolu_1", None)  # type: ignore[arg-type]
    assert out["hookSpecificOutput"]["updatedInput"] == {"prompt": f"{line}\nCount."}
    assert await starts({"tool_name": "Read", "tool_input": {}}, "toolu_2", None) == {}  # type: ignore[arg-type]


async def test_foreground_sets_the_background_flag_only_where_the_call_says_nothing() -> None:
    guard = mandate_guard(MANDATE_LINE, foreground=True)
    said_nothing = {"tool_name": "Agent", "tool_input": {"prompt": "Count.", "subagent_type": "w"}}
    out = await guard(said_nothing, "toolu_1", None)  # type: ignore[arg-type]
    assert out["hookSpecificOutput"]["updatedInput"] == {
        "prompt": f"{MANDATE_LINE}\nCount.",
        "subagent_type": "w",
        "run_in_background": False,
    }
    for asked in (True, False):  # the coordinator's own choice is kept
        call = {
            "tool_name": "Agent",
            "tool_input": {"prompt": f"{MANDATE_LINE}\nX", "run_in_background": asked},
        }
        assert await guard(call, "toolu_2", None) == {}  # type: ignore[arg-type]
    only = mandate_guard(None, foreground=True)  # no line: the flag alone
    out = await only(said_nothing, "toolu_3", None)  # type: ignore[arg-type]
    assert out["hookSpecificOutput"]["updatedInput"]["prompt"] == "Count."
    worker_call = {**said_nothing, "agent_id": "a1"}
    assert await only(worker_call, "toolu_4", None) == {}  # type: ignore[arg-type]


def test_without_a_line_the_hooks_hold_only_the_foreground_rewrite() -> None:
    from flower._wall.mandate import shared_prefix_hooks

    hooks = shared_prefix_hooks(None, foreground=True)
    assert set(hooks) == {"PreToolUse"} and len(hooks["PreToolUse"][0].hooks) == 1
    assert coordinator("c", "Goal.", {"w": worker("W.", "w")}).foreground is True
    with pytest.raises(SpecError, match="foreground only makes sense with delegate_only"):
        import dataclasses

        dataclasses.replace(worker("W.", "w"), foreground=True)
