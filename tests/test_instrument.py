"""instrument() on plain options: what it adds, what it keeps, and the conflicts it refuses (no CLI)."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

import anyio
import pytest
from claude_agent_sdk import AgentDefinition, ClaudeAgentOptions, HookMatcher, InMemorySessionStore

from flower import CompactPolicy, PruningSessionStore, SpecError, SqliteSessionStore, TrimPolicy, Workbench
from flower._glance import glance_run
from flower._instrument import instrument
from flower._run.tether import is_tethered
from flower._workbench._index_context import INDEX_CONTEXT, index_context_hooks

CHANGED = {
    *("cwd", "system_prompt", "hooks", "session_store", "session_store_flush", "env", "add_dirs", "cli_path")
}
"""The only fields instrument() may touch; every other one must come back as the app set it (the store's
flush mode goes with the store flower puts there: every line as it is written; `cli_path` becomes the
launcher of the same CLI under flower's supervisor)."""
FRESH = INDEX_CONTEXT.split("{block}")[0].strip()


async def app_hook(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
    return {}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path.resolve() / "ws"
    path.mkdir()
    return path


def app_options(ws: Path, **fields: Any) -> ClaudeAgentOptions:
    defaults: dict[str, Any] = {
        "cwd": ws,
        "tools": ["Agent", "Read", "Bash", "Write"],
        "allowed_tools": ["Agent", "Read", "Bash", "Write", "mcp__notes__add"],
        "disallowed_tools": ["WebFetch"],
        "agents": {"w": AgentDefinition(description="Works.", prompt="You work.", tools=["Bash"])},
        "mcp_servers": {"notes": {"type": "stdio", "command": "notes-server"}},
        "hooks": {
            "PreToolUse": [HookMatcher(matcher="Bash", hooks=[app_hook])],
            "UserPromptSubmit": [HookMatcher(matcher=None, hooks=[app_hook])],
        },
        "env": {"APP_FLAG": "1"},
        "model": "claude-sonnet-4-6",
        "max_turns": 40,
        "permission_mode": "dontAsk",
        "setting_sources": [],
        "max_budget_usd": 2.5,
    }
    return ClaudeAgentOptions(**{**defaults, **fields})


def callbacks(options: ClaudeAgentOptions, event: str) -> list[Any]:
    return [hook for matcher in (options.hooks or {}).get(event, []) for hook in matcher.hooks]  # type: ignore[call-overload]


async def decide(options: ClaudeAgentOptions, data: dict[str, Any]) -> dict[str, Any]:
    """What flower's wall (the first PreToolUse callback) says about a call."""
    result: dict[str, Any] = await callbacks(options, "PreToolUse")[0](data, "toolu_1", {"signal": None})
    return result


def denied(result: dict[str, Any]) -> bool:
    return result.get("hookSpecificOutput", {}).get("permissionDecision") == "deny"


# -- what is kept --------------------------------------------------------------------------------------


def test_nothing_of_the_app_is_dropped_and_its_options_are_not_changed(ws: Path) -> None:
    app = app_options(ws)
    before = {f.name: getattr(app, f.name) for f in dataclasses.fields(app)}
    hooks_before = {event: list(matchers) for event, matchers in app.hooks.items()}  # type: ignore[union-attr]

    new = instrument(app, workspace=ws, coordinator=True)

    for field in dataclasses.fields(app):
        assert getattr(app, field.name) is before[field.name], f"the app's {field.name} was replaced"
        if field.name not in CHANGED:
            assert getattr(new, field.name) == before[field.name], field.name
    assert app.hooks == hooks_before and app.session_store is None
    assert new.env == {  # a coordinator's cache: 1 hour; no fork of the coordinator
        **app.env,
        "CLAUDE_CODE_PROMPT_CACHE_TTL": "1h",
        "CLAUDE_CODE_FORK_SUBAGENT": "0",
    }
    assert new.cwd == app.cwd and new.add_dirs == []
    assert is_tethered(new.cli_path) and not is_tethered(app.cli_path)
    for event, matchers in hooks_before.items():
        kept = new.hooks[event][-len(matchers) :]  # type: ignore[index]  # the app's, after ours
        assert [(m.matcher, m.timeout, len(m.hooks)) for m in kept] == [
            (m.matcher, m.timeout, len(m.hooks)) for m in matchers
        ]
    assert callbacks(new, "UserPromptSubmit")[-1] is app_hook
    # a coordinator's wall and the app's PreToolUse callbacks are joined (both reasons when both deny)
    wrapped = callbacks(new, "PreToolUse")[-1]
    assert wrapped is not app_hook and anyio.run(wrapped, {"tool_name": "Bash"}, "toolu_1", {}) == {}


def test_the_apps_post_tool_use_callbacks_are_chained_before_spill(ws: Path) -> None:
    matcher = HookMatcher(matcher="Bash|Write", hooks=[app_hook], timeout=5)
    app = app_options(ws, hooks={"PostToolUse": [matcher]})
    new = instrument(app, workspace=ws)
    mine = new.hooks["PostToolUse"][-1]  # type: ignore[index]
    assert (mine.matcher, mine.timeout, len(mine.hooks)) == ("Bash|Write", 5, 1) and mine.hooks[
        0
    ] is not app_hook
    assert app.hooks == {"PostToolUse": [matcher]} and matcher.hooks == [app_hook]  # the app's are untouched
    unchained = instrument(app, workspace=ws, spill_threshold=None)
    assert callbacks(unchained, "PostToolUse")[-1] is app_hook  # no spill: nothing to chain


def test_flower_adds_its_layers(ws: Path) -> None:
    new = instrument(app_options(ws), workspace=ws, coordinator=True)
    assert isinstance(new.session_store, PruningSessionStore)
    assert isinstance(new.session_store.inner, SqliteSessionStore)
    assert new.session_store.inner.path == str(ws / ".flower" / "sessions.db")
    assert [m.matcher for m in new.hooks["PostToolUse"]] == [  # type: ignore[index]
        "Bash|Read|Grep|Glob|WebFetch|WebSearch",
        "Write|Edit",
        "Agent|Task",  # the cut of long reports, for the app's subagents too
    ]
    # the index, the import of a session the CLI resumed from its own files, the app's hook
    assert len(callbacks(new, "UserPromptSubmit")) == 3 and len(callbacks(new, "PreCompact")) == 1
    # the start of workers that share a prefix (their replies release it), the cap on background reports
    assert len(callbacks(new, "SubagentStop")) == 2
    assert (ws / ".flower" / "INDEX.md").exists()


def test_the_app_store_is_wrapped_and_the_layer_4_policies_pass_through(ws: Path) -> None:
    own = InMemorySessionStore()
    new = instrument(
        app_options(ws, session_store=own), workspace=ws, keep_denials=3, trim=TrimPolicy(keep_recent=2)
    )
    store = new.session_store
    assert isinstance(store, PruningSessionStore) and store.inner is own
    assert store.prune.keep_denials == 3 and store.trim == TrimPolicy(keep_recent=2)
    assert store.spill_dir == str(ws / ".flower" / "spill")


def test_without_a_coordinator_there_is_no_wall(ws: Path) -> None:
    new = instrument(app_options(ws), workspace=ws)
    assert callbacks(new, "PreToolUse") == [app_hook]
    assert "CLAUDE_CODE_PROMPT_CACHE_TTL" not in new.env


def test_a_coordinators_cache_is_the_apps_when_it_chose_one(ws: Path) -> None:
    def env(**fields: Any) -> dict[str, str]:
        return instrument(app_options(ws, **fields), workspace=ws, coordinator=True).env

    assert env(env={"FORCE_PROMPT_CACHING_5M": "1"}) == {
        "FORCE_PROMPT_CACHING_5M": "1",
        "CLAUDE_CODE_FORK_SUBAGENT": "0",
    }
    assert env(env={"CLAUDE_CODE_PROMPT_CACHE_TTL": "5m"})["CLAUDE_CODE_PROMPT_CACHE_TTL"] == "5m"
    assert "CLAUDE_CODE_PROMPT_CACHE_TTL" not in env(settings='{"promptCacheTtl": "5m"}')


def test_layers_can_be_turned_off(ws: Path) -> None:
    new = instrument(
        app_options(ws, system_prompt="APP"),
        workspace=ws,
        workbench=False,
        spill_threshold=None,
        report_limit=None,
    )
    assert new.system_prompt == "APP"
    assert "SubagentStop" not in new.hooks  # type: ignore[operator]
    assert "PostToolUse" not in new.hooks  # type: ignore[operator]
    adopt, app = callbacks(new, "UserPromptSubmit")  # layer 4's import of a pre-flower session stays
    assert app is app_hook and adopt.__qualname__ == "adopt_hooks.<locals>.adopt"
    assert not (ws / ".flower").exists()  # nothing written until the store is used
    assert isinstance(new.session_store, PruningSessionStore)  # layer 4 is always there


# -- the system prompt ---------------------------------------------------------------------------------


def block_of(ws: Path) -> str:
    return Workbench(ws).prompt_block()


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        (None, "{block}"),
        ("You are APP.", "You are APP.\n\n{block}"),
        (
            {"type": "preset", "preset": "claude_code"},
            {"type": "preset", "preset": "claude_code", "append": "{block}"},
        ),
        (
            {"type": "preset", "preset": "claude_code", "append": "APP", "exclude_dynamic_sections": True},
            {
                "type": "preset",
                "preset": "claude_code",
                "append": "APP\n\n{block}",
                "exclude_dynamic_sections": True,
            },
        ),
        (
            {"type": "custom", "prompt": "APP", "snapshot": True},
            {"type": "custom", "prompt": "APP\n\n{block}", "snapshot": True},
        ),
    ],
)
def test_the_workbench_block_follows_the_apps_prompt(ws: Path, prompt: Any, expected: Any) -> None:
    new = instrument(app_options(ws, system_prompt=prompt), workspace=ws)
    block = block_of(ws)
    if isinstance(expected, str):
        assert new.system_prompt == expected.format(block=block)
    else:
        assert new.system_prompt == {
            k: v.format(block=block) if isinstance(v, str) else v for k, v in expected.items()
        }


