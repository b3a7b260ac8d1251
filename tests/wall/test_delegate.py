"""delegate_guard decides from structure: agent_id, tool name, the glance predicate (pure, plain dicts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flower import CLI_TOOLS, delegate_guard, glance_verdict, is_ephemeral
from flower._glance import BashRules, jail_command, jail_support
from tests.glance.table import CASES as GLANCE_CASES
from tests.wall.delegate_calls import bash, decide, denied


def test_main_thread_hands_on_tools_are_refused_and_subagents_pass() -> None:
    guard = delegate_guard(artifacts="/ws/.flower/artifacts", own_steps=0)
    for tool in ("Write", "Edit", "NotebookEdit", "Grep", "WebFetch", "TaskCreate"):
        result = decide(guard, {"tool_name": tool, "tool_input": {}})
        assert denied(result), tool
        assert "`/ws/.flower/artifacts`" in result["hookSpecificOutput"]["permissionDecisionReason"]
        assert decide(guard, {"tool_name": tool, "tool_input": {}, "agent_id": "a1"}) == {}
    for tool in ("Agent", "Read", "mcp__mine__ask"):
        assert decide(guard, {"tool_name": tool, "tool_input": {}}) == {}


def test_the_clis_own_protocol_tools_always_pass() -> None:
    guard = delegate_guard(allowed=["Agent"])
    for tool in sorted(CLI_TOOLS):
        assert decide(guard, {"tool_name": tool, "tool_input": {}}) == {}, tool
    assert {"StructuredOutput", "ToolSearch"} <= CLI_TOOLS and not CLI_TOOLS & {"Bash", "Write", "Edit"}


def test_glance_and_its_reason() -> None:
    guard = delegate_guard(own_steps=0)
    assert not denied(decide(guard, bash("git status -s && git log --oneline -3")))
    result = decide(guard, bash("git status && rm -rf x"))
    reason = result["hookSpecificOutput"]["permissionDecisionReason"]
    assert "`rm` is not a read-only command" in reason and "a file (not its reply)" in reason
    assert decide(guard, bash("rm -rf x", agent_id="a1")) == {}
    no_glance = delegate_guard(glance=False, own_steps=0)
    assert denied(decide(no_glance, bash("ls")))


@pytest.mark.parametrize("data", ["junk", None, {"tool_name": 3}, {"tool_name": "Bash", "tool_input": None}])
def test_it_fails_closed(data) -> None:  # type: ignore[no-untyped-def]
    assert denied(decide(delegate_guard(own_steps=0), data))


def test_one_predicate_decides_glance_and_expiry() -> None:
    """The wall lets a main-thread Bash through exactly when `is_ephemeral` holds (which expiry uses too)."""
    guard = delegate_guard(own_steps=0)
    commands = [case[0] for case in GLANCE_CASES]
    assert len(commands) >= 150
    for command in commands:
        assert (not denied(decide(guard, bash(command)))) == is_ephemeral(command), command


@pytest.mark.skipif(not jail_support().available, reason=f"no glance jail here: {jail_support().reason}")
def test_a_glance_runs_in_the_jail_with_git_hardened(tmp_path: Path) -> None:
    guard = delegate_guard(own_steps=0)
    data = bash("git status -s && ls", description="look", cwd=str(tmp_path))
    result = decide(guard, data)
    hardened = glance_verdict("git status -s && ls").command
    assert result == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "updatedInput": {"command": jail_command(hardened), "description": "look"},
            # the wall approves the launcher it wrote: the CLI would judge it, not the model's command
            "permissionDecision": "allow",
            "permissionDecisionReason": "flower: the wall checked the command the model wrote",
        }
    }
    assert hardened.startswith("git --no-optional-locks -c ")


def test_a_users_bash_deny_rule_holds_for_the_command_the_model_wrote(tmp_path: Path) -> None:
    """The jailed command no longer matches a rule written for the model's; the wall matches it instead."""
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text('{"permissions": {"deny": ["Bash(git log:*)"]}}')
    rules = BashRules(disallowed=("Bash(cat:*)",), setting_sources=("project",), cwd=str(tmp_path))
    guard = delegate_guard(rules=rules, own_steps=0)
    for command in ("git log -3", "git status && git log", "cat README.md"):
        result = decide(guard, bash(command, cwd=str(tmp_path)))
        assert denied(result), command
        assert "permission rule `Bash(" in result["hookSpecificOutput"]["permissionDecisionReason"]
    assert not denied(decide(guard, bash("git status", cwd=str(tmp_path))))
    (tmp_path / ".claude" / "settings.json").write_text("{not json")  # unreadable: fail closed
    assert denied(decide(guard, bash("git status", cwd=str(tmp_path))))


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="action"):
        delegate_guard(reason="no placeholder")
    with pytest.raises(ValueError, match="unknown tool"):
        delegate_guard(allowed=["Agnet"])
