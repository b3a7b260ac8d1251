"""Through the real CLI: a session that ran before flower is never truncated by flower's store.

The app's first turn ("My name is Alice.") and a subagent run happen on the plain SDK, with no store: the
session lives only in the CLI's own transcripts. Then flower is added, and the session is resumed three
times. Without the import, the first resume reads the local files (the store is empty), the store mirrors
only the new turns, and the second resume replays that: turn 1 is gone (measured, CLI 2.1.332).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import AgentDefinition, ClaudeAgentOptions, InMemorySessionStore, SessionKey
from claude_agent_sdk._internal.sessions import project_key_for_directory

from flower import Runtime, SqliteSessionStore, coordinator, worker
from flower._instrument import instrument
from flower.events import Event, StoreReport
from flower.testing import ScriptedModel, agent, bash
from tests.facts import fact

pytestmark = pytest.mark.cli

FIRST = "My name is Alice."
PROMPTS = ("What is my name?", "Still there?", "And now?")
Resume = Callable[[str, str], Awaitable[str | None]]


def plain_app(model: ScriptedModel, workspace: Path) -> ClaudeAgentOptions:
    """The app before flower: a main thread with one helper agent, no session store."""
    return model.options(
        cwd=workspace,
        tools=["Agent", "Read", "Bash"],
        agents={
            "helper": AgentDefinition(
                description="Runs commands.", prompt="You run commands.", tools=["Bash"], model="inherit"
            )
        },
    )


async def before_flower(model: ScriptedModel, workspace: Path) -> str:
    """The pre-flower session: turn 1, with a subagent run; its only record is the CLI's local files."""
    model.script("main", [agent("helper", "Count the files.", background=False), "Hello Alice."])
    model.script("helper", [bash("ls | wc -l"), "HELPER-COUNTED"])
    run = await model.run(FIRST, options=plain_app(model, workspace))
    assert run.text == "Hello Alice." and run.session_id, run.error
    return run.session_id


def local_lines(model: ScriptedModel, workspace: Path, session_id: str) -> tuple[int, int]:
    """Lines of the session's local main transcript and of its subagent transcripts."""
    folder = Path(model.config_dir) / "projects" / project_key_for_directory(workspace)
    main = (folder / f"{session_id}.jsonl").read_text().splitlines()
    subs = [line for f in (folder / session_id).rglob("*.jsonl") for line in f.read_text().splitlines()]
    return len(main), len(subs)


async def three_resumes(model: ScriptedModel, session_id: str, resume: Resume) -> None:
    for n, prompt in enumerate(PROMPTS, 1):
        model.script("main", [f"ANSWER-{n}"])
        assert await resume(prompt, session_id) == f"ANSWER-{n}"
        request = model.request("main", -1)
        assert FIRST in request, f"resume {n}: the session's first turn is not in the model's request"
        assert "HELPER-COUNTED" in request  # the subagent's report, part of turn 1
        assert all(p in request for p in PROMPTS[: n - 1])  # and every turn since


async def stored(store: Any, workspace: Path, session_id: str) -> tuple[list[Any], list[str]]:
    key: SessionKey = {"project_key": project_key_for_directory(workspace), "session_id": session_id}
    main = await store.load(key) or []
    return main, await store.list_subkeys(key)


def check_stored(main: list[Any], subkeys: list[str], local_main: int) -> None:
    uuids = [e["uuid"] for e in main if e.get("uuid")]
    assert len(uuids) == len(set(uuids)), "an entry was stored twice"
    firsts = [e for e in main if e.get("type") == "user" and e.get("message", {}).get("content") == FIRST]
    assert len(firsts) == 1  # imported once, never again
    assert len(main) > local_main  # the whole local transcript, then the resumes' turns
    assert len(subkeys) == 1 and subkeys[0].startswith("subagents/agent-")


