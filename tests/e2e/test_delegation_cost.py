"""What a delegation costs, through the real CLI: shared worker prefix, the coordinator's tool list, and
continuing a worker. Every claim is read from the request log (the context the model saw)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import AgentDefinition

from flower import MANDATE_LINE, Runtime, build_report, coordinator, instrument, worker
from flower._cost import PromptCache, without_marks
from flower.testing import RecordedRequest, ScriptedModel, agent, bash, reply, tool_use
from tests.facts import fact

pytestmark = pytest.mark.cli

ANALYST = worker("Runs commands and reports.", "You run what you are asked.", tools=["Bash", "Read"])
PLANNING = {"TaskCreate", "TaskUpdate", "TaskList", "TaskGet"}


def _prefix(request: RecordedRequest) -> str:
    """The tools and system blocks of a request, as the cache keys them (marks removed)."""
    body = request.body
    blocks = [*body.get("tools", []), *body.get("system", [])]
    return json.dumps([{k: v for k, v in b.items() if k != "cache_control"} for b in blocks], sort_keys=True)


def _billing(request: RecordedRequest) -> str:
    return str(request.body["system"][0]["text"])


def _script_two_workers(model: ScriptedModel) -> None:
    model.script("main", [agent("analyst", "[a] count the files"), agent("analyst", "Zq: list them"), "done"])
    model.script("analyst", [bash("ls"), "3 files", "a.txt b.txt c.txt"])


async def test_every_worker_sends_the_same_prefix(scripted_model: ScriptedModel, workspace: Path) -> None:
    _script_two_workers(scripted_model)

    result = await Runtime(workspace, configure=scripted_model.attach).run(
        coordinator("lead", "Goal: know the files.", {"analyst": ANALYST}), "Start."
    )

    assert result.ok
    first, second = scripted_model.request("analyst", 0), scripted_model.request("analyst", 2)
    assert first.last_user_text.endswith(f"{MANDATE_LINE}\n[a] count the files")
    assert second.last_user_text.endswith(f"{MANDATE_LINE}\nZq: list them")
    assert _billing(first) == _billing(second) and _prefix(first) == _prefix(second)
    cache = PromptCache()
    usages = [cache.send(r.body, at=20.0 * i) for i, r in enumerate(scripted_model.requests())]
    second_start = usages[[r.seq for r in scripted_model.requests()].index(second.seq)]
    assert second_start.cache_read * 4 >= len(_prefix(second)) * 0.9  # the shared prefix is read
    (call,) = scripted_model.request("main", 1).tool_uses
    assert call["input"]["prompt"] == "[a] count the files"  # the main thread keeps the mandate as written
    assert not PLANNING & set(scripted_model.request("main", 0).tool_names)


async def test_without_the_line_each_worker_has_its_own_billing_block(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    _script_two_workers(scripted_model)
    tools = ("Agent", "Read", *sorted(PLANNING))
    spec = coordinator("lead", "Goal: know the files.", {"analyst": ANALYST}, mandate_line=None, tools=tools)

    await Runtime(workspace, configure=scripted_model.attach).run(spec, "Start.")

    first, second = scripted_model.request("analyst", 0), scripted_model.request("analyst", 2)
    assert first.last_user_text.endswith("\n[a] count the files")
    fact(
        _billing(first) != _billing(second),
        "later",
        "the billing block's 3 hex digits follow the first characters of a worker's mandate",
    )
    assert set(scripted_model.request("main", 0).tool_names) >= PLANNING


async def test_instrument_puts_the_line_in_front_of_an_apps_mandates(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    _script_two_workers(scripted_model)
    agents = {"analyst": AgentDefinition(description="runs commands", prompt="You run.", tools=["Bash"])}
    options = scripted_model.options(cwd=workspace, agents=agents, tools=["Agent", "Bash", "Read"])
    options = instrument(options, workspace=workspace, coordinator=True)

    await scripted_model.run("Start.", options=options)

    first, second = scripted_model.request("analyst", 0), scripted_model.request("analyst", 2)
    assert f"{MANDATE_LINE}\nZq: list them" in second.last_user_text
    assert _billing(first) == _billing(second)


def _continue(request: RecordedRequest) -> Any:
    found = re.search(r"agentId: (\w+)", request.tool_results[-1].text)
    assert found, request.tool_results[-1].text
    return tool_use("SendMessage", to=found.group(1), message="now count the lines", summary="count lines")


async def test_a_worker_continued_with_sendmessage_reads_its_own_cache(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", [agent("analyst", "[a] count the files"), _continue, "waiting", "done"])
    scripted_model.script("analyst", [bash("ls"), "3 files", "12 lines"])
    tools = ("Agent", "Read", "SendMessage")
    spec = coordinator("lead", "Goal: know the files.", {"analyst": ANALYST}, tools=tools)

    result = await Runtime(workspace, configure=scripted_model.attach).run(spec, "Start.")

    assert result.ok
    sent = scripted_model.request("main", 2).tool_results[-1].text
    fact('"resumedAgentId"' in sent, "later", "SendMessage to a finished worker resumes it in the background")
    before, resumed = scripted_model.request("analyst", 1), scripted_model.request("analyst", 2)
    assert _billing(before) == _billing(resumed) and _prefix(before) == _prefix(resumed)
    history = without_marks(before.messages)
    assert without_marks(resumed.messages)[: len(history)] == history  # its own history, continued
    assert "now count the lines" in resumed.last_user_text
    assert "12 lines" in scripted_model.request("main", 3).last_user_text  # a task notification


async def test_the_report_shows_what_delegating_cost(workspace: Path) -> None:
    async with ScriptedModel(cache=PromptCache()) as scripted_model:  # usage as the API's cache reports it
        _script_two_workers(scripted_model)
        await Runtime(workspace, configure=scripted_model.attach).run(
            coordinator("lead", "Goal: know the files.", {"analyst": ANALYST}), "Start."
        )
    report = await build_report(workspace)

    spent = report.delegation
    assert spent.workers == 2 and spent.mandate_chars == len("[a] count the files") + len("Zq: list them")
    second = scripted_model.request("analyst", 2)
    assert spent.start_cache_read > 0 and spent.start_tokens > spent.start_cache_read
    assert 0 < spent.start_usd < spent.usd < report.cost.usd
    frames = [r.text for r in scripted_model.request("main", 2).tool_results]
    assert "[Subagent hand-back]" in frames[0] and "  3 files" in frames[0]
    assert len(frames[0]) - len("  3 files") - 200 < spent.frame_chars / 2 < len(frames[0])
    assert f"in 2 workers; starts ${spent.start_usd:,.2f}" in report.render_text()
    assert second.last_user_text.endswith("Zq: list them")


async def test_the_billing_fingerprint_reads_the_5th_8th_and_21st_characters(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    base = "abcdefghijklmnopqrstuvwxyz0123456789"
    flips = (0, 4, 7, 10, 20, 21, 30)
    prompts = [base, *(base[:i] + "#" + base[i + 1 :] for i in flips)]
    scripted_model.script("main", [*(agent("w", p, background=False) for p in prompts), "done"])
    scripted_model.script("w", ["ok"] * len(prompts))
    agents = {"w": AgentDefinition(description="works", prompt="You work.", tools=["Bash"])}

    await scripted_model.run("Go.", cwd=workspace, agents=agents, tools=["Agent", "Bash"])

    blocks = [_billing(r) for r in scripted_model.requests("w")]
    moved = {i for i, block in zip(flips, blocks[1:], strict=True) if block != blocks[0]}
    fact(moved == {4, 7, 20}, "later", f"the billing fingerprint reads prompt[4], [7], [20] (moved: {moved})")


def _workers(delay: float) -> Any:
    """A worker's script: its first reply runs one command and begins `delay` seconds after the request
    came (a real response takes a moment to begin: only then can others read what the request wrote),
    its second reports."""

    def step(request: RecordedRequest) -> Any:
        return "done" if request.tool_results else reply(bash("true"), delay=delay)

    return step


def _first_requests(model: ScriptedModel, caller: str) -> list[RecordedRequest]:
    return sorted((r for r in model.requests(caller) if not r.tool_results), key=lambda r: r.received_at)


def _parallel(kind: str, n: int) -> Any:
    return reply(*(agent(kind, f"[task {i}] run true and say done", description=f"t{i}") for i in range(n)))


async def test_the_cli_starts_parallel_workers_at_once_and_each_writes_the_shared_prefix(
    workspace: Path,
) -> None:
    async with ScriptedModel(cache=PromptCache()) as model:  # usage as the API's cache reports it
        model.script("main", [_parallel("w", 3), "done"])
        model.script("w", _workers(delay=1.0))
        agents = {"w": AgentDefinition(description="works", prompt="You work.", tools=["Bash"])}
        await model.run("Go.", cwd=workspace, agents=agents, tools=["Agent", "Bash"])

    leader, *others = _first_requests(model, "w")
    assert _billing(leader) == _billing(others[0]) == _billing(others[1])  # mandates start alike
    fact(
        all(r.received_at < leader.received_at + 1.0 for r in others),
        "later",
        "the CLI sends the first requests of workers started in one message at once",
    )
    prefix = len(_prefix(leader)) // 4
    for request in (leader, *others):  # each arrived before any response began: each writes the prefix
        assert (request.usage or {})["cache_creation_input_tokens"] >= prefix * 0.9


async def test_a_coordinators_parallel_workers_read_the_prefix_the_first_one_writes(workspace: Path) -> None:
    async with ScriptedModel(cache=PromptCache()) as model:
        model.script("main", [_parallel("analyst", 3), "done"])
        model.script("analyst", _workers(delay=1.0))
        spec = coordinator("lead", "Goal: run three things.", {"analyst": ANALYST})
        result = await Runtime(workspace, configure=model.attach).run(spec, "Start.")

    assert result.ok
    leader, *others = _first_requests(model, "analyst")
    assert len(others) == 2 and all(_prefix(r) == _prefix(leader) for r in others)
    prefix = len(_prefix(leader)) // 4
    assert (leader.usage or {})["cache_creation_input_tokens"] >= prefix * 0.9
    for request in others:  # held until the first worker replied, they read what it wrote
        assert request.received_at >= leader.received_at + 1.0
        assert (request.usage or {})["cache_read_input_tokens"] >= prefix * 0.9


async def test_the_git_workflow_setting_drops_its_texts_for_the_coordinator_and_its_workers(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", [agent("analyst", "[a] count the files"), "done"] * 2)
    scripted_model.script("analyst", ["3 files"] * 2)
    off = {"env": {"CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS": "1"}}
    for options in ({}, off):
        spec = coordinator("lead", "Goal.", {"analyst": ANALYST}, model="claude-sonnet-4-6", options=options)
        await Runtime(workspace, configure=scripted_model.attach).run(spec, "Start.")

    def git_texts(request: RecordedRequest) -> tuple[bool, bool]:
        (bash_tool,) = [t for t in request.body["tools"] if t["name"] == "Bash"]
        workflow = "Committing changes with git" in bash_tool["description"]
        return workflow, "Attribution for git commits" in json.dumps(request.messages)

    on = [scripted_model.request("main", 0), scripted_model.request("analyst", 0)]
    dropped = [scripted_model.request("main", 2), scripted_model.request("analyst", 1)]
    assert all(git_texts(r) == (True, True) for r in on)  # what every coordinator and worker carries
    fact(
        all(git_texts(r) == (False, False) for r in dropped),
        "later",
        "CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS drops the Bash tool's git workflow and the attribution "
        "reminder from every agent of the session",
    )
