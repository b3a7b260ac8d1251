"""One history resumed through the real CLI twice, without flower and with it: what each request held."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from claude_agent_sdk import InMemorySessionStore, SessionKey
from claude_agent_sdk._internal.sessions import project_key_for_directory

from flower.stores import PruningSessionStore
from flower.testing import RecordedRequest, ScriptedModel


async def bare_and_flower(
    model: ScriptedModel,
    workspace: Path,
    entries: list[dict[str, Any]],
    session_id: str,
    at: float,
    layer: Callable[[InMemorySessionStore], PruningSessionStore] = PruningSessionStore,
) -> tuple[RecordedRequest, RecordedRequest, PruningSessionStore]:
    """`(the bare resume's request, flower's, flower's store)`: the history stored as the SDK mirrors it,
    resumed with "Go on." by the CLI alone, then through `layer` whose clock says `at`."""
    key: SessionKey = {"project_key": project_key_for_directory(workspace), "session_id": session_id}
    bare_store = InMemorySessionStore()
    await bare_store.append(key, [dict(e) for e in entries])  # type: ignore[misc]
    model.script("main", ["BARE"])
    await model.run("Go on.", cwd=workspace, session_store=bare_store, resume=session_id)
    bare = model.request("main", -1)

    raw = InMemorySessionStore()
    await raw.append(key, [dict(e) for e in entries])  # type: ignore[misc]
    store = layer(raw)
    store.clock = lambda: at
    model.script("main", ["FLOWER"])
    run = await model.run("Go on.", cwd=workspace, session_store=store, resume=session_id)
    assert run.text == "FLOWER", run.error
    return bare, model.request("main", -1), store