def test_a_prompt_file_takes_the_block_with_the_prompt_or_refuses(ws: Path) -> None:
    file_prompt = {"type": "file", "path": "prompt.md"}
    with pytest.raises(SpecError, match="workbench_block='prompt'"):
        instrument(app_options(ws, system_prompt=file_prompt), workspace=ws)
    new = instrument(app_options(ws, system_prompt=file_prompt), workspace=ws, workbench_block="prompt")
    assert new.system_prompt == file_prompt
    with pytest.raises(SpecError, match="form flower does not know"):
        instrument(app_options(ws, system_prompt={"type": "other"}), workspace=ws)


# -- the wall ------------------------------------------------------------------------------------------


async def test_the_wall_allows_the_main_thread_the_tools_the_app_gave_it(ws: Path) -> None:
    new = instrument(
        app_options(ws, tools=["Agent", "Read", "Grep", "Write"]), workspace=ws, coordinator=True
    )
    assert await decide(new, {"tool_name": "Grep", "tool_input": {}}) == {}
    assert denied(await decide(new, {"tool_name": "Write", "tool_input": {}}))  # no content: not an own step
    write = {"tool_name": "Write", "tool_input": {"file_path": "a", "content": "x"}, "session_id": "s"}
    assert denied(await decide(new, write))  # the strict wall by default: no own step
    steps = instrument(
        app_options(ws, tools=["Agent", "Read", "Grep", "Write"]), workspace=ws, coordinator=True, own_steps=1
    )
    assert await decide(steps, write) == {}  # one own step, opted in...
    assert denied(await decide(steps, write))  # ...not two in one user turn
    assert await decide(new, {"tool_name": "Write", "tool_input": {}, "agent_id": "a1"}) == {}
    assert await decide(new, {"tool_name": "mcp__notes__add", "tool_input": {}}) == {}
    assert not denied(await decide(new, {"tool_name": "Bash", "tool_input": {"command": "ls"}}))
    glance = await decide(new, {"tool_name": "Bash", "tool_input": {"command": "git status"}})
    rewritten = glance["hookSpecificOutput"]["updatedInput"]["command"]  # allowed: jailed, git hardened
    assert rewritten == glance_run("git status", cwd=None).command != "git status"
    reason = (await decide(new, {"tool_name": "Write", "tool_input": {}}))["hookSpecificOutput"]
    assert str(ws / ".flower" / "artifacts") in reason["permissionDecisionReason"]

    default = instrument(app_options(ws, tools=None), workspace=ws, coordinator=True)
    assert denied(
        await decide(default, {"tool_name": "Grep", "tool_input": {}})
    )  # flower's coordinator tools
    assert await decide(default, {"tool_name": "Read", "tool_input": {}}) == {}
    assert denied(await decide(default, {"tool_name": "TaskCreate", "tool_input": {}}))  # opt-in
    mine = instrument(
        app_options(ws),
        workspace=ws,
        coordinator=True,
        own_tools=["Agent", "Glob"],
        glance=False,
        own_steps=0,
    )
    assert await decide(mine, {"tool_name": "Glob", "tool_input": {}}) == {}
    assert denied(await decide(mine, {"tool_name": "Read", "tool_input": {}}))
    assert denied(await decide(mine, {"tool_name": "Bash", "tool_input": {"command": "ls"}}))


