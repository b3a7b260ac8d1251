"""The delegation estimate's coordinator prefix: flower's coordinator's system prompt and tools against the
request shape a transcript records.

The pure parts read small transcripts; the last test runs a plain session and flower's coordinator
through the real CLI and checks the computed prefix against what the coordinator's first request
carried (the request log).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import query

from flower import Runtime, coordinator, worker
from flower.report._what_if import WhatIfOptions, build_what_if_sync
from flower.report._what_if.prefix import (
    AGENT_TOOL_CHARS,
    coordinator_delta,
    coordinator_shape,
    recorded_shape,
)
from flower.report._what_if.replay import thread_of
from flower.testing import RecordedRequest, ScriptedModel
from tests.facts import fact
from tests.stores.transcripts import Transcript

TOOLS = {"Bash": 12_000, "Read": 3_000}


def _shape(system: list[int], tools: dict[str, int]) -> dict[str, Any]:
    """An `api-request-shape` entry whose blocks' JSON has the given sizes."""
    blocks = [{"type": "text", "text": "s" * (n - 28)} for n in system]
    defined = [{"name": name, "description": "d" * (n - 31 - len(name))} for name, n in tools.items()]
    return {"type": "api-request-shape", "shape": {"system": blocks, "tools": defined}}


def _session(shape: dict[str, Any] | None, context: int) -> Transcript:
    t = Transcript()
    if shape is not None:
        t.entries.append(shape)
    t.prompt("p" * 400)
    reply = t.assistant(t.bash("make", "b1"))
    for entry in reply:
        entry["message"]["usage"] = {
            "input_tokens": 0,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": context,
            "output_tokens": 10,
        }
    t.result("b1", "ok")
    t.assistant({"type": "text", "text": "Done."})
    return t


def test_the_recorded_shape_is_the_first_requests() -> None:
    t = _session(_shape([62, 28_000], TOOLS), 10_000)
    shape = recorded_shape(t.entries)
    assert shape is not None
    assert shape.system == (62, 28_000) and dict(shape.tools) == TOOLS
    assert shape.messages == 400  # the prompt (and what the CLI attached before it: nothing here)
    assert recorded_shape(_session(None, 10_000).entries) is None


def test_the_delta_is_flowers_prefix_less_the_recorded_one_at_the_first_requests_rate() -> None:
    t = _session(_shape([62, 28_000], TOOLS), 10_000)
    shape = recorded_shape(t.entries)
    assert shape is not None
    ours = coordinator_shape(shape)
    held = shape.chars + shape.messages  # 43,462 chars held 10,000 tokens
    assert coordinator_delta(thread_of("main", t.entries)) == round((ours - shape.chars) * 10_000 / held)
    # flower's coordinator drops the 28,000-char preset for its own prompt and adds `Agent`: shorter here
    assert ours < shape.chars
    assert coordinator_delta(thread_of("main", _session(None, 10_000).entries)) is None


def test_the_coordinator_offers_agent_and_the_hands_on_tools_the_session_had_or_called() -> None:
    plain = recorded_shape(_session(_shape([62, 28_000], TOOLS), 10_000).entries)
    extra = recorded_shape(_session(_shape([62, 28_000], {**TOOLS, "Workflow": 5_000}), 10_000).entries)
    assert plain is not None and extra is not None
    # a CLI tool the session had but never called is not given to the worker, so not offered
    assert coordinator_shape(extra, used={"Bash"}) == coordinator_shape(plain, used={"Bash"})
    assert coordinator_shape(extra, used={"Workflow"}) == coordinator_shape(plain) + 5_000
    # `Agent`: as the session recorded it when it had one, else as measured for the model
    agent = recorded_shape(_session(_shape([62, 28_000], {**TOOLS, "Agent": 9_000}), 10_000).entries)
    assert agent is not None
    measured = AGENT_TOOL_CHARS["claude-sonnet-4-6"]
    assert coordinator_shape(agent, "claude-sonnet-4-6") - coordinator_shape(plain, "claude-sonnet-4-6") == (
        9_000 - measured
    )


def test_the_estimate_uses_the_computed_prefix_unless_told(tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-home-me-app"
    project.mkdir(parents=True)
    t = _session(_shape([62, 28_000], TOOLS), 10_000)
    (project / f"{t.session_id}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in t.entries))
    computed = build_what_if_sync(tmp_path / "projects").total.layers.delegation
    assert computed.prefix_sessions == 1
    assert computed.prefix_delta == coordinator_delta(thread_of("main", t.entries))
    told = build_what_if_sync(tmp_path / "projects", options=WhatIfOptions(coordinator_delta=-100))
    assert (told.total.layers.delegation.prefix_delta, told.total.layers.delegation.prefix_sessions) == (
        -100,
        0,
    )


def _chars(block: dict[str, Any]) -> int:
    """A block's JSON chars, its cache mark left out (the recorded shape has none)."""
    return len(json.dumps({k: v for k, v in block.items() if k != "cache_control"}, ensure_ascii=False))


def _prefix_chars(request: RecordedRequest) -> int:
    """The tools and system blocks the request carried, in JSON chars."""
    return sum(_chars(b) for b in [*request.body.get("tools", []), *request.body.get("system", [])])


@pytest.mark.cli
async def test_the_computed_prefix_is_what_flowers_coordinator_sends(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    tools = ["Bash", "Read", "Write", "Edit"]
    scripted_model.script("main", ["done", "done"])
    preset: Any = {"type": "preset", "preset": "claude_code"}
    options = scripted_model.options(tools=tools, system_prompt=preset, cwd=str(workspace))
    async for _ in query(prompt="Start.", options=options):  # a plain session, as a user runs one
        pass
    (transcript,) = (Path(scripted_model.config_dir) / "projects").glob("*/*.jsonl")
    entries = [json.loads(line) for line in transcript.read_text(encoding="utf-8").splitlines() if line]
    shape = recorded_shape(entries)
    hands = worker("Runs commands.", "You run them.", tools=tools)
    result = await Runtime(workspace, configure=scripted_model.attach).run(
        coordinator("lead", "Drive the task.", {"worker": hands}), "Start."
    )

    assert result.ok and shape is not None
    plain, ours = scripted_model.request("main", 0), scripted_model.request("main", 1)
    model = str(ours.body["model"])
    (agent,) = [t for t in ours.body["tools"] if t["name"] == "Agent"]
    fact(
        abs(_chars(agent) - AGENT_TOOL_CHARS[model]) <= 0.01 * AGENT_TOOL_CHARS[model],
        "later",
        f"the bundled CLI's Agent tool for a flower coordinator on {model} is as long as measured",
    )
    # the shape the transcript records is the request's tools and system (the CLI's billing line aside)
    assert abs(shape.chars - _prefix_chars(plain)) <= 0.01 * _prefix_chars(plain)
    computed = coordinator_shape(shape, model) - shape.chars
    sent = _prefix_chars(ours) - _prefix_chars(plain)
    # not counted: the workbench block (about 700 chars) and, on some models, a longer Bash text beside Agent
    assert abs(computed - sent) <= 1_500
