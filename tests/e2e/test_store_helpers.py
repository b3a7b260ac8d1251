"""The SDK's session helpers: given a layer-4 store they see what a resume replays; `.inner` is the record.

A `load()` cannot tell a resume from a listing (the SDK calls the same method for both), so a layer hands
every reader the rewritten history. An app that lists, exports or forks transcripts passes `store.inner`.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from claude_agent_sdk import (
    fork_session_via_store,
    get_session_messages_from_store,
    list_sessions_from_store,
)

from flower._instrument import instrument
from flower.testing import ScriptedModel, tool_use

pytestmark = pytest.mark.cli

WALL = "flower: the coordinator does not use Write itself"


def write(workspace: Path, n: int) -> object:
    return tool_use("Write", file_path=str(workspace / f"out-{n}.txt"), content="x")


def denials(messages: list[object]) -> int:
    return sum(WALL in str(getattr(m, "message", "")) for m in messages)


async def test_helpers_given_the_layer_see_the_resume_view_and_inner_the_stored_history(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    options = instrument(
        scripted_model.options(cwd=workspace, tools=["Agent", "Write"]),
        workspace=workspace,
        coordinator=True,
        own_steps=0,
    )
    layer = options.session_store
    assert layer is not None
    scripted_model.script("main", [write(workspace, 1), write(workspace, 2), write(workspace, 3), "gave up"])
    run = await scripted_model.run("Write three files.", options=options)
    assert run.session_id and run.text == "gave up", run.error
    sid, where = run.session_id, str(workspace)
    layer.clock = lambda: time.time() + 3_900  # type: ignore[attr-defined]  # a cold load (past 1 hour)

    stored = await get_session_messages_from_store(layer.inner, sid, directory=where)  # type: ignore[attr-defined]
    shown = await get_session_messages_from_store(layer, sid, directory=where)
    assert denials(stored) == 3 and denials(shown) == 1  # keep_denials=1: the resume view
    assert len(shown) < len(stored)
    listed = await list_sessions_from_store(layer, directory=where)
    assert [s.session_id for s in listed] == [
        s.session_id for s in await list_sessions_from_store(layer.inner, directory=where)
    ]  # type: ignore[attr-defined]

    # a fork through the layer would store the rewritten history as the fork's own; through inner, all of it
    forked = await fork_session_via_store(layer.inner, sid, directory=where)  # type: ignore[attr-defined]
    copy = await get_session_messages_from_store(layer.inner, forked.session_id, directory=where)  # type: ignore[attr-defined]
    assert denials(copy) == 3
