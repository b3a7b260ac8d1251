"""One cost model: the scripted model's simulated cache, `StepResult.cost_usd`, the CLI's own bill and
`flower report` agree, the coordinator's 1-hour cache writes included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from claude_agent_sdk import AgentDefinition

from flower import Runtime, TokenUsage, coordinator, instrument, worker
from flower._cost import PromptCache, estimate
from flower.report import build_report
from flower.testing import RecordedRequest, ScriptedModel, agent, bash

pytestmark = pytest.mark.cli


async def test_the_clis_bill_the_report_and_the_cost_model_give_the_same_dollars(workspace: Path) -> None:
    async with ScriptedModel(cache=PromptCache()) as model:
        model.script("main", [bash("ls -la"), agent("analyst", "Print 6000 y."), "done"])
        model.script("analyst", [bash("python3 -c \"print('y' * 6000)\""), "Printed."])
        analyst = worker("Runs commands.", "You run commands.", tools=["Bash", "Read"])
        lead = coordinator("lead", "Goal: print.", {"analyst": analyst}, model="claude-sonnet-4-6")
        # the 1-hour marks (`keep_warm=False`), whose writes are priced apart
        result = await Runtime(workspace, configure=model.attach, keep_warm=False).run(lead, "Go.")
        requests = model.requests()
    assert result.ok, result.error

    later = requests[1]  # the main thread's second request read what its first one wrote
    assert later.usage is not None and later.usage["cache_read_input_tokens"] > 0
    assert all(r.output_tokens > 0 for r in requests)  # what each reply held, in tokens

    # the coordinator's marks ask for 1 hour, the worker's for 5 minutes; the replies split the writes
    assert {m for r in requests if r.caller == "main" for m in marks(r)} == {
        '{"ttl": "1h", "type": "ephemeral"}'
    }
    assert {m for r in requests if r.caller != "main" for m in marks(r)} == {'{"type": "ephemeral"}'}
    assert "extended-cache-ttl" in requests[0].headers.get("anthropic-beta", "")
    hour = sum(TokenUsage.from_api(r.usage).cache_creation_1h for r in requests if r.caller == "main")
    assert hour > 0 and result.usage.main.cache_creation_1h == hour
    assert sum(u.cache_creation_1h for u in result.usage.by_model.values()) == hour
    assert result.usage.subagents.cache_creation_1h == 0 and result.usage.subagents.cache_creation > 0

    from_log = estimate([(r.body, r.received_at, r.output_tokens) for r in requests])
    report = await build_report(workspace)
    assert report.tokens.main.cache_creation_1h == hour
    assert result.cost_usd == pytest.approx(from_log.total, rel=1e-6)  # the step's usage, flower's prices
    assert result.cli_cost_usd == pytest.approx(from_log.total, rel=1e-6)  # the CLI prices the same usage
    assert report.cost.usd == pytest.approx(from_log.total, rel=1e-6)
    assert from_log.output > 0 and from_log.cache_write > 0 and from_log.cache_read > 0


def marks(request: RecordedRequest) -> list[str]:
    """The `cache_control` marks of a request body, as JSON."""
    found: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, dict):
            if "cache_control" in value:
                found.append(json.dumps(value["cache_control"], sort_keys=True))
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk({k: v for k, v in request.body.items() if k in ("tools", "system", "messages")})
    return found


async def test_a_coordinator_keeps_a_cache_the_user_chose(workspace: Path) -> None:
    analyst = worker("Runs commands.", "You run commands.", tools=["Bash"])
    env = {"FORCE_PROMPT_CACHING_5M": "1"}
    async with ScriptedModel(cache=PromptCache()) as model:
        model.script("main", [agent("analyst", "Print y."), "done"])
        model.script("analyst", [bash("echo y"), "Printed."])
        lead = coordinator("lead", "Goal: print.", {"analyst": analyst}, options={"env": env})
        # the 1-hour marks (`keep_warm=False`), whose writes are priced apart
        result = await Runtime(workspace, configure=model.attach, keep_warm=False).run(lead, "Go.")
        assert result.ok, result.error
        assert {m for r in model.requests() for m in marks(r)} == {'{"type": "ephemeral"}'}
        assert result.usage.main.cache_creation_1h == 0


async def test_an_instrumented_coordinator_asks_for_the_one_hour_cache(workspace: Path) -> None:
    async with ScriptedModel(cache=PromptCache()) as model:
        model.script("main", [agent("w", "Print y."), "done"])
        model.script("w", [bash("echo y"), "Printed."])
        options = model.options(
            cwd=workspace,
            tools=["Agent", "Bash"],
            agents={"w": AgentDefinition(description="Runs.", prompt="You run.", tools=["Bash"])},
        )
        run = await model.run("Go.", options=instrument(options, workspace=workspace, coordinator=True))
        assert run.error is None
        assert {m for r in model.requests("main") for m in marks(r)} == {'{"ttl": "1h", "type": "ephemeral"}'}
        assert {m for r in model.requests("w") for m in marks(r)} == {'{"type": "ephemeral"}'}