@pytest.mark.parametrize(
    ("fields", "kwargs", "match"),
    [
        ({"tools": ["Read", "Bash"]}, {"coordinator": True}, "options.tools does not offer it"),
        ({"disallowed_tools": ["Task"]}, {"coordinator": True}, "disallowed_tools removes it"),
        ({}, {"coordinator": True, "own_tools": ["Read"]}, "must include 'Agent'"),
        ({}, {"coordinator": True, "own_tools": ["TodoWrite", "Agent"]}, "unknown tool 'TodoWrite'"),
        ({}, {"glance": True}, "need coordinator=True"),
        ({}, {"own_tools": ["Agent"]}, "need coordinator=True"),
        ({}, {"own_steps": 1}, "need coordinator=True"),
        ({}, {"coordinator": True, "own_steps": -1}, "own_steps must be 0 or more, got -1"),
        ({}, {"inline_until": 40_000}, "need coordinator=True"),
        ({}, {"coordinator": True, "inline_until": 0}, "inline_until must be a positive number of tokens"),
        ({}, {"coordinator": True, "inline_until": 9, "own_steps": 1}, "not both"),
    ],
)
def test_a_coordinator_needs_the_agent_tool(ws: Path, fields: Any, kwargs: Any, match: str) -> None:
    with pytest.raises(SpecError, match=match):
        instrument(app_options(ws, **fields), workspace=ws, **kwargs)