async def test_a_runtime_resume_imports_a_session_that_predates_the_store(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    session_id = await before_flower(scripted_model, workspace)
    local_main, local_subs = local_lines(scripted_model, workspace, session_id)
    lead = coordinator("lead", "Answer the user.", {"helper": worker("Runs commands.", "You run commands.")})
    rt = Runtime(workspace, configure=scripted_model.attach)
    reports: list[Event] = []

    async def resume(prompt: str, sid: str) -> str | None:
        result = await rt.run(lead, prompt, resume=sid, on_event=reports.append)
        assert result.ok and result.session_id == sid, result.error
        return result.text

    await three_resumes(scripted_model, session_id, resume)

    db = SqliteSessionStore(workspace / ".flower" / "sessions.db")
    main, subkeys = await stored(db, workspace, session_id)
    await db.aclose()
    check_stored(main, subkeys, local_main)
    loads = [e.report for e in reports if isinstance(e, StoreReport) and e.report.subpath is None]
    assert [r.imported for r in loads] == [local_main + local_subs + 1, 0, 0]  # + the agent's metadata
    assert "imported" in loads[0].summary()


async def test_an_instrumented_app_imports_a_session_that_predates_the_store(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    session_id = await before_flower(scripted_model, workspace)
    local_main, _ = local_lines(scripted_model, workspace, session_id)
    own_store = InMemorySessionStore()  # not idempotent on uuid: a second import would show twice
    app = dataclasses.replace(plain_app(scripted_model, workspace), session_store=own_store)
    options = instrument(app, workspace=workspace, coordinator=True)

    async def resume(prompt: str, sid: str) -> str | None:
        run = await scripted_model.run(prompt, options=dataclasses.replace(options, resume=sid))
        assert run.session_id == sid, run.error
        return run.text

    await three_resumes(scripted_model, session_id, resume)
    main, subkeys = await stored(own_store, workspace, session_id)
    check_stored(main, subkeys, local_main)


async def test_an_app_that_sets_the_config_dir_after_instrument_keeps_turn_one(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    """`CLAUDE_CONFIG_DIR` added to the options after `instrument()` (as `model.attach(instrument(...))`
    does in examples/existing_app.py): the load finds nothing, the CLI resumes from its own file, and the
    CLI's hook input names that file, from which the earlier turns are imported before the new ones."""
    session_id = await before_flower(scripted_model, workspace)
    local_main, _ = local_lines(scripted_model, workspace, session_id)
    own_store = InMemorySessionStore()  # not idempotent on uuid: an entry imported and mirrored shows twice
    app = dataclasses.replace(plain_app(scripted_model, workspace), session_store=own_store)
    config = app.env["CLAUDE_CONFIG_DIR"]
    bare = dataclasses.replace(app, env={k: v for k, v in app.env.items() if k != "CLAUDE_CONFIG_DIR"})
    options = instrument(bare, workspace=workspace, coordinator=True)
    options = dataclasses.replace(options, env={**options.env, "CLAUDE_CONFIG_DIR": config})
    assert options.session_store.config_dir is None  # type: ignore[union-attr]  # instrument() never saw it

    async def resume(prompt: str, sid: str) -> str | None:
        run = await scripted_model.run(prompt, options=dataclasses.replace(options, resume=sid))
        assert run.session_id == sid, run.error
        return run.text

    await three_resumes(scripted_model, session_id, resume)  # turn 1 in the request at every resume
    main, subkeys = await stored(own_store, workspace, session_id)
    check_stored(main, subkeys, local_main)
    assert str(options.session_store.config_dir) == config  # type: ignore[union-attr]  # learnt from the CLI


async def test_without_the_import_the_second_resume_loses_turn_one(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    """The fact the import answers: a plain store added to an existing session truncates it."""
    session_id = await before_flower(scripted_model, workspace)
    store = InMemorySessionStore()
    options = dataclasses.replace(plain_app(scripted_model, workspace), session_store=store)
    seen = []
    for prompt in PROMPTS[:2]:
        scripted_model.script("main", ["ok"])
        await scripted_model.run(prompt, options=dataclasses.replace(options, resume=session_id))
        seen.append(FIRST in scripted_model.request("main", -1))
    fact(
        seen == [True, False],
        "Later findings (outside checks)",
        "with a store added to a session that predates it, the first resume reads the local transcript and "
        "the store mirrors only the new turns, so the second resume loses the first turns",
    )
