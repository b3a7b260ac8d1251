"""`instrument()` through the real CLI: an app written on the plain SDK keeps everything it had.

The app has its own PreToolUse hook (an auditor that approves everything but secrets), an in-process MCP
server, a subagent and, in the first test, its own session store. Instrumented as a coordinator, it gains
the wall, spill, the workbench and layer 4; the requests the model received are the proof.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from claude_agent_sdk import (
    AgentDefinition,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    InMemorySessionStore,
    ResultMessage,
    create_sdk_mcp_server,
    tool,
)
from claude_agent_sdk._internal.sessions import project_key_for_directory

from flower import PruningSessionStore, SqliteSessionStore
from flower._instrument import instrument
from flower.testing import RecordedRequest, ScriptedModel, agent, bash, hang_guard, read, tool_use
from tests.e2e.file_modes import assert_private
from tests.facts import fact
from tests.stores.transcripts import age_stored

pytestmark = pytest.mark.cli

WALL = "flower: the coordinator does not use Write itself"
APP_DENIAL = "APP-POLICY: no secrets in notes"
FRESH_INDEX = "flower: the workbench as it is now"
BIG_WORKER_OUTPUT = "python3 -c \"print('y' * 50000)\""


@dataclasses.dataclass
class App:
    """A plain SDK app: its options, and what its own hook and MCP tool saw."""

    options: ClaudeAgentOptions
    audit: list[tuple[str, str | None]]
    notes: list[str]


def existing_app(workspace: Path, **fields: Any) -> App:
    """The app as its author wrote it, before flower."""
    audit: list[tuple[str, str | None]] = []
    notes: list[str] = []

    @tool("add_note", "Store a note for the team", {"text": str})
    async def add_note(args: dict[str, Any]) -> dict[str, Any]:
        notes.append(args["text"])
        return {"content": [{"type": "text", "text": f"NOTED: {args['text']}"}]}

    async def auditor(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        audit.append((data["tool_name"], data.get("agent_id")))
        if "password" in json.dumps(data.get("tool_input")):
            decision, reason = "deny", APP_DENIAL
        else:
            decision, reason = "allow", "approved by the app"
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": decision,
                "permissionDecisionReason": reason,
            }
        }

    tools = ["Agent", "Read", "Bash", "Write"]
    options = ClaudeAgentOptions(
        cwd=workspace,
        system_prompt={
            "type": "preset",
            "preset": "claude_code",
            "append": "APP-INSTRUCTIONS: lead the team.",
        },
        tools=tools,
        allowed_tools=[*tools, "mcp__notes__add_note"],
        permission_mode="dontAsk",
        setting_sources=[],
        mcp_servers={"notes": create_sdk_mcp_server("notes", tools=[add_note])},
        agents={
            "writer": AgentDefinition(
                description="Writes files and runs commands.",
                prompt="You write files and run commands.",
                tools=["Bash", "Read", "Write"],
                model="inherit",
            )
        },
        hooks={"PreToolUse": [HookMatcher(matcher=None, hooks=[auditor])]},
        **fields,
    )
    return App(options, audit, notes)


def results(request: RecordedRequest) -> dict[str, str]:
    """The text of each tool result in a request, by tool name (the last one of each name)."""
    return {str(r.tool_name): r.text for r in request.tool_results}


def spill_records(workspace: Path) -> list[dict[str, Any]]:
    manifest = workspace / ".flower" / "spill" / "INDEX.jsonl"
    return [json.loads(line) for line in manifest.read_text().splitlines()]


async def test_a_query_app_keeps_its_hook_mcp_and_store_and_a_resume_is_pruned(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "big.txt").write_text("z" * 20_000)
    own_store = InMemorySessionStore()
    app = existing_app(workspace, session_store=own_store)
    options = instrument(
        app.options, workspace=workspace, coordinator=True, own_steps=0
    )  # the one added line
    assert options.session_store.inner is own_store  # type: ignore[union-attr]

    scripted_model.script(
        "main",
        [
            tool_use("mcp__notes__add_note", text="kickoff"),
            tool_use("mcp__notes__add_note", text="password=hunter2"),
            tool_use("Write", file_path=str(workspace / "out.txt"), content="x"),
            read(str(workspace / "big.txt")),
            bash("ls"),
            agent("writer", "Print the big thing.", background=False),
            "done",
        ],
    )
    scripted_model.script("writer", [bash(BIG_WORKER_OUTPUT), "printed"])
    run = await scripted_model.run("Go", options=options)
    assert run.text == "done", run.error

    seen = results(scripted_model.request("main", -1))
    assert app.notes == ["kickoff"]  # the MCP tool ran, once: the app's own hook denied the second call
    assert seen["mcp__notes__add_note"].endswith(APP_DENIAL)
    assert WALL in seen["Write"] and not (workspace / "out.txt").exists()  # the wall beats the app's allow
    assert "z" * 5000 not in seen["Read"] and ".flower/spill/" in seen["Read"]
    assert "big.txt" in seen["Bash"]  # a glance passes the wall
    worker_bash = scripted_model.request("writer", -1).tool_results[0].text
    assert worker_bash.startswith("[spilled] Bash stdout: 50,001 chars")
    tools = [name for name, _ in app.audit]
    assert tools[:5] == ["mcp__notes__add_note", "mcp__notes__add_note", "Write", "Read", "Bash"]
    assert ("Bash", None) not in app.audit[5:] and any(who for name, who in app.audit if name == "Bash")
    system = scripted_model.request("main", 0).system_text
    assert "APP-INSTRUCTIONS: lead the team." in system and "## Workbench" in system
    assert system.index("APP-INSTRUCTIONS") < system.index("## Workbench")
    assert {r["session_id"] for r in spill_records(workspace)} == {run.session_id}

    key = {"project_key": project_key_for_directory(workspace), "session_id": str(run.session_id)}
    stored = await own_store.load(key)  # type: ignore[arg-type]
    assert stored and APP_DENIAL in json.dumps(stored)  # the app's store holds the transcript

    age_stored(own_store._store, 3_900)  # resumed 65 minutes later: even a 1-hour cache has expired
    scripted_model.script("main", ["resumed"])
    again = await scripted_model.run("Go on.", options=dataclasses.replace(options, resume=run.session_id))
    assert again.text == "resumed" and again.session_id == run.session_id
    resumed = scripted_model.request("main", -1)
    assert APP_DENIAL not in resumed and "password" not in resumed  # the older denial is pruned
    assert WALL in resumed  # the most recent one is kept: it stops a retry loop
    assert FRESH_INDEX not in resumed  # the index did not change: nothing added
    report = options.session_store.last_report  # type: ignore[union-attr]
    assert report is not None and len(report.pruned) == 1
    assert APP_DENIAL in json.dumps(await own_store.load(key))  # type: ignore[arg-type]


async def test_a_client_app_over_three_prompts_gets_the_fresh_index_and_keeps_the_layers(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "big.txt").write_text("z" * 20_000)
    script = workspace / ".flower" / "scripts" / "count.sh"
    app = existing_app(workspace)
    options = instrument(app.options, workspace=workspace, coordinator=True, own_steps=0)
    assert isinstance(options.session_store, PruningSessionStore)

    scripted_model.script(
        "main",
        [
            agent("writer", "Write a line counter to the workbench's scripts/.", background=False),
            "P1 done",
            tool_use("Write", file_path=str(workspace / "out.txt"), content="x"),
            read(str(workspace / "big.txt")),
            "P2 done",
            tool_use("mcp__notes__add_note", text="third"),
            bash("rm -rf build"),
            "P3 done",
        ],
    )
    content = '# desc: count lines per file\nwc -l "$@"\n'
    scripted_model.script("writer", [tool_use("Write", file_path=str(script), content=content), "written"])

    answers: list[str] = []
    session_ids: set[str] = set()
    with anyio.fail_after(hang_guard()):
        async with ClaudeSDKClient(options=scripted_model.attach(options)) as client:
            for prompt in ("PROMPT-ONE", "PROMPT-TWO", "PROMPT-THREE"):
                await client.query(prompt)
                async for message in client.receive_response():
                    if isinstance(message, ResultMessage):
                        answers.append(message.result or "")
                        session_ids.add(message.session_id)
    assert answers == ["P1 done", "P2 done", "P3 done"] and len(session_ids) == 1
    (session_id,) = session_ids

    main = scripted_model.requests("main")
    first, second, third = main[0], main[2], main[5]
    assert first.count(FRESH_INDEX) == 0  # the index in the system prompt is current: nothing added
    assert "scripts/count.sh" not in first.system_text

    # the worker's Write changed the index: the next prompt carries it, right after the prompt
    assert second.count(FRESH_INDEX) == 1
    roles = [(m.get("role"), json.dumps(m.get("content"))) for m in second.messages]
    prompt_at = max(i for i, (role, text) in enumerate(roles) if role == "user" and "PROMPT-TWO" in text)
    context_at = next(i for i, (role, text) in enumerate(roles) if FRESH_INDEX in text)
    fact(
        context_at > prompt_at and roles[context_at][0] == "system",
        "§2 (new)",
        "UserPromptSubmit additionalContext reaches the model as a role:system message after the prompt",
    )
    assert "scripts/count.sh" in roles[context_at][1] and "count lines per file" in roles[context_at][1]
    assert "scripts/count.sh" not in second.system_text  # the system prompt is the session's first one

    assert third.count(FRESH_INDEX) == 1  # unchanged since: no second copy
    assert WALL in results(main[3])["Write"] and not (workspace / "out.txt").exists()
    assert ".flower/spill/" in results(main[4])["Read"]
    after_three = results(main[-1])
    assert after_three["mcp__notes__add_note"] == "NOTED: third" and app.notes == ["third"]
    assert "flower: the coordinator does not run `rm -rf build` itself" in after_three["Bash"]
    assert [name for name, who in app.audit if who is None][-2:] == ["mcp__notes__add_note", "Bash"]

    # the records an economy report reads: the transcript in flower's SQLite, the spill in its manifest
    key = {"project_key": project_key_for_directory(workspace), "session_id": session_id}
    db = SqliteSessionStore(workspace / ".flower" / "sessions.db")
    stored = json.dumps(await db.load(key))  # type: ignore[arg-type]
    await db.aclose()
    assert all(p in stored for p in ("PROMPT-ONE", "PROMPT-TWO", "PROMPT-THREE", "P3 done"))
    assert [r["session_id"] for r in spill_records(workspace)] == [session_id]
    assert re.search(r"count\.sh.*count lines per file", (workspace / ".flower" / "INDEX.md").read_text())
    assert_private(workspace / ".flower", by_agents=frozenset({"scripts/count.sh"}))


async def test_an_app_hook_that_rewrites_outputs_is_spilled_after_it(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    async def redact(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        await anyio.sleep(0.2)  # slower than the spill: unchained, the last to end would win
        output = dict(data["tool_response"])
        output["stdout"] = output["stdout"].replace("SECRET", "[redacted]")
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": output}}

    app = ClaudeAgentOptions(
        tools=["Bash"],
        allowed_tools=["Bash"],
        permission_mode="dontAsk",
        setting_sources=[],
        hooks={"PostToolUse": [HookMatcher(matcher="Bash", hooks=[redact])]},
    )
    options = instrument(app, workspace=workspace)
    scripted_model.script(
        "main", [bash("python3 -c \"print('SECRET ' * 1000)\""), bash("echo SECRET"), "done"]
    )
    run = await scripted_model.run("Go", options=options)

    assert run.text == "done", run.error
    big, small = (r.text for r in scripted_model.request("main", -1).tool_results)
    assert big.startswith("[spilled] Bash stdout:") and "[redacted]" in big and "SECRET" not in big
    assert small == "[redacted]"
    files = [p for p in (workspace / ".flower" / "spill").glob("*.txt")]
    assert len(files) == 1 and len(spill_records(workspace)) == 1  # only the app's version was written
    assert "SECRET" not in files[0].read_text() and "[redacted]" in files[0].read_text()


@pytest.mark.parametrize("app_delay", [0.0, 0.3])
async def test_when_the_app_and_the_wall_both_deny_the_model_reads_both_reasons(
    scripted_model: ScriptedModel, workspace: Path, app_delay: float
) -> None:
    """The CLI shows only the reason of the last denial to end; flower joins the two, whichever ends last."""
    app = existing_app(workspace)
    if app_delay:
        (matcher,) = app.options.hooks["PreToolUse"]  # type: ignore[index]
        (auditor,) = matcher.hooks

        async def slow(data: Any, tool_use_id: str | None, context: Any) -> Any:
            await anyio.sleep(app_delay)
            return await auditor(data, tool_use_id, context)

        app.options.hooks = {"PreToolUse": [HookMatcher(matcher=None, hooks=[slow])]}
    options = instrument(app.options, workspace=workspace, coordinator=True, own_steps=0)
    scripted_model.script(
        "main",
        [
            tool_use("Write", file_path=str(workspace / "creds.txt"), content="password=hunter2"),
            tool_use("Write", file_path=str(workspace / "out.txt"), content="x"),
            "done",
        ],
    )
    run = await scripted_model.run("Go", options=options)
    assert run.text == "done", run.error
    both, wall_only = (r.text for r in scripted_model.request("main", -1).tool_results)
    assert APP_DENIAL in both and WALL in both and both.index(APP_DENIAL) < both.index(WALL)
    assert WALL in wall_only and APP_DENIAL not in wall_only
    assert not (workspace / "creds.txt").exists() and not (workspace / "out.txt").exists()