# -- conflicts -----------------------------------------------------------------------------------------


def test_checkpointing_cannot_go_with_a_store(ws: Path) -> None:
    with pytest.raises(SpecError, match="enable_file_checkpointing=True cannot go with your session_store"):
        instrument(
            app_options(ws, enable_file_checkpointing=True, session_store=InMemorySessionStore()),
            workspace=ws,
        )
    with pytest.raises(SpecError, match="the session store flower adds"):
        instrument(app_options(ws, enable_file_checkpointing=True), workspace=ws)


def test_a_store_is_not_layered_twice(ws: Path) -> None:
    once = instrument(app_options(ws), workspace=ws)
    with pytest.raises(SpecError, match="already a flower layer-4 store"):
        instrument(once, workspace=ws)


@pytest.mark.parametrize(
    ("env", "mode", "match"),
    [
        ({"DISABLE_COMPACT": "1"}, "no_summary", r"DISABLE_COMPACT='1'.*mode='no_summary'"),
        ({"DISABLE_AUTO_COMPACT": "1"}, "auto", r"DISABLE_AUTO_COMPACT='1'.*mode='auto'"),
        ({"DISABLE_COMPACT": "true"}, "auto", r"DISABLE_COMPACT='true'.*compaction left on"),
        (
            {"DISABLE_AUTO_COMPACT": "0"},
            "no_summary",
            r"DISABLE_AUTO_COMPACT='0'.*needs DISABLE_AUTO_COMPACT='1'",
        ),
        ({"DISABLE_COMPACT": "0"}, "off", r"DISABLE_COMPACT='0'.*mode='off'"),
    ],
)
def test_compaction_env_that_contradicts_the_policy_raises(ws: Path, env: Any, mode: Any, match: str) -> None:
    with pytest.raises(SpecError, match=match):
        instrument(app_options(ws, env=env), workspace=ws, compact=CompactPolicy(mode=mode))


