"""The strict wall and own steps through the real CLI, under bash and zsh: by default a coordinator's
hands-on calls are refused with the way to delegate; `own_steps=1` opted in gives one per user turn (a
glance does not give it back, the next prompt does), never a command that reads secrets, and an own
step's environment is scrubbed. Asserted on what the model read (the request log) and on the files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ClaudeSDKClient, ResultMessage

from flower import Runtime, coordinator, instrument
from flower.testing import ScriptedModel, agent, bash, reply, tool_use
from tests.credentials import leaks
from tests.e2e.glance_secrets import SHELLS, _secrets
from tests.wall.cli_runs import HELPER, WAY, runtime

pytestmark = pytest.mark.cli

TURN = "flower: the coordinator does not take a second hands-on step in one user turn"


def lead(**knobs: int) -> Any:
    return coordinator("lead", "Goal: tidy up.", {"helper": HELPER}, **knobs)


@pytest.mark.parametrize("shell", SHELLS, ids=os.path.basename)
async def test_by_default_every_hands_on_call_is_refused_with_the_way_to_delegate(
    scripted_model: ScriptedModel, workspace: Path, shell: str
) -> None:
    (workspace / "keep.txt").write_text("a\n")
    calls = [
        tool_use("Write", file_path=str(workspace / "w.txt"), content="hi"),
        bash("touch t.txt"),
        bash("rm keep.txt"),
        bash("sed -i s/a/b/ keep.txt"),
    ]
    scripted_model.script("main", [*calls, "done"])
    result = await runtime(scripted_model, workspace, {"SHELL": shell}).run(lead(), "Start.")

    assert result.ok, result.error
    results = scripted_model.request("main", -1).tool_results
    assert len(results) == 4
    for view in results:
        assert view.is_error and "flower: the coordinator does not " in view.text and WAY in view.text
    assert "use Write itself" in results[0].text and "run `touch t.txt` itself" in results[1].text
    assert not (workspace / "w.txt").exists() and not (workspace / "t.txt").exists()
    assert (workspace / "keep.txt").read_text() == "a\n"
    system = scripted_model.request("main", 0).system_text
    assert "Hands-on tools are refused to you, every call at once" in system


@pytest.mark.parametrize("shell", SHELLS, ids=os.path.basename)
async def test_with_one_own_step_secrets_never_reach_the_model(
    scripted_model: ScriptedModel, workspace: Path, tmp_path: Path, shell: str
) -> None:
    env, values = _secrets(scripted_model, tmp_path / "home")
    readers = ["printenv GH_TOKEN", "env", "cat ~/.netrc", "cat ~/.aws/credentials", "export -p"]
    opaque = "python3 -c 'import os; print(sorted(os.environ.items()))'; echo OPAQUE-RAN"
    scripted_model.script("main", [*(bash(command) for command in readers), bash(opaque), "done"])
    result = await runtime(scripted_model, workspace, {**env, "SHELL": shell}).run(
        lead(own_steps=1), "Start."
    )

    assert result.ok, result.error
    everything = json.dumps([request.body for request in scripted_model.requests()])
    assert leaks(everything, values) == []
    results = scripted_model.request("main", -1).tool_results
    assert all(view.is_error and "flower: the coordinator does not run" in view.text for view in results[:5])
    # the secret refusals took no step: the command the parser does not know ran, scrubbed
    assert "OPAQUE-RAN" in results[5].text and "GH_TOKEN" not in results[5].text


async def test_a_second_step_in_one_user_turn_is_refused_even_after_a_glance_and_the_next_prompt_gives_one(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Through an instrumented `ClaudeSDKClient` (one CLI, one wall, two prompts): the user's second
    prompt opens a new user turn."""
    scripted_model.script(
        "main",
        [
            bash("touch a.txt && echo A-RAN"),
            bash("ls"),
            tool_use("Read", file_path=str(workspace / "a.txt")),
            bash("touch b.txt && echo B-RAN"),
            reply(bash("touch c.txt && echo C-RAN")),
            "first turn done",
            bash("touch d.txt && echo D-RAN"),
            bash("touch e.txt && echo E-RAN"),
            "second turn done",
        ],
    )
    options = instrument(
        scripted_model.options(cwd=str(workspace)), workspace=workspace, coordinator=True, own_steps=1
    )
    async with ClaudeSDKClient(scripted_model.attach(options)) as client:
        for prompt in ("Start.", "Go on."):
            await client.query(prompt)
            async for message in client.receive_response():
                if isinstance(message, ResultMessage):
                    assert not message.is_error, message.result

    results = [view.text for view in scripted_model.request("main", 5).tool_results]
    assert "A-RAN" in results[0] and "a.txt" in results[1]
    assert TURN in results[3] and "(`touch b.txt && echo B-RAN`)" in results[3] and WAY in results[3]
    assert TURN in results[4]
    assert not (workspace / "b.txt").exists() and not (workspace / "c.txt").exists()
    second = [view.text for view in scripted_model.request("main", -1).tool_results[-2:]]
    assert "D-RAN" in second[0] and (workspace / "d.txt").exists()
    assert TURN in second[1] and not (workspace / "e.txt").exists()


async def test_a_workers_calls_never_count(scripted_model: ScriptedModel, workspace: Path) -> None:
    scripted_model.script(
        "main", [bash("touch m.txt"), agent("helper", "Make two files.", background=False), "done"]
    )
    scripted_model.script(
        "helper",
        [bash("touch w1.txt && echo W1"), bash("touch w2.txt && echo W2"), bash("touch w3.txt"), "made"],
    )
    result = await Runtime(workspace, configure=scripted_model.attach).run(lead(own_steps=1), "Start.")

    assert result.ok, result.error
    assert all((workspace / name).exists() for name in ("m.txt", "w1.txt", "w2.txt", "w3.txt"))
    worker_results = [view.text for view in scripted_model.request("helper", -1).tool_results]
    assert not any("flower:" in text for text in worker_results)
    assert "One hands-on step per user turn" in scripted_model.request("main", 0).system_text


async def test_an_own_steps_long_output_is_cut_and_kept_in_the_workbench(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", [bash("seq 1 20000 > /dev/stdout; touch out.txt"), "done"])
    result = await Runtime(workspace, configure=scripted_model.attach).run(lead(own_steps=1), "Start.")

    assert result.ok, result.error
    (seen,) = scripted_model.request("main", -1).tool_results
    assert "[flower: an own step shows at most 2,000 characters of output" in seen.text
    assert len(seen.text) < 2_600 and "19999" not in seen.text
    (kept,) = (workspace / ".flower" / "artifacts").glob("own-step-*.txt")
    assert str(kept) in seen.text and kept.read_text().split()[-1] == "20000"
