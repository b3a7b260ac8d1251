"""Own steps through the real CLI: a coordinator's one-off hands-on step runs, a second in a row does
not, a glance ends the row, a large input is refused, `own_steps=0` is the strict wall, and a worker's
calls are never counted. Asserted on what the model read next (the request log) and on the files."""

from __future__ import annotations

from pathlib import Path

import pytest

from flower import Runtime, coordinator, worker
from flower.testing import ScriptedModel, agent, bash, reply, tool_use

pytestmark = pytest.mark.cli

HELPER = worker("Does anything.", "You do things.", tools=["Bash", "Write"])
ROW = "flower: the coordinator does not take a second hands-on step in a row"


def lead(**knobs: int) -> object:
    return coordinator("lead", "Goal: tidy up.", {"helper": HELPER}, **knobs)


async def run(model: ScriptedModel, workspace: Path, **knobs: int) -> None:
    result = await Runtime(workspace, configure=model.attach).run(lead(**knobs), "Start.")  # type: ignore[arg-type]
    assert result.ok, result.error


async def test_one_step_runs_a_second_in_a_row_is_refused_and_a_glance_ends_the_row(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script(
        "main",
        [
            bash("touch a.txt && echo A-RAN"),
            bash("touch b.txt && echo B-RAN"),
            bash("ls"),
            bash("touch c.txt && echo C-RAN"),
            "done",
        ],
    )
    await run(scripted_model, workspace)

    results = [view.text for view in scripted_model.request("main", -1).tool_results]
    assert "A-RAN" in results[0] and (workspace / "a.txt").exists()
    assert ROW in results[1] and "(`touch b.txt && echo B-RAN`)" in results[1]
    assert "Delegate it: call the Agent tool" in results[1] and not (workspace / "b.txt").exists()
    assert "a.txt" in results[2]  # the glance ran, and ended the row
    assert "C-RAN" in results[3] and (workspace / "c.txt").exists()


async def test_of_two_hands_on_calls_in_one_message_one_runs(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script(
        "main", [reply(bash("touch a.txt && echo A-RAN"), bash("touch b.txt && echo B-RAN")), "done"]
    )
    await run(scripted_model, workspace)

    results = [view.text for view in scripted_model.request("main", -1).tool_results]
    assert len(results) == 2 and sum(ROW in text for text in results) == 1
    assert sum(path.exists() for path in (workspace / "a.txt", workspace / "b.txt")) == 1


async def test_a_large_write_is_refused_and_does_not_count(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    big, small = workspace / "big.txt", workspace / "small.txt"
    scripted_model.script(
        "main",
        [
            tool_use("Write", file_path=str(big), content="x" * 2_001),
            tool_use("Write", file_path=str(small), content="y" * 2_000),
            "done",
        ],
    )
    await run(scripted_model, workspace)

    refused, written = scripted_model.request("main", -1).tool_results
    assert "take a hands-on step with 2,001 chars of input (Write) itself" in refused.text
    assert "its own steps take at most 2,000" in refused.text and not big.exists()
    assert not written.is_error and small.read_text() == "y" * 2_000


async def test_own_steps_0_is_the_strict_wall_and_its_rules_say_so(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", [bash("touch a.txt && echo A-RAN"), "done"])
    await run(scripted_model, workspace, own_steps=0)

    last = scripted_model.request("main", -1)
    (refused,) = last.tool_results
    assert "flower: the coordinator does not run `touch a.txt && echo A-RAN` itself" in refused.text
    assert not (workspace / "a.txt").exists()
    assert "Hands-on tools are refused to you" in last.system_text and "one-off" not in last.system_text


async def test_the_rules_invite_the_own_step_and_a_workers_calls_never_count(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script(
        "main", [bash("touch m.txt"), agent("helper", "Make two files.", background=False), "done"]
    )
    scripted_model.script(
        "helper",
        [bash("touch w1.txt && echo W1"), bash("touch w2.txt && echo W2"), bash("touch w3.txt"), "made"],
    )
    await run(scripted_model, workspace)

    assert all((workspace / name).exists() for name in ("m.txt", "w1.txt", "w2.txt", "w3.txt"))
    worker_results = [view.text for view in scripted_model.request("helper", -1).tool_results]
    assert not any("flower:" in text for text in worker_results)
    assert "A one-off hands-on step" in scripted_model.request("main", 0).system_text
