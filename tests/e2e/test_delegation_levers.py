"""The levers on a delegation's price, through the real CLI: foreground workers, worker tools sent in one
order, the start guard by prefix group, a read-only worker, the batching rule. Every claim is read from
the request log (what the model saw); the dollars are in benchmarks/bench_delegation_price.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from flower import Runtime, coordinator, worker
from flower._cost import PromptCache
from flower.testing import RecordedRequest, ScriptedModel, agent, bash, reply

pytestmark = pytest.mark.cli

ANALYST = worker("Runs commands and reports.", "You run what you are asked.", tools=["Bash", "Read"])
READER = worker("Reads and reports.", "You read what you are asked.", tools=["Read", "Bash"])


def _shared(request: RecordedRequest) -> str:
    """The tools, the billing block and the identity line: what the CLI caches under a worker's first mark."""
    body = request.body
    return json.dumps([body["tools"], [{"text": b["text"]} for b in body["system"][:2]]], sort_keys=True)


async def test_a_call_that_does_not_say_runs_its_worker_in_the_foreground(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    said = agent("analyst", "[b] list them", background=True)
    scripted_model.script("main", [agent("analyst", "[a] count", background=None), said, "waiting", "done"])
    scripted_model.script("analyst", ["3 files", "a b c"])

    result = await Runtime(workspace, configure=scripted_model.attach).run(
        coordinator("lead", "Goal: know the files.", {"analyst": ANALYST}), "Start."
    )

    assert result.ok, result.error
    first = scripted_model.request("main", 1).tool_results[-1].text
    assert first.startswith("[Subagent hand-back]") and "  3 files" in first  # the report, at once
    assert "Async agent launched" not in first
    asked = scripted_model.request("main", 2).tool_results[-1].text
    assert "Async agent launched" in asked  # a call that asks for the background keeps it
    # its report reaches the coordinator: in a turn of its own, or in the launch's own request when the
    # worker was done before that request went out (then no further turn follows)
    later = scripted_model.requests("main")[2:]
    assert any("<task-notification>" in json.dumps(r.messages) for r in later), scripted_model.describe_log()
    scripted_model.script("main", [])


async def test_with_foreground_off_the_clis_default_runs_it_in_the_background(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", [agent("analyst", "[a] count", background=None), "waiting", "done"])
    scripted_model.script("analyst", ["3 files"])
    spec = coordinator("lead", "Goal: know the files.", {"analyst": ANALYST}, foreground=False)

    result = await Runtime(workspace, configure=scripted_model.attach).run(spec, "Start.")

    assert result.ok, result.error
    assert "Async agent launched" in scripted_model.request("main", 1).tool_results[-1].text
    # a report that is in before the coordinator's second request rides in it, and no third one follows
    scripted_model.script("main", [])


async def test_worker_types_with_the_same_tools_share_their_first_cached_prefix(workspace: Path) -> None:
    async with ScriptedModel(cache=PromptCache()) as model:  # usage as the API's cache reports it
        model.script("main", [agent("analyst", "[a] count"), agent("reader", "[b] read"), "done"])
        model.script("analyst", ["3 files"])
        model.script("reader", ["it says hi"])
        spec = coordinator("lead", "Goal.", {"analyst": ANALYST, "reader": READER})
        result = await Runtime(workspace, configure=model.attach).run(spec, "Start.")

    assert result.ok, result.error
    first, second = model.request("analyst", 0), model.request("reader", 0)
    assert first.tool_names == second.tool_names == ["Bash", "Read"]  # listed in two orders, sent in one
    assert _shared(first) == _shared(second)
    assert first.system_text != second.system_text  # each type keeps its own prompt after that mark
    assert (second.usage or {})["cache_read_input_tokens"] * 4 >= len(json.dumps(second.body["tools"])) * 0.9


def _slow_first_reply(request: RecordedRequest) -> Any:
    return "done" if request.tool_results else reply(bash("true"), delay=1.0)


async def test_parallel_types_with_the_same_tools_wait_for_the_first_to_write_them(workspace: Path) -> None:
    async with ScriptedModel(cache=PromptCache()) as model:
        both = reply(
            agent("analyst", "[a] run true", description="a"),
            agent("reader", "[b] run true", description="b"),
        )
        model.script("main", [both, "done"])
        model.script("analyst", _slow_first_reply)
        model.script("reader", _slow_first_reply)
        spec = coordinator("lead", "Goal.", {"analyst": ANALYST, "reader": READER})
        result = await Runtime(workspace, configure=model.attach).run(spec, "Start.")

    assert result.ok, result.error
    firsts = [r for r in model.requests() if r.caller in ("analyst", "reader") and not r.tool_results]
    leader, other = sorted(firsts, key=lambda r: r.received_at)
    assert _shared(leader) == _shared(other)
    assert other.received_at >= leader.received_at + 1.0  # held until the first one's reply began
    assert (other.usage or {})["cache_read_input_tokens"] * 4 >= len(json.dumps(other.body["tools"])) * 0.9


async def test_a_read_only_worker_is_sent_the_smaller_tool_list(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    lean = worker("Reads files and reports.", "You read.", tools=["Read", "Glob", "Grep"])
    full = worker("Does anything.", "You work.")  # the default tools
    scripted_model.script("main", [agent("lean", "[a] read"), agent("full", "[b] work"), "done"])
    scripted_model.script("lean", ["it says hi"])
    scripted_model.script("full", ["done"])

    result = await Runtime(workspace, configure=scripted_model.attach).run(
        coordinator("lead", "Goal.", {"lean": lean, "full": full}), "Start."
    )

    assert result.ok, result.error
    small, large = scripted_model.request("lean", 0), scripted_model.request("full", 0)
    assert small.tool_names == ["Glob", "Grep", "Read"] and "Bash" in large.tool_names
    assert small.sizes.tools < large.sizes.tools * 0.6  # Bash, Write and Edit: over 40 % of the schemas
    assert small.sizes.total < large.sizes.total


async def test_the_coordinator_is_told_to_batch_small_items(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", ["done"])

    await Runtime(workspace, configure=scripted_model.attach).run(
        coordinator("lead", "Goal.", {"analyst": ANALYST}), "Start."
    )

    assert "go to one worker as one numbered list" in scripted_model.request("main", 0).system_text
