"""AgentSpec, worker(), coordinator() and build_options(): validation and what the options hold (pure)."""

from __future__ import annotations

import dataclasses
import os

import pytest
from claude_agent_sdk import HookMatcher

from flower import (
    COORDINATOR_PROMPT,
    COORDINATOR_RULES,
    WORKER_RULES,
    AgentSpec,
    CompactPolicy,
    SpecError,
    build_options,
    coordinator,
    worker,
)

ANALYST = worker("Analyse files.", "You analyse.", tools=["Read", "Bash", "Glob"])


def test_worker_defaults() -> None:
    w = worker("Analyse files.", "You analyse.")
    assert w.model == "inherit" and w.rules == WORKER_RULES and not w.delegate_only
    assert w.tools == ("Bash", "Read", "Write", "Edit", "Glob", "Grep")
    assert w.prompt == f"{WORKER_RULES}\n\nYou analyse."


def test_coordinator_is_always_delegate_only_with_glance_bash() -> None:
    c = coordinator("主控", "Goal.", {"分析员": ANALYST})
    assert c.delegate_only and c.glance and "Bash" in c.tools and "Agent" in c.tools
    assert c.workers["分析员"].name == "分析员"
    assert "Bash" not in coordinator("c", "Goal.", {"a": ANALYST}, glance=False).tools
    with pytest.raises(TypeError):
        coordinator("c", "Goal.", {"a": ANALYST}, delegate_only=False)  # type: ignore[call-arg]


def test_specs_are_immutable() -> None:
    c = coordinator("c", "Goal.", {"a": ANALYST})
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.delegate_only = False  # type: ignore[misc]
    with pytest.raises(TypeError):
        c.workers["b"] = ANALYST  # type: ignore[index]
    assert dataclasses.replace(c, name="d").workers == c.workers


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: worker("", "x"), "description"),
        (lambda: worker("d", "   "), "instructions"),
        (lambda: worker("d", "x", tools=["Bash", "Bsh"]), "unknown tool 'Bsh'"),
        (lambda: worker("d", "x", tools=["PowerShell"]), "does not offer it to SDK sessions"),
        (lambda: worker("d", "x", tools=["TodoWrite"]), "TaskCreate"),
        (lambda: worker("d", "x", tools="Bash"), "tools must be a sequence of str"),
        (lambda: worker("d", "x", max_turns=0), "max_turns"),
        (lambda: coordinator("", "x", {}), "name"),
        (lambda: coordinator("c", "x", [("a", ANALYST), ("a", ANALYST)]), "duplicate worker name 'a'"),
        (lambda: coordinator("c", "x", {"é": ANALYST, "e\u0301": ANALYST}), "duplicate worker name"),
        (lambda: coordinator("c", "x", {" a": ANALYST}), "surrounding spaces"),
        (lambda: coordinator("c", "x", {"a": "not a spec"}), "workers must be a mapping of str to AgentSpec"),
        (  # a list of workers: what is expected, in words, and how to name them
            lambda: coordinator("c", "x", [ANALYST]),
            r"^coordinator: workers must be a mapping of str to AgentSpec or a sequence of "
            r"\(str, AgentSpec\) pairs, got \[AgentSpec\(.*"
            r": name each worker, as in \{'analyst': worker\(\.\.\.\)\}$",
        ),
        (lambda: coordinator("c", "x", {"a": worker("d", "x")}, tools=["Read"]), "no Agent tool"),
        (lambda: coordinator("c", "x", {"Explore": ANALYST}, builtin_agents=True), "built-in agent"),
        (lambda: coordinator("c", "x", {"a": coordinator("b", "y", {"w": ANALYST})}), "nest"),
        (lambda: coordinator("c", "x", {"a": ANALYST}, options={"cwd": "/"}), "set by flower"),
        (
            lambda: coordinator("c", "x", {"a": ANALYST}, options={"nope": 1}),
            "unknown ClaudeAgentOptions field",
        ),
        (lambda: coordinator("c", "x", {}), r"coordinator 'c': workers is empty.*builtin_agents=True"),
        (lambda: AgentSpec(instructions="x", glance=True), "glance"),
        (lambda: CompactPolicy(mode="sometimes"), "mode"),  # type: ignore[arg-type]
    ],
)
def test_invalid_specs_fail_with_a_clear_message(build, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SpecError, match=message):
        build()


