"""Subagents through the real Agent tool: told apart from the main thread, foreground and background."""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_agent_sdk import AgentDefinition

from flower.testing import ScriptedModel, agent, bash
from tests.facts import fact

pytestmark = pytest.mark.cli

NAME = "分析员"


def analyst() -> dict[str, AgentDefinition]:
    return {
        NAME: AgentDefinition(
            description="中文分析员: counts things",
            prompt="You count things.",
            tools=["Bash"],
            model="inherit",
        )
    }


async def test_foreground_subagent_with_a_unicode_name(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", [agent(NAME, "Count to three.", background=False), "The analyst says 3."])
    scripted_model.script(NAME, [bash("echo SUB-RAN"), "REPORT: three"])

    run = await scripted_model.run("Delegate", cwd=workspace, agents=analyst())

    assert run.text == "The analyst says 3."
    assert [r.caller for r in scripted_model.requests()] == ["main", NAME, NAME, "main"]
    first = scripted_model.request(NAME, 0)
    fact(
        "cc_is_subagent=true" in first.system_text,
        "§1",
        "a subagent's billing header carries cc_is_subagent=true",
    )
    fact(
        "You count things." in first.system_text,
        "§1",
        "a subagent's system prompt carries AgentDefinition.prompt",
    )
    fact(NAME not in first.last_user_text, "§1", "the agent name does not appear in the subagent's messages")
    fact(
        "Count to three." in first.last_user_text, "§1", "the subagent's first user message holds the prompt"
    )
    fact(
        set(first.tool_names) - {"DeferredToolPlaceholder"} == {"Bash"},
        "§1",
        "a subagent is offered exactly AgentDefinition.tools",
    )
    fact(
        first.model == scripted_model.request("main", 0).model,
        "§1",
        'model="inherit" gives the subagent the parent\'s model',
    )
    assert scripted_model.request(NAME, 1).tool_results[0].text == "SUB-RAN"
    (report,) = scripted_model.request("main", 1).tool_results
    assert report.tool_name == "Agent"
    fact(
        "  REPORT: three" in report.text,
        "§1",
        "the subagent's report reaches the main thread, indented by two spaces",
    )
    fact(
        "SUB-RAN" not in scripted_model.request("main", 1),
        "§1",
        "the subagent's tool calls do not reach the main thread",
    )
    fact(
        "Available agent types for the Agent tool" in scripted_model.request("main", 0)
        and f"- {NAME}: 中文分析员: counts things" in scripted_model.request("main", 0),
        "§1",
        "the agent list reaches the main thread as a role:system message",
    )


async def test_background_subagent_is_the_default(scripted_model: ScriptedModel, workspace: Path) -> None:
    scripted_model.script(
        "main", [agent(NAME, "Count in the background.", background=None), "MAIN-WAITING", "MAIN-FINAL"]
    )
    scripted_model.script(NAME, ["REPORT: done in the background"])

    run = await scripted_model.run("Delegate", cwd=workspace, agents=analyst())

    launched = scripted_model.request("main", 1).tool_results[0].text
    fact(
        "Async agent launched successfully" in launched,
        "§1",
        "the Agent tool runs in the background by default",
    )
    fact(len(run.results) == 2, "§1", "a background subagent makes one query() yield two ResultMessages")
    assert [r.result for r in run.results] == ["MAIN-WAITING", "MAIN-FINAL"]
    notification = scripted_model.request("main", 2).last_user_text
    fact(
        "<task-notification>" in notification and "REPORT: done in the background" in notification,
        "§1",
        "a finished background subagent reaches the main thread as a task-notification user message",
    )


async def test_a_subagent_recognised_by_its_tool_set(scripted_model: ScriptedModel, workspace: Path) -> None:
    scripted_model.script("main", [agent("reader", "Read it.", background=False), "ok"])
    scripted_model.script("reader", ["READER-REPORT"], tools=["Read", "Glob"])
    agents = {"reader": AgentDefinition(description="reads", prompt="You read.", tools=["Read", "Glob"])}

    await scripted_model.run("Go", cwd=workspace, agents=agents, mark_agents=False)

    assert [r.caller for r in scripted_model.requests()] == ["main", "reader", "main"]
    assert "[scripted-model agent:" not in scripted_model.request("reader", 0)
