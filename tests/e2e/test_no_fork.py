"""A coordinator's Agent tool offers its declared workers only: flower sets `CLAUDE_CODE_FORK_SUBAGENT=0`
for a delegating session unless the user names the variable. Read from the request log: the Agent tool's
description the model saw, with and without the CLI's `fork` type."""

from __future__ import annotations

from pathlib import Path

import pytest

from flower import Runtime, coordinator, worker
from flower.testing import RecordedRequest, ScriptedModel, agent

pytestmark = pytest.mark.cli

ANALYST = worker("Runs commands and reports.", "You run what you are asked.", tools=["Bash", "Read"])


def _agent_description(request: RecordedRequest) -> str:
    return str(next(t for t in request.body["tools"] if t["name"] == "Agent")["description"])


async def test_a_coordinator_is_offered_no_fork_of_itself(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", ["done"])

    result = await Runtime(workspace, configure=scripted_model.attach).run(
        coordinator("lead", "Goal.", {"analyst": ANALYST}), "Start."
    )

    assert result.ok, result.error
    first = scripted_model.request("main", 0)
    assert "fork" not in _agent_description(first)
    assert "- analyst: Runs commands and reports." in first  # the declared worker is still offered


async def test_a_user_who_names_the_variable_keeps_the_fork(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", ["done"])
    spec = coordinator(
        "lead", "Goal.", {"analyst": ANALYST}, options={"env": {"CLAUDE_CODE_FORK_SUBAGENT": "1"}}
    )

    result = await Runtime(workspace, configure=scripted_model.attach).run(spec, "Start.")

    assert result.ok, result.error
    assert 'subagent_type: "fork"' in _agent_description(scripted_model.request("main", 0))


async def test_a_fork_the_user_kept_is_refused_by_the_wall(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", [agent("fork", "Write the file yourself."), "done"])
    spec = coordinator(
        "lead", "Goal.", {"analyst": ANALYST}, options={"env": {"CLAUDE_CODE_FORK_SUBAGENT": "1"}}
    )

    result = await Runtime(workspace, configure=scripted_model.attach).run(spec, "Start.")

    assert result.ok, result.error
    (refusal,) = scripted_model.request("main", 1).tool_results
    assert refusal.is_error and "a fork of itself" in refusal.text and "declared workers" in refusal.text
    assert [
        r.caller for r in scripted_model.requests() if r.caller != "main"
    ] == []  # no fork asked the model
