"""The wall's answers written out in full: each refusal, the reason a model reads, where a glance runs,
what a failure logs; and how two denials' reasons are read and joined."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from flower import SpecError, delegate_guard
from flower._wall._deny_chain import _with_reason, denial_reason
from flower._wall._tools import check_tools
from tests.wall.delegate_calls import bash, decide, refusal


def test_each_refusal_is_the_clis_deny_with_its_action() -> None:
    guard = delegate_guard(own_steps=0)
    assert decide(guard, {"tool_name": "Write", "tool_input": {}}) == refusal("use Write itself")
    assert decide(guard, {"tool_name": "Grep", "tool_input": {}}) == refusal("use Grep itself")  # not its own
    assert decide(guard, {"tool_name": None, "tool_input": {}}) == refusal("use an unnamed tool")
    assert decide(guard, bash(5)) == refusal("run a Bash call without a command")  # type: ignore[arg-type]
    at = delegate_guard(artifacts="/ws/.flower/artifacts", own_steps=0)
    assert decide(at, {"tool_name": "Edit"}) == refusal("use Edit itself", "`/ws/.flower/artifacts`")


def test_a_refused_command_is_shown_whole_up_to_120_chars() -> None:
    guard = delegate_guard(own_steps=0)
    exact = "rm " + "x" * 117  # 120 chars
    reason = decide(guard, bash(exact))["hookSpecificOutput"]["permissionDecisionReason"]
    assert f"run `{exact}` itself" in reason
    longer = "rm " + "y" * 118  # 121 chars: its first 117 and an ellipsis
    reason = decide(guard, bash(longer))["hookSpecificOutput"]["permissionDecisionReason"]
    assert f"run `{longer[:117]}...` itself" in reason


def test_a_glance_is_judged_from_the_directory_it_runs_in(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "p")
    guard = delegate_guard(own_steps=0)
    reason = decide(guard, bash("cat p", cwd=str(tmp_path)))["hookSpecificOutput"]["permissionDecisionReason"]
    assert "would read a named pipe" in reason
    assert decide(guard, bash("cat p", cwd=5))["hookSpecificOutput"].get("permissionDecision") != "deny"


def test_a_failure_to_decide_refuses_the_call_and_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="flower.delegate"):
        result = decide(delegate_guard(own_steps=0), "not a hook input")
    assert result == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": (
                "flower: the delegation guard could not decide on this call, so it was refused. Delegate it."
            ),
        }
    }
    (record,) = caplog.records
    assert record.getMessage() == "delegate_guard failed; refusing the call" and record.exc_info


def test_bad_arguments_are_named() -> None:
    with pytest.raises(SpecError, match=r"^delegate_guard: reason must contain \{action\} \(and may contain"):
        delegate_guard(reason="no placeholder")
    with pytest.raises(SpecError, match=r"^delegate_guard: allowed: unknown tool 'Agnet'"):
        delegate_guard(allowed=["Agnet"])
    with pytest.raises(SpecError, match=r"^app: tools must be a list of names, not the string 'Bash'$"):
        check_tools("Bash", owner="app")


def test_a_denials_reason_is_read_from_either_form() -> None:
    deny = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"}}
    assert denial_reason(deny) == ""
    assert denial_reason(
        {"hookSpecificOutput": {**deny["hookSpecificOutput"], "permissionDecisionReason": "r"}}
    ) == ("r")
    assert (
        denial_reason({"decision": "block"}) == ""
        and denial_reason({"decision": "block", "reason": "b"}) == "b"
    )
    assert denial_reason({"decision": "allow", "reason": "b"}) is None
    assert denial_reason({"hookSpecificOutput": "not a mapping"}) is None
    assert denial_reason({"hookSpecificOutput": {"permissionDecision": "allow"}}) is None
    assert denial_reason(["not", "a", "mapping"]) is None


def test_a_joined_reason_replaces_the_one_each_form_carries() -> None:
    deny = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"}, "x": 1}
    assert _with_reason(deny, "both") == {  # type: ignore[arg-type]
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "both",
        },
        "x": 1,
    }
    block = {"decision": "block", "hookSpecificOutput": {"hookEventName": "PreToolUse"}}
    assert _with_reason(block, "both") == {**block, "reason": "both"}  # type: ignore[arg-type]


def test_a_tool_list_is_checked_name_by_name_with_a_hint() -> None:
    assert check_tools(["Task", "Read", "Agent", "mcp__s__t"], owner="o") == ("Agent", "Read", "mcp__s__t")
    with pytest.raises(
        SpecError, match=r"^o: unknown tool 'Agnet' \(known tools: Agent, AskUserQuestion, Bash, "
    ):
        check_tools(["Agnet"], owner="o")
    with pytest.raises(SpecError, match=r"^o: unknown tool 'TodoWrite' \(planning tools are TaskCreate"):
        check_tools(["TodoWrite"], owner="o")
    with pytest.raises(
        SpecError, match=r"^o: unknown tool 'PowerShell' \(the CLI does not offer it to SDK sessions\)$"
    ):
        check_tools(["PowerShell"], owner="o")
    for bad in ("", 5):
        with pytest.raises(SpecError, match=rf"^o: tool names must be non-empty strings, got {bad!r}$"):
            check_tools([bad], owner="o")  # type: ignore[list-item]
