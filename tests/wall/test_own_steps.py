"""Own steps: the coordinator may take `own_steps` hands-on calls in a row, each with a small input; the
row, its reset, its limits and the texts (pure: the hook on plain dicts)."""

from __future__ import annotations

import pytest

from flower import (
    COORDINATOR_RULES,
    AgentSpec,
    SpecError,
    coordinator,
    coordinator_rules,
    delegate_guard,
    worker,
)
from flower.wall.delegate import DELEGATE_REASON, OWN_STEP_MAX_INPUT
from tests.wall.test_delegate import bash, decide, denied
from tests.wall.test_delegate_rules import refusal

SERIES = "a one-off step it may take itself, a series of them is a loop, a worker's job"
ROW = "take a second hands-on step in a row ({what}): " + SERIES


def call(tool: str, text: str = "x", session: str = "s1", **extra: str) -> dict:
    field = {"Bash": "command", "Write": "content", "Edit": "new_string", "NotebookEdit": "new_source"}[tool]
    return {"tool_name": tool, "tool_input": {field: text}, "session_id": session, **extra}


def size(chars: int, what: str) -> str:
    return (
        f"take a hands-on step with {chars:,} chars of input ({what}) itself: an input stays in its "
        "context for good, so its own steps take at most 2,000"
    )


def test_one_step_passes_a_second_in_a_row_is_refused_saying_why() -> None:
    guard = delegate_guard()
    assert decide(guard, call("Bash", "touch x")) == {}  # runs as written: not jailed, not rewritten
    assert decide(guard, call("Bash", "touch y")) == refusal(ROW.format(what="`touch y`"))
    assert decide(guard, call("Write")) == refusal(ROW.format(what="Write"))  # a refusal ends no row
    assert denied(decide(guard, {"tool_name": "Grep", "tool_input": {}, "session_id": "s1"}))  # nor this
    assert denied(decide(guard, call("Edit")))


@pytest.mark.parametrize(
    "between",
    [
        bash("ls", session_id="s1"),
        {"tool_name": "Read", "tool_input": {"file_path": "a"}, "session_id": "s1"},
        {"tool_name": "Agent", "tool_input": {"prompt": "go"}, "session_id": "s1"},
        {"tool_name": "mcp__notes__add", "tool_input": {}, "session_id": "s1"},
        {"tool_name": "StructuredOutput", "tool_input": {}, "session_id": "s1"},
    ],
)
def test_any_other_allowed_call_ends_the_row(between: dict) -> None:
    guard = delegate_guard()
    assert decide(guard, call("Edit")) == {}
    assert not denied(decide(guard, between))
    assert decide(guard, call("NotebookEdit")) == {}
    assert denied(decide(guard, call("Write")))


def test_rows_are_per_session_and_a_workers_calls_never_count() -> None:
    guard = delegate_guard()
    assert decide(guard, call("Write", session="s1")) == {}
    assert decide(guard, call("Write", session="s2")) == {}
    for _ in range(3):
        assert decide(guard, call("Write", session="s1", agent_id="a1")) == {}
    assert denied(decide(guard, call("Write", session="s1")))  # a worker's call did not end the row
    assert denied(decide(guard, call("Write", session="s2")))


@pytest.mark.parametrize("tool", ["Bash", "Write", "Edit", "NotebookEdit"])
def test_an_input_of_2000_chars_passes_2001_is_refused(tool: str) -> None:
    assert OWN_STEP_MAX_INPUT == 2_000
    guard = delegate_guard()
    big = "touch " + "y" * 1_995  # 2,001 chars, not a glance
    what = f"`{big[:117]}...`" if tool == "Bash" else tool
    assert decide(guard, call(tool, big)) == refusal(size(2_001, what))
    exact = big[:2_000]
    assert decide(guard, call(tool, exact)) == {}  # a refused step did not count: this one is the first
    assert denied(decide(guard, call(tool, "z")))