def test_a_coordinator_without_workers_delegates_to_the_clis_own_agents() -> None:
    alone = coordinator("c", "x", {}, builtin_agents=True)  # the CLI's general-purpose agent and the rest
    assert alone.workers == {} and "Agent" in alone.tools
    assert "CLAUDE_AGENT_SDK_DISABLE_BUILTIN_AGENTS" not in build_options(alone).env


def test_build_options_for_a_coordinator() -> None:
    mine = HookMatcher(matcher="Bash", hooks=[])
    c = coordinator(
        "主控",
        "Goal: measure.",
        {"分析员": ANALYST, "editor": worker("Edits.", "You edit.", tools=["Read", "Edit"])},
        hooks={"PreToolUse": [mine]},
        options={"max_budget_usd": 2.0, "env": {"MY_VAR": "1"}},
    )
    options = build_options(
        c, cwd="/ws", artifacts="/ws/.flower/artifacts", compact=CompactPolicy(mode="no_summary")
    )
    assert options.system_prompt == f"{COORDINATOR_PROMPT}\n\n{COORDINATOR_RULES}\n\nGoal: measure."
    assert options.tools == ["Agent", "Read", "Bash", "Glob", "Edit"]  # planning tools are opt-in
    assert options.allowed_tools == options.tools
    assert set(options.agents or {}) == {"分析员", "editor"}
    definition = (options.agents or {})["分析员"]
    assert definition.model == "inherit" and definition.tools == ["Bash", "Glob", "Read"]  # sorted: shared
    assert definition.prompt.startswith(WORKER_RULES) and definition.prompt.endswith("You analyse.")
    pre = (options.hooks or {})["PreToolUse"]
    # the wall first, then the mandate line and the start of workers that share a prefix, the user's kept
    assert len(pre) == 3 and pre[0].matcher is None and pre[1].matcher is None and pre[2] is mine
    assert len(pre[1].hooks) == 2 and [m.matcher for m in (options.hooks or {})["SubagentStop"]] == [None]
    assert options.setting_sources == [] and options.permission_mode == "dontAsk"
    assert options.env == {
        "MY_VAR": "1",
        "CLAUDE_AGENT_SDK_DISABLE_BUILTIN_AGENTS": "1",
        "DISABLE_AUTO_COMPACT": "1",
        "CLAUDE_CODE_PROMPT_CACHE_TTL": "1h",  # a session that delegates: the main thread's cache
        "CLAUDE_CODE_FORK_SUBAGENT": "0",  # ...and its Agent tool offers no fork of the coordinator
    }
    assert options.max_budget_usd == 2.0 and options.model is None


def test_a_coordinators_inline_session_has_its_hands_on_tools_a_short_prompt_and_no_worker() -> None:
    c = coordinator(
        "lead", "Goal: measure.", {"a": ANALYST}, inline_until=30_000, tools=["Agent", "Read", "SendMessage"]
    )
    options = build_options(c, cwd="/ws", inline_session=True, append="WORKBENCH")
    assert options.tools == ["Read", "Bash", "Glob"] and options.allowed_tools == options.tools
    assert options.agents is None
    prompt = options.system_prompt
    assert isinstance(prompt, str) and prompt.endswith("Goal: measure.\n\nWORKBENCH")
    assert "Once your context reaches 30,000 tokens" in prompt and "## Safety" in prompt
    assert COORDINATOR_PROMPT not in prompt and "How you work: you coordinate" not in prompt
    assert [m.matcher for m in (options.hooks or {})["PreToolUse"]] == [None]  # the wall; no mandate hooks
    assert "SubagentStop" not in (options.hooks or {})
    assert (
        "CLAUDE_CODE_PROMPT_CACHE_TTL" not in options.env and "CLAUDE_CODE_FORK_SUBAGENT" not in options.env
    )
    whole = build_options(c, cwd="/ws")  # the coordinator it hands off to keeps everything
    assert whole.tools is not None and "Agent" in whole.tools and set(whole.agents or {}) == {"a"}
    preset = build_options(dataclasses.replace(c, claude_code_preset=True), inline_session=True).system_prompt
    assert isinstance(preset, dict) and "Once your context reaches 30,000 tokens" in preset["append"]
    with pytest.raises(SpecError, match="inline_session=True needs a spec with inline_until"):
        build_options(coordinator("lead", "Goal.", {"a": ANALYST}), inline_session=True)