def test_compaction_env_that_agrees_is_kept_and_none_leaves_the_app_alone(ws: Path) -> None:
    def env(app_env: dict[str, str], compact: CompactPolicy | None) -> dict[str, str]:
        return instrument(app_options(ws, env=app_env), workspace=ws, compact=compact).env

    assert env({"DISABLE_COMPACT": "1"}, None) == {"DISABLE_COMPACT": "1"}
    assert env({}, CompactPolicy(mode="no_summary")) == {"DISABLE_AUTO_COMPACT": "1"}
    assert env({"DISABLE_AUTO_COMPACT": "true"}, CompactPolicy(mode="no_summary")) == {
        "DISABLE_AUTO_COMPACT": "true"
    }
    assert env({"DISABLE_AUTO_COMPACT": "1"}, CompactPolicy(mode="off")) == {
        "DISABLE_AUTO_COMPACT": "1",
        "DISABLE_COMPACT": "1",
    }
    assert env({"DISABLE_AUTO_COMPACT": "0", "X": "y"}, CompactPolicy()) == {
        "DISABLE_AUTO_COMPACT": "0",
        "X": "y",
    }
    with pytest.raises(SpecError, match="autoCompactEnabled"):
        instrument(
            app_options(ws, settings='{"autoCompactEnabled": false}'), workspace=ws, compact=CompactPolicy()
        )


# -- where the CLI runs --------------------------------------------------------------------------------


def test_cwd_defaults_to_the_workspace_and_an_outside_workbench_is_added(ws: Path, tmp_path: Path) -> None:
    assert instrument(app_options(ws, cwd=None), workspace=ws).cwd == ws.resolve()
    repo = tmp_path / "repo"
    repo.mkdir()
    new = instrument(app_options(ws, cwd=repo, add_dirs=["/data"]), workspace=ws)
    assert new.cwd == repo and new.add_dirs == ["/data", ws.resolve() / ".flower"]
    inside = instrument(app_options(repo, cwd=tmp_path), workspace=repo, workbench=False)
    assert inside.add_dirs == []
    for cwd, what in ((tmp_path / "gone", "does not exist"), (repo / "file.txt", "is not a directory")):
        (repo / "file.txt").write_text("")
        with pytest.raises(SpecError, match=rf"instrument: options\.cwd {cwd} {what}; the CLI starts there"):
            instrument(app_options(ws, cwd=cwd), workspace=ws)  # refused now, not at the app's first query


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"workspace": 3}, "workspace must be a str or a path"),
        ({"workspace": "missing-dir"}, "does not exist"),
        ({"spill_threshold": "4000"}, "spill_threshold must be"),
        ({"keep_denials": -1}, "keep_denials must be"),
        ({"report_limit": -5}, "report_limit must be"),
        ({"report_limit": True}, "report_limit must be"),
        ({"workbench": "yes"}, "workbench must be"),
        ({"workbench_block": "user"}, "workbench_block must be"),
        ({"compact": "auto"}, "compact must be a CompactPolicy"),
        ({"coordinator": 1}, "coordinator must be True or False"),
    ],
)
def test_bad_arguments_raise_spec_errors(ws: Path, kwargs: dict[str, Any], match: str) -> None:
    arguments: dict[str, Any] = {"workspace": ws, **kwargs}
    with pytest.raises(SpecError, match=match):
        instrument(app_options(ws), **arguments)


