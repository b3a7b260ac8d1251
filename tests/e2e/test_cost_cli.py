"""One cost model: the scripted model's simulated cache, `StepResult.cost_usd`, the CLI's own bill and
`flower report` agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from flower import Runtime, coordinator, worker
from flower.cost import PromptCache, estimate
from flower.report import build_report
from flower.testing import ScriptedModel, agent, bash

pytestmark = pytest.mark.cli


async def test_the_clis_bill_the_report_and_the_cost_model_give_the_same_dollars(workspace: Path) -> None:
    async with ScriptedModel(cache=PromptCache()) as model:
        model.script("main", [bash("ls -la"), agent("analyst", "Print 6000 y."), "done"])
        model.script("analyst", [bash("python3 -c \"print('y' * 6000)\""), "Printed."])
        analyst = worker("Runs commands.", "You run commands.", tools=["Bash", "Read"])
        lead = coordinator("lead", "Goal: print.", {"analyst": analyst}, model="claude-sonnet-4-6")
        result = await Runtime(workspace, configure=model.attach).run(lead, "Go.")
        requests = model.requests()
    assert result.ok, result.error

    later = requests[1]  # the main thread's second request read what its first one wrote
    assert later.usage is not None and later.usage["cache_read_input_tokens"] > 0
    assert all(r.output_tokens > 0 for r in requests)  # what each reply held, in tokens

    from_log = estimate([(r.body, r.received_at, r.output_tokens) for r in requests])
    report = await build_report(workspace)
    assert result.cost_usd == pytest.approx(from_log.total, rel=1e-6)  # the step's usage, flower's prices
    assert result.cli_cost_usd == pytest.approx(from_log.total, rel=1e-6)  # the CLI prices the same usage
    assert report.cost.usd == pytest.approx(from_log.total, rel=1e-6)
    assert from_log.output > 0 and from_log.cache_write > 0 and from_log.cache_read > 0
