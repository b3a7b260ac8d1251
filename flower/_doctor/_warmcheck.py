"""The doctor's keep-warm run: a coordinator whose worker is held until one ping has gone out.

What `flower._warm` relies on, read from what the scripted model received: a forked resume sends the
coordinator's last request again as its prefix (every cache block up to its last mark), the budget stops
the CLI after one reply (no retry of the reply cut at one token), and nothing of the fork reaches the
session's store.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from .._agents import coordinator, worker
from .._cost import blocks_of
from .._runtime import Runtime
from .._warm import KeepWarmPolicy
from ..events import Event, KeepWarmPing
from ..report._load import project_keys
from ..stores import SqliteSessionStore
from ..testing import RecordedRequest, ScriptedModel, agent, bash, reply

__all__ = ["WarmSeen", "judge_warm", "keep_warm_run"]

_HOLD = 60.0  # seconds the worker waits for the ping at most: then the fact fails, the run goes on
_POLICY = KeepWarmPolicy(interval=0.5, max_pings=1)


@dataclass
class WarmSeen:
    """What the keep-warm run left: the requests, the pings, the store's entries."""

    requests: list[RecordedRequest] = field(default_factory=list)
    pings: list[KeepWarmPing] = field(default_factory=list)
    entries: list[dict[str, Any]] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    """Every session the store holds."""
    coordinator: str | None = None


def _is_ping(request: RecordedRequest) -> bool:
    return request.body.get("max_tokens") == 1


async def keep_warm_run(workspace: Path) -> WarmSeen:
    """Run the scenario in `workspace` (created) with a scripted model of its own."""
    seen = WarmSeen()
    pinged = threading.Event()
    steps: list[Any] = [bash("ls", description="look"), agent("analyst", "Count the files."), "Counted."]

    def main(request: RecordedRequest) -> Any:
        if _is_ping(request):
            return reply(".", stop_reason="max_tokens")
        return steps.pop(0) if steps else None

    async def held(request: RecordedRequest) -> str:
        await anyio.to_thread.run_sync(lambda: pinged.wait(_HOLD))
        return "ANALYST-REPORT: 3 files"

    def on_event(event: Event) -> None:
        if isinstance(event, KeepWarmPing):
            seen.pings.append(event)
            pinged.set()

    workspace.mkdir(parents=True, exist_ok=True)
    lead = coordinator("lead", "Goal: count the files.", {"analyst": worker("Counts.", "You count.")})
    async with ScriptedModel(main=main, agents={"analyst": [held]}, strict=False) as model:
        rt = Runtime(workspace, configure=model.attach, check_credentials=False, keep_warm=_POLICY)
        result = await rt.run(lead, "Start.", on_event=on_event)
        seen.requests = model.requests("main")
    db = workspace / ".flower" / "sessions.db"
    async with SqliteSessionStore(db) as store:  # every session the store holds, the fork's if any
        for project in await anyio.to_thread.run_sync(project_keys, str(db)):
            for listed in await store.list_sessions(project):
                seen.sessions.append(listed["session_id"])
                key: Any = {"project_key": project, "session_id": listed["session_id"]}
                seen.entries += [dict(e) for e in await store.load(key) or []]
    seen.coordinator = result.session_id
    return seen


def _cache_blocks(request: RecordedRequest) -> list[int]:
    blocks = blocks_of(request.body)
    last = max(i for i, b in enumerate(blocks) if b.breakpoint is not None)
    return [b.key for b in blocks[: last + 1]]


def judge_warm(seen: WarmSeen | None) -> str | None:
    """None when the fact holds, else what was seen instead."""
    if seen is None:
        return "the keep-warm run did not run"
    pings = [r for r in seen.requests if _is_ping(r)]
    if not seen.pings or not pings:
        return "no keep-warm ping was sent while the worker was held"
    if not seen.pings[0].ok:
        return f"the ping failed: {seen.pings[0].error}"
    if len(pings) != 1:
        return f"one ping sent {len(pings)} requests (the CLI retried the reply cut at one token)"
    before = [r for r in seen.requests if not _is_ping(r) and r.seq < pings[0].seq]
    if not before or _cache_blocks(pings[0])[: len(_cache_blocks(before[-1]))] != _cache_blocks(before[-1]):
        return "the ping's prefix differs from the coordinator's last request (its cache blocks)"
    if seen.sessions != [seen.coordinator] or "USD budget" in str(seen.entries):
        return f"the store holds more than the coordinator's session (the fork's?): {seen.sessions}"
    return None