def test_the_preset_stays_on_hands_on_agents_and_comes_back_on_a_coordinator_on_request() -> None:
    kept = build_options(coordinator("c", "Goal.", {"a": ANALYST}, claude_code_preset=True))
    assert kept.system_prompt == {
        "type": "preset",
        "preset": "claude_code",
        "append": f"{COORDINATOR_RULES}\n\nGoal.",
    }
    alone = build_options(worker("d", "You do it."), append="more")
    assert alone.system_prompt == {
        "type": "preset",
        "preset": "claude_code",
        "append": f"{WORKER_RULES}\n\nYou do it.\n\nmore",
    }
    with pytest.raises(SpecError, match="only a coordinator"):
        AgentSpec(instructions="x", claude_code_preset=False)


def test_agent_and_the_one_hour_cache_only_where_something_is_delegated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in list(os.environ):
        if "PROMPT_CACH" in name:
            monkeypatch.delenv(name)
    # a coordinator without workers is refused (unless it delegates to the CLI's own agents)
    builtin = build_options(coordinator("c", "x", {}, builtin_agents=True))
    assert "Agent" in builtin.tools and builtin.env["CLAUDE_CODE_PROMPT_CACHE_TTL"] == "1h"  # type: ignore[operator]
    assert "CLAUDE_CODE_PROMPT_CACHE_TTL" not in build_options(worker("d", "x")).env

    def ttl(spec: AgentSpec) -> str | None:
        return build_options(spec).env.get("CLAUDE_CODE_PROMPT_CACHE_TTL")

    team = {"a": ANALYST}
    for chosen in (
        {"CLAUDE_CODE_PROMPT_CACHE_TTL": "5m"},
        {"FORCE_PROMPT_CACHING_5M": "1"},
        {"DISABLE_PROMPT_CACHING_SONNET": "1"},
        {"ENABLE_PROMPT_CACHING_1H": "1"},
        {"CLAUDE_CODE_SUBAGENT_PROMPT_CACHE_TTL": "1h"},
    ):  # the user's choice wins, whatever it is
        assert ttl(coordinator("c", "x", team, options={"env": chosen})) == chosen.get(
            "CLAUDE_CODE_PROMPT_CACHE_TTL"
        )
    assert ttl(coordinator("c", "x", team, options={"env": {"FORCE_PROMPT_CACHING_5M": ""}})) == "1h"
    assert ttl(coordinator("c", "x", team, options={"settings": '{"promptCacheTtl": "5m"}'})) is None
    monkeypatch.setenv("FORCE_PROMPT_CACHING_5M", "1")
    assert ttl(coordinator("c", "x", team)) is None


def test_the_spec_compact_policy_wins_and_conflicts_are_named() -> None:
    c = coordinator("c", "x", {"a": ANALYST}, compact=CompactPolicy(mode="auto"))
    assert "DISABLE_AUTO_COMPACT" not in build_options(c, compact=CompactPolicy(mode="no_summary")).env
    clash = coordinator("c", "x", {"a": ANALYST}, options={"env": {"DISABLE_COMPACT": "0"}})
    with pytest.raises(SpecError, match="DISABLE_COMPACT"):
        build_options(clash, compact=CompactPolicy(mode="off"))


def test_build_options_arguments() -> None:
    w = worker("d", "x")
    with pytest.raises(SpecError, match="fork"):
        build_options(w, fork=True)
    with pytest.raises(SpecError, match="AgentSpec"):
        build_options("spec")  # type: ignore[arg-type]
    options = build_options(w, resume="sid", fork=True)
    assert options.resume == "sid" and options.fork_session
    assert options.hooks is None  # a worker run alone has no wall
    assert build_options(dataclasses.replace(w, setting_sources=None)).setting_sources is None
