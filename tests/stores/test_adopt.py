"""Adopting a session the CLI resumed from its own file: what an eager mirror stored first is no history."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from claude_agent_sdk import InMemorySessionStore, SessionKey, SessionStore, SessionStoreEntry

from flower._errors import StoreError
from flower.stores._adopt import adopt_transcript

KEY: SessionKey = {"project_key": "p", "session_id": "0b6f2c52-1d5a-4a8e-9a51-2f3c1f0e7a10"}
TURN_ONE: list[dict[str, Any]] = [
    {
        "type": "user",
        "uuid": "u1",
        "parentUuid": None,
        "message": {"role": "user", "content": "My name is Alice."},
    },
    {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "message": {"role": "assistant", "content": []}},
]
QUEUED = {"type": "queue-operation", "operation": "enqueue", "content": "Go on."}
PROMPT = {"type": "user", "uuid": "u2", "parentUuid": "a1", "message": {"role": "user", "content": "Go on."}}


def transcript(tmp_path: Path, entries: list[dict[str, Any]]) -> Path:
    path = tmp_path / "config" / "projects" / "p" / f"{KEY['session_id']}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path


def adopt(store: InMemorySessionStore, path: Path) -> int:
    async def go() -> int:
        return await adopt_transcript(store, KEY, str(path), "Go on.")

    return anyio.run(go)


def test_the_new_prompts_entries_stored_before_the_hook_do_not_stop_the_import(tmp_path: Path) -> None:
    path = transcript(tmp_path, [*TURN_ONE, QUEUED, PROMPT])
    store = InMemorySessionStore()
    anyio.run(store.append, KEY, [QUEUED, PROMPT])  # the eager mirror was first

    assert adopt(store, path) == 2

    stored = anyio.run(store.load, KEY) or []
    assert sorted(e.get("uuid", "-") for e in stored) == ["-", "a1", "u1", "u2"]  # each entry once


def test_a_store_that_holds_an_earlier_turn_holds_the_session(tmp_path: Path) -> None:
    path = transcript(tmp_path, [*TURN_ONE, QUEUED, PROMPT])
    store = InMemorySessionStore()
    anyio.run(store.append, KEY, [TURN_ONE[0]])

    assert adopt(store, path) == 0


class RefusingStore(SessionStore):
    """A store that takes nothing and has no `delete` of its own (the Protocol's raises)."""

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        raise OSError("disk full")

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        return None


def test_a_failed_adoption_is_a_store_error_even_without_delete(tmp_path: Path) -> None:
    path = transcript(tmp_path, [*TURN_ONE, QUEUED, PROMPT])

    with pytest.raises(StoreError, match="disk full"):
        anyio.run(adopt_transcript, RefusingStore(), KEY, str(path), "Go on.")
