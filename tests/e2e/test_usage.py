"""`StepResult.usage` through the real CLI: each request's reported usage counted once, split between the
main thread and the subagents, per step (a resume does not count the steps before it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flower import Runtime, StepUsage, TokenUsage, coordinator, worker
from flower.testing import ScriptedModel, Usage, agent, bash, reply
from flower.testing._steps import DropConnection

pytestmark = pytest.mark.cli

ANALYST = worker("Counts lines.", "You count lines with the command line.", tools=["Bash"])
LEAD = coordinator("lead", "Goal: count lines.", {"analyst": ANALYST})


def used(input: int, output: int, read: int, write: int) -> Usage:
    return Usage(
        input_tokens=input,
        output_tokens=output,
        cache_read_input_tokens=read,
        cache_creation_input_tokens=write,
    )


def tokens(*usages: Usage) -> TokenUsage:
    return TokenUsage(
        input=sum(u.input_tokens or 0 for u in usages),
        output=sum(u.output_tokens or 0 for u in usages),
        cache_read=sum(u.cache_read_input_tokens for u in usages),
        cache_creation=sum(u.cache_creation_input_tokens for u in usages),
    )


async def test_usage_counts_each_reply_once_and_splits_main_and_subagents(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    main = [used(1_000, 50, 20_000, 3_000), used(1_200, 70, 23_000, 400)]
    analyst = [used(300, 20, 4_000, 900), used(350, 25, 4_900, 100), used(360, 30, 5_000, 50)]
    scripted_model.script(
        "main",
        [
            # a reply of three blocks: the SDK yields three messages that each repeat the full usage
            reply("Delegating.", bash("echo glance"), agent("analyst", "Count."), usage=main[0]),
            reply("There are 2 lines.", usage=main[1]),
        ],
    )
    scripted_model.script(
        "analyst",
        [
            reply(bash("echo a"), usage=analyst[0]),
            reply(bash("echo b"), usage=analyst[1]),
            reply("2 lines", usage=analyst[2]),
        ],
    )

    result = await Runtime(workspace, configure=scripted_model.attach).run(LEAD, "Start.")

    assert result.ok, result.error
    # the request log: exactly the replies scripted, each answered with its usage once
    assert len(scripted_model.requests("main")) == len(main)
    assert len(scripted_model.requests("analyst")) == len(analyst)
    assert result.usage.main == tokens(*main)
    assert result.usage.subagents == tokens(*analyst)
    assert result.usage.total == tokens(*main, *analyst)
    (model,) = result.usage.by_model
    assert result.usage.by_model[model] == result.usage.total


async def test_a_resumed_step_counts_only_its_own_usage(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", [reply("first", usage=used(100, 10, 0, 0))])
    rt = Runtime(workspace, configure=scripted_model.attach)
    first = await rt.run(ANALYST, "One.")
    scripted_model.script("main", [reply("second", usage=used(200, 20, 1_000, 30))])

    second = await rt.run(ANALYST, "Two.", resume=first.session_id)

    assert first.usage.main == tokens(used(100, 10, 0, 0))
    assert second.usage == StepUsage(
        main=tokens(used(200, 20, 1_000, 30)),
        subagents=TokenUsage(),
        by_model={next(iter(second.usage.by_model)): tokens(used(200, 20, 1_000, 30))},
    )


async def test_a_crashed_run_reports_what_it_spent(scripted_model: ScriptedModel, workspace: Path) -> None:
    """The CLI is killed (`kill -9`) while its second request waits: no `ResultMessage` ever comes, and the
    step still counts the reply it received (it was billed), not $0."""
    import os
    import signal

    from flower._cost import price
    from tests.e2e.processes import cli_processes

    first = used(1_000, 50, 20_000, 3_000)

    def crash(request: object) -> object:
        for pid in cli_processes():
            os.kill(pid, signal.SIGKILL)
        return DropConnection()  # nothing processed: the API bills nothing for it

    scripted_model.script("main", [reply(bash("echo hi", description="greet"), usage=first), crash])
    rt = Runtime(workspace, configure=scripted_model.attach, keep_warm=False)
    result = await rt.run(LEAD, "Start.")

    assert not result.ok and result.error
    (answered, killed) = scripted_model.requests("main")
    assert answered.usage is not None and killed.usage is None  # the second was never answered
    model = answered.body["model"]
    assert answered.usage["output_tokens"] == 50
    # what the scripted model billed, input and cache as billed; the output as the stream's start says (1)
    billed = TokenUsage(input=1_000, cache_read=20_000, cache_creation=3_000, output=1)
    assert result.usage.main == billed and result.usage.by_model == {model: billed}
    assert result.cost_usd == pytest.approx(price([billed], model=model).total) and result.cost_usd > 0
