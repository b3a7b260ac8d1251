"""An app written on the plain Claude Agent SDK gains flower with one added line.

The app has what real apps have: its own system prompt, a PreToolUse hook (an auditor), an in-process MCP
tool, a subagent, and a `query()` loop. It runs twice on the same script: as written, then with
`instrument(...)` added. The app's hook, its MCP tool and its subagent work the same both times;
with flower, the 20,000-char log the main thread reads is spilled to the workbench instead of staying in
its context, and the transcript lands in flower's SQLite store.

No API key and no network: `flower.testing.ScriptedModel` plays the model; the bundled Claude Code CLI
does everything else for real.

Run it: python examples/existing_app.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import anyio
from claude_agent_sdk import (
    AgentDefinition,
    ClaudeAgentOptions,
    HookMatcher,
    ResultMessage,
    create_sdk_mcp_server,
    query,
    tool,
)

from flower import Heartbeat, instrument
from flower.testing import RecordedRequest, ScriptedModel, agent, bash, read, tool_use

# -- the app, as its author wrote it (plain SDK) ------------------------------------------------------

notes: list[str] = []
audit: list[str] = []


@tool("add_note", "Store a note for the team", {"text": str})
async def add_note(args: dict[str, Any]) -> dict[str, Any]:
    notes.append(args["text"])
    return {"content": [{"type": "text", "text": f"noted: {args['text']}"}]}


async def auditor(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
    audit.append(data["tool_name"])
    return {}


def app_options(workspace: Path) -> ClaudeAgentOptions:
    return ClaudeAgentOptions(
        cwd=workspace,
        system_prompt={"type": "preset", "preset": "claude_code", "append": "You lead log reviews."},
        tools=["Agent", "Read", "Bash"],
        allowed_tools=["Agent", "Read", "Bash", "mcp__team__add_note"],
        permission_mode="dontAsk",
        setting_sources=[],
        mcp_servers={"team": create_sdk_mcp_server("team", tools=[add_note])},
        agents={
            "analyst": AgentDefinition(
                description="Counts and searches in files.",
                prompt="You analyse files with the command line.",
                tools=["Bash", "Read"],
                model="inherit",
            )
        },
        hooks={"PreToolUse": [HookMatcher(matcher=None, hooks=[auditor])]},
    )


async def run_app(options: ClaudeAgentOptions, prompt: str) -> str:
    answer = ""
    async for message in query(prompt=prompt, options=options):
        if isinstance(message, ResultMessage):
            answer = message.result or ""
    return answer


# -- offline: the scripted model plays Claude ---------------------------------------------------------


def analyst_report(request: RecordedRequest) -> str:
    return f"{request.tool_results[-1].text.strip()} ERROR lines in data/app.log."


def final_answer(request: RecordedRequest) -> str:
    report = request.tool_results[-1].text
    line = next(line.strip() for line in report.splitlines() if "ERROR lines" in line)
    return f"Reviewed. The analyst says: {line}"


async def one_run(workspace: Path, *, with_flower: bool) -> None:
    notes.clear()
    audit.clear()
    model = ScriptedModel(
        main=[
            read(str(workspace / "data" / "app.log")),
            tool_use("mcp__team__add_note", text="log read"),
            agent("analyst", "Count the ERROR lines of data/app.log.", background=False),
            final_answer,
        ],
        agents={"analyst": [bash("grep -c ERROR data/app.log"), analyst_report]},
    )
    async with model:
        options = app_options(workspace)
        if with_flower:
            options = instrument(options, workspace=workspace, coordinator=True)  # the one added line
        answer = await run_app(model.attach(options), "Review the log.")
        history = model.request("main", -1).sizes.messages

    label = "with flower" if with_flower else "plain SDK  "
    print(f"{label}: {answer}")
    print(f"  the app's hook saw {audit}; its MCP tool stored {notes}")
    print(f"  main-thread history in the last request: {history:,} chars")
    if with_flower:
        spilled = list((workspace / ".flower" / "spill").glob("*.txt"))
        stored = (workspace / ".flower" / "sessions.db").exists()
        print(f"  spilled to .flower/spill/: {len(spilled)} file(s); ", end="")
        print(f"transcript in .flower/sessions.db: {stored}")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        (workspace / "data").mkdir()
        lines = [f"{i:05d} {'ERROR disk full' if i % 25 == 0 else 'INFO request served'}" for i in range(800)]
        (workspace / "data" / "app.log").write_text("\n".join(lines) + "\n")
        anyio.run(lambda: one_run(workspace, with_flower=False))
        anyio.run(lambda: one_run(workspace, with_flower=True))


if __name__ == "__main__":
    # a line on stderr at once, then one whenever the run has been silent for 15 s
    with Heartbeat(f"{Path(__file__).name}: {__doc__.splitlines()[0]}"):
        main()
