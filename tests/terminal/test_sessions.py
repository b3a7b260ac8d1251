"""`flower sessions` and `--resume PREFIX` on a workspace's store (a real SQLite store, no CLI)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from claude_agent_sdk import project_key_for_directory

from flower import SpecError, SqliteSessionStore
from flower._terminal import list_sessions, render_sessions, resolve_session, store_path

IDS = ("aaaa1111-0000-4000-8000-000000000001", "aaaa2222-0000-4000-8000-000000000002",
       "bbbb3333-0000-4000-8000-000000000003")  # fmt: skip


async def _store(workspace: Path) -> None:
    path = store_path(workspace)
    path.parent.mkdir(parents=True)
    store = SqliteSessionStore(path)
    key = project_key_for_directory(str(workspace.resolve()))
    for number, session_id in enumerate(IDS):
        entry = {
            "type": "user",
            "uuid": str(uuid.uuid4()),
            "parentUuid": None,
            "sessionId": session_id,
            "timestamp": f"2026-12-0{number + 1}T10:00:00.000Z",
            "message": {"role": "user", "content": f"Goal number {number}"},
        }
        await store.append({"project_key": key, "session_id": session_id}, [entry])
    await store.aclose()


async def test_a_prefix_names_one_session_or_says_which(tmp_path: Path) -> None:
    await _store(tmp_path)
    assert await resolve_session(tmp_path, "bbbb") == IDS[2]
    assert await resolve_session(tmp_path, IDS[0]) == IDS[0]
    with pytest.raises(SpecError, match="2 sessions start with it") as raised:
        await resolve_session(tmp_path, "aaaa")
    assert IDS[0] in str(raised.value) and IDS[1] in str(raised.value)
    with pytest.raises(SpecError, match="no session"):
        await resolve_session(tmp_path, "cc")


async def test_no_store_no_sessions_and_nothing_created(tmp_path: Path) -> None:
    assert await list_sessions(tmp_path) == []
    assert "no sessions" in render_sessions([], tmp_path)
    with pytest.raises(SpecError, match="has no sessions yet"):
        await resolve_session(tmp_path, "aaaa")
    assert not (tmp_path / ".flower").exists()


async def test_the_list_is_oldest_activity_first_with_cost_and_first_prompt(tmp_path: Path) -> None:
    await _store(tmp_path)
    rows = await list_sessions(tmp_path)
    assert [row.session_id for row in rows] == list(IDS)
    table = render_sessions(rows, tmp_path).splitlines()
    assert table[1].startswith(IDS[0]) and "2026-12-01 10:00:00" in table[1] and "Goal number 0" in table[1]
    assert table[-1] == "3 sessions, $0.0000 in all (estimated)"
