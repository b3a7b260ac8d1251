"""Through the real CLI: a coordinator keeps every tool the CLI adds for its own protocol.

`output_format` makes the CLI offer `StructuredOutput`, and the structured result exists only if that call
goes through; deferred MCP tools are loaded with `ToolSearch`. The wall must let both through, for a
`Runtime` coordinator and for an app instrumented with `coordinator=True`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import AgentDefinition, ClaudeAgentOptions, create_sdk_mcp_server, tool

from flower import CLI_TOOLS, FailureReason, Runtime, coordinator, worker
from flower._instrument import instrument
from flower._wall._tools import UNOFFERED
from flower.events import Event, ToolResult
from flower.testing import ScriptedModel, agent, bash, tool_use
from tests.facts import fact

pytestmark = pytest.mark.cli

WALL = "flower: the coordinator does not"
SCHEMA = {
    "type": "object",
    "properties": {"files": {"type": "integer"}, "verdict": {"type": "string"}},
    "required": ["files", "verdict"],
}
OUTPUT_FORMAT = {"type": "json_schema", "schema": SCHEMA}
ANSWER = {"files": 3, "verdict": "clean"}


def counting_script(model: ScriptedModel) -> None:
    model.script(
        "main", [agent("counter", "Count the files.", background=False), tool_use("StructuredOutput", ANSWER)]
    )
    model.script("counter", [bash("ls | wc -l"), "3 files"])


def no_refusal(model: ScriptedModel) -> None:
    for request in model.requests("main"):
        assert WALL not in request, request.summary()


async def test_output_format_with_a_runtime_coordinator(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    counting_script(scripted_model)
    counter = worker("Counts files.", "You count files.", tools=["Bash"])
    lead = coordinator(
        "lead", "Count the files.", {"counter": counter}, options={"output_format": OUTPUT_FORMAT}
    )
    assert "StructuredOutput" not in lead.tools  # the CLI adds it; the spec need not list it

    result = await Runtime(workspace, configure=scripted_model.attach).run(lead, "How many files?")

    assert result.ok, result.error
    assert result.structured_output == ANSWER
    assert "StructuredOutput" in scripted_model.request("main", -1).tool_names
    no_refusal(scripted_model)


async def test_output_format_with_an_instrumented_coordinator(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    counting_script(scripted_model)
    app = scripted_model.options(
        cwd=workspace,
        tools=["Agent", "Read", "Bash"],
        output_format=OUTPUT_FORMAT,
        agents={"counter": AgentDefinition(description="Counts.", prompt="You count.", tools=["Bash"])},
    )
    options = instrument(app, workspace=workspace, coordinator=True)

    run = await scripted_model.run("How many files?", options=options)

    assert run.result is not None and not run.result.is_error, run.error
    assert run.result.structured_output == ANSWER
    no_refusal(scripted_model)


async def test_a_structured_output_the_cli_gives_up_on_fails_the_step(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    """The model never calls StructuredOutput: the step must not say ok with no structured result."""
    scripted_model.script("main", lambda request: "I will not call the tool.")
    lead = coordinator(
        "lead",
        "Count.",
        {"counter": worker("Counts.", "You count.")},
        options={"output_format": OUTPUT_FORMAT},
    )
    result = await Runtime(workspace, configure=scripted_model.attach).run(lead, "How many files?")
    assert not result.ok and result.structured_output is None
    assert result.reason is FailureReason.NO_STRUCTURED_OUTPUT
    assert result.error


def notes_server(notes: list[str]) -> Any:
    @tool("add_note", "Store a note for the team", {"text": str})
    async def add_note(args: dict[str, Any]) -> dict[str, Any]:
        notes.append(args["text"])
        return {"content": [{"type": "text", "text": f"NOTED: {args['text']}"}]}

    return create_sdk_mcp_server("notes", tools=[add_note])


async def test_a_deferred_mcp_tool_loads_through_tool_search(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    notes: list[str] = []
    app = scripted_model.options(  # the default tool set: MCP tools are deferred behind ToolSearch
        cwd=workspace,
        mcp_servers={"notes": notes_server(notes)},
        allowed_tools=["mcp__notes__add_note"],
        permission_mode="dontAsk",
    )
    options = instrument(app, workspace=workspace, coordinator=True)
    scripted_model.script(
        "main",
        [
            tool_use("ToolSearch", query="select:mcp__notes__add_note", max_results=5),
            tool_use("mcp__notes__add_note", text="kickoff"),
            "noted",
        ],
    )

    run = await scripted_model.run("Note the kickoff.", options=options)

    assert run.text == "noted", run.error
    first, after_search, last = scripted_model.requests("main")
    fact(
        "ToolSearch" in first.tool_names and "mcp__notes__add_note" not in first.tool_names,
        "Later findings (outside checks)",
        "with the default tool set an MCP tool is deferred: the main thread is pointed to ToolSearch",
    )
    assert "mcp__notes__add_note" in first  # named in the deferred-tool list
    assert WALL not in after_search
    assert notes == ["kickoff"] and "NOTED: kickoff" in last


async def test_a_runtime_coordinator_loads_a_deferred_mcp_tool(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    notes: list[str] = []
    events: list[Event] = []
    lead = coordinator(
        "lead",
        "Keep notes.",
        {"helper": worker("Runs commands.", "You run commands.", tools=["Bash"])},
        tools=["Agent", "Read", "ToolSearch", "mcp__notes__add_note"],
        options={"mcp_servers": {"notes": notes_server(notes)}},
    )
    runtime = Runtime(workspace, configure=scripted_model.attach)
    scripted_model.script(
        "main",
        [
            tool_use("ToolSearch", query="select:mcp__notes__add_note"),
            tool_use("mcp__notes__add_note", text="k"),
            "ok",
        ],
    )
    result = await runtime.run(lead, "Note it.", on_event=events.append)
    assert result.ok and notes == ["k"], result.error
    first = scripted_model.request("main", 0).tool_names
    assert "ToolSearch" in first and "mcp__notes__add_note" not in first  # deferred, loaded on demand
    assert not any(isinstance(e, ToolResult) and WALL in e.text for e in events)


async def test_the_cli_offers_no_unoffered_tool_even_when_listed(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", ["ok"])
    await scripted_model.run("hi", cwd=workspace, tools=["Agent", *sorted(UNOFFERED)])
    offered = set(scripted_model.request("main", -1).tool_names)
    fact(
        not offered & UNOFFERED and offered - {"Agent"} <= CLI_TOOLS,
        "§6",
        f"the CLI offers none of {sorted(UNOFFERED)} to an SDK session (offered: {sorted(offered)})",
    )


def test_cli_tools_are_accepted_as_tools(workspace: Path) -> None:
    lead = coordinator(
        "lead", "Go.", {"w": worker("W.", "W.")}, tools=["Agent", "StructuredOutput", "ToolSearch"]
    )
    assert "StructuredOutput" in lead.tools
    app = ClaudeAgentOptions(tools=["Agent", "Read"])
    instrument(
        app, workspace=workspace, coordinator=True, own_tools=["Agent", "StructuredOutput", "ToolSearch"]
    )