def test_a_step_without_its_input_is_refused() -> None:
    guard = delegate_guard()
    assert decide(guard, {"tool_name": "Write", "tool_input": {"file_path": "a"}}) == refusal(
        "use Write itself"
    )
    assert decide(guard, {"tool_name": "Edit", "tool_input": {"new_string": 5}}) == refusal("use Edit itself")


def test_own_steps_0_is_the_strict_wall() -> None:
    guard = delegate_guard(own_steps=0)
    assert decide(guard, call("Write")) == refusal("use Write itself")
    reason = decide(guard, call("Bash", "touch x"))["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith(
        "flower: the coordinator does not run `touch x` itself, as it is not a read-only"
    )
    assert denied(decide(delegate_guard(glance=False, own_steps=0), call("Bash", "ls")))


def test_own_steps_2_allows_two_in_a_row() -> None:
    guard = delegate_guard(own_steps=2, glance=False)
    assert decide(guard, call("Bash", "ls")) == {}  # without glance every Bash is hands-on
    assert decide(guard, call("Write")) == {}
    more = "take more than 2 hands-on steps in a row (Edit): " + SERIES
    assert decide(guard, call("Edit")) == refusal(more)
    assert decide(guard, {"tool_name": "Read", "tool_input": {}, "session_id": "s1"}) == {}
    assert decide(guard, call("Edit")) == {}


def test_a_custom_reason_carries_the_own_step_action() -> None:
    guard = delegate_guard(reason="no: {action}", own_steps=1)
    assert decide(guard, call("Write")) == {}
    assert decide(guard, call("Write"))["hookSpecificOutput"][
        "permissionDecisionReason"
    ] == "no: " + ROW.format(what="Write")
    assert "{action}" in DELEGATE_REASON


def test_the_rules_say_what_the_wall_does() -> None:
    assert COORDINATOR_RULES == coordinator_rules() == coordinator_rules(1)
    one = (
        "- A one-off hands-on step (one command, one small edit) you may take yourself; two or more in a "
        "row, or a step with over 2,000 characters of input (a large write), go to a worker: the wall "
        "refuses them."
    )
    assert one in coordinator_rules(1)
    assert (
        "- Up to 3 hands-on steps in a row (one command, one small edit) you may take yourself; more in a"
        in coordinator_rules(3)
    )
    assert "- Up to 2 hands-on steps in a row (one command, one small edit)" in coordinator_rules(2)
    strict = coordinator_rules(0)
    assert "- Hands-on tools are refused to you (writing, editing, commands that change anything)." in strict
    assert "hands-on step" not in strict and "one-off" not in strict
    team = {"w": worker("Counts.", "You count.")}
    assert coordinator("lead", "Goal.", team).rules == COORDINATOR_RULES
    assert coordinator("lead", "Goal.", team).own_steps == 1
    assert coordinator("lead", "Goal.", team, own_steps=0).rules == strict
    assert coordinator("lead", "Goal.", team, own_steps=0, rules="mine").rules == "mine"


def test_bad_own_steps_are_named() -> None:
    with pytest.raises(SpecError, match=r"^delegate_guard: own_steps must be 0 or more, got -1$"):
        delegate_guard(own_steps=-1)
    with pytest.raises(SpecError, match=r"own_steps must be an int"):
        delegate_guard(own_steps="1")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match=r"own_steps must be an int"):
        delegate_guard(own_steps=True)
    with pytest.raises(SpecError, match=r"^coordinator_rules: own_steps must be 0 or more, got -2$"):
        coordinator_rules(-2)
    team = {"w": worker("Counts.", "You count.")}
    with pytest.raises(SpecError, match=r"^coordinator 'lead': own_steps must be 0 or more, got -1$"):
        coordinator("lead", "Goal.", team, own_steps=-1)
    with pytest.raises(SpecError, match=r"own_steps only makes sense with delegate_only"):
        AgentSpec(instructions="Do it.", own_steps=1)
    with pytest.raises(SpecError, match=r"^worker: own_steps must be 0 or more, got -1$"):
        AgentSpec(instructions="Do it.", own_steps=-1, delegate_only=True)