def test_options_must_be_sdk_options(ws: Path) -> None:
    with pytest.raises(SpecError, match="ClaudeAgentOptions"):
        instrument({"cwd": ws}, workspace=ws)  # type: ignore[arg-type]
    (ws / "file").write_text("")
    with pytest.raises(SpecError, match="not a directory"):
        instrument(app_options(ws), workspace=ws / "file")


# -- the fresh index before a prompt -------------------------------------------------------------------


async def prompt(hooks: dict[str, Any], session: str, transcript: Path) -> str | None:
    data = {
        "hook_event_name": "UserPromptSubmit",
        "session_id": session,
        "transcript_path": str(transcript),
        "prompt": "go",
    }
    result = await hooks["UserPromptSubmit"][0].hooks[0](data, None, {"signal": None})
    context = result.get("hookSpecificOutput", {}).get("additionalContext")
    return context if isinstance(context, str) else None


async def test_a_session_gets_the_index_again_only_when_it_changed(ws: Path) -> None:
    wb = Workbench(ws)
    hooks = index_context_hooks(wb, initial=wb.prompt_block())
    absent = ws / "absent.jsonl"
    assert await prompt(hooks, "s1", absent) is None  # new session: the system prompt has the same block

    (wb.scripts / "count.sh").write_text("# desc: count lines\n")
    context = await prompt(hooks, "s1", absent)
    assert context is not None and context.startswith(FRESH) and "scripts/count.sh" in context
    assert await prompt(hooks, "s1", absent) is None  # seen: no second copy

    existing = ws / "resumed.jsonl"
    existing.write_text("{}\n")
    assert await prompt(hooks, "s2", existing) is not None  # resumed, never met: what it saw is unknown
    assert await prompt(hooks, "s3", absent) is not None  # new, but the index changed since `initial`

    await hooks["PreCompact"][0].hooks[0]({"hook_event_name": "PreCompact", "session_id": "s1"}, None, {})
    assert await prompt(hooks, "s1", absent) is not None  # compacted: back to the system prompt's block


async def test_without_a_block_in_the_system_prompt_the_first_prompt_carries_it(ws: Path) -> None:
    hooks = index_context_hooks(Workbench(ws), initial=None)
    assert await prompt(hooks, "s1", ws / "absent.jsonl") is not None
    assert await prompt(hooks, "s1", ws / "absent.jsonl") is None


async def test_the_index_hook_fails_open(ws: Path, caplog: pytest.LogCaptureFixture) -> None:
    hooks = index_context_hooks(Workbench(ws, root=ws / "blocker"), initial=None)
    (ws / "blocker").write_text("a file where the workbench should be")
    with caplog.at_level(logging.WARNING, logger="flower.index"):
        assert await prompt(hooks, "s1", ws / "absent.jsonl") is None
    assert "could not be given" in caplog.text
    with pytest.raises(SpecError):
        index_context_hooks(Workbench(ws), initial=None, text="no placeholder")
