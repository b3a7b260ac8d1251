"""A session resumes from another workspace directory, through the real CLI, on SQLite and PostgreSQL.

The CLI keys a session by a project key derived from its working directory, and the SDK loads the
session under the new directory's key; the store finds it under the key it is stored under, and keeps
writing it there. Each run has its own CLI config directory (another machine, or the same one after its
local transcripts are gone), so only the store can give the session back.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import project_key_for_directory

from flower import FailureReason, PostgresSessionStore, Runtime, SqliteSessionStore, StoreError, worker
from flower.testing import ScriptedModel, bash

pytestmark = pytest.mark.cli

STEPS = worker("runs steps", "You run the steps.", tools=["Bash"])


def runtime(workspace: Path, store: Any, model: ScriptedModel, config: Path) -> Runtime:
    config.mkdir(parents=True, exist_ok=True)
    return Runtime(workspace, store=store, configure=model.attach, env={"CLAUDE_CONFIG_DIR": str(config)})


MOVED = pytest.mark.parametrize("moved", [False, True], ids=["another-directory", "directory-moved"])


@MOVED
async def test_a_sqlite_session_resumes_from_another_directory(
    scripted_model: ScriptedModel, tmp_path: Path, moved: bool
) -> None:
    await resumes_elsewhere(scripted_model, tmp_path, SqliteSessionStore(tmp_path / "sessions.db"), moved)


@MOVED
async def test_a_postgres_session_resumes_from_another_directory(
    scripted_model: ScriptedModel, tmp_path: Path, moved: bool, postgres_dsn: str, pg_schema: Any
) -> None:
    store = PostgresSessionStore(postgres_dsn, schema=pg_schema())
    await resumes_elsewhere(scripted_model, tmp_path, store, moved)


async def resumes_elsewhere(model: ScriptedModel, tmp_path: Path, store: Any, moved: bool) -> None:
    scripted_model = model
    first, second = tmp_path / "a" / "repo", tmp_path / "b" / "elsewhere"
    first.mkdir(parents=True)
    second.parent.mkdir(parents=True)
    scripted_model.script("main", [bash("echo one"), "done", bash("echo two"), "next", "third"])
    rt = runtime(first, store, scripted_model, tmp_path / "config-a")
    result = await rt.run(STEPS, "Run.")
    await rt.store.aclose()
    assert result.ok and result.session_id is not None, result.error
    if moved:
        shutil.move(first, second)
    else:
        second.mkdir()

    rt = runtime(second, store, scripted_model, tmp_path / "config-b")
    again = await rt.run(STEPS, "Go on.", resume=result.session_id)
    assert again.ok, again.error
    assert [v.text.split("\n")[0] for v in scripted_model.request("main", -1).tool_results] == ["one", "two"]
    # and once more, from there: the session stayed one transcript
    third = await rt.run(STEPS, "Once more.", resume=result.session_id)
    await rt.store.aclose()
    assert third.ok, third.error
    assert [v.text.split("\n")[0] for v in scripted_model.request("main", -1).tool_results] == ["one", "two"]
    home = project_key_for_directory(os.path.realpath(tmp_path / "a" / "repo"))
    listed = await store.list_sessions(home)
    await store.aclose()
    assert [s["session_id"] for s in listed] == [result.session_id]


async def test_a_session_no_store_holds_fails_with_a_cause_that_says_where_it_looked(
    scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    store = SqliteSessionStore(tmp_path / "sessions.db")
    workspace = tmp_path / "repo"
    workspace.mkdir()
    rt = runtime(workspace, store, scripted_model, tmp_path / "config")
    missing = "4f9e1c55-0000-4000-8000-000000000000"
    result = await rt.run(STEPS, "Go on.", resume=missing)
    await rt.store.aclose()
    await store.aclose()
    assert not result.ok and isinstance(result.cause, StoreError) and result.reason is FailureReason.STORE, (
        result
    )
    assert f"cannot resume session {missing}" in str(result.error)
    assert "under this directory's project key" in str(result.error) and "or any other" in str(result.error)
