"""Keeping the coordinator's cache warm, through the real CLI: while a worker is held, pings go out that
send the coordinator's last request again as a prefix (read on the request log, block by block), leave
nothing in the session's store or transcript, and stop the moment the worker returns or the run ends."""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from claude_agent_sdk import AgentDefinition, query

from flower import (
    KeepWarm,
    KeepWarmPolicy,
    ReportOptions,
    Runtime,
    StepResult,
    build_report,
    coordinator,
    instrument,
    worker,
)
from flower._cost import PromptCache, blocks_of, price
from flower._warm.records import RECORDS, read_records
from flower.events import Event, KeepWarmPing, SessionStarted
from flower.report._load import project_keys
from flower.stores import SqliteSessionStore
from flower.testing import RecordedRequest, ScriptedModel, agent, bash, hang_guard, reply
from tests.e2e.processes import cli_processes

pytestmark = pytest.mark.cli

ANALYST = worker("Runs commands and reports.", "You run what you are asked.", tools=["Bash", "Read"])
QUICK = KeepWarmPolicy(interval=1.0)  # a ping a second after the coordinator's last request
TWO = KeepWarmPolicy(interval=1.0, max_pings=2)  # and two pings a wait at most
HANG_GUARD = hang_guard()  # seconds: a hang guard, never a timing claim
LEAD = coordinator("lead", "Goal: count.", {"analyst": ANALYST})


def is_ping(request: RecordedRequest) -> bool:
    """A keep-warm request: the coordinator's prefix, one output token asked for."""
    return request.body.get("max_tokens") == 1


def main_script(steps: list[Any], ping: Any = None) -> Callable[[RecordedRequest], Any]:
    """The coordinator's steps in order; a ping gets `ping`, by default one token cut as the API cuts it."""

    def step(request: RecordedRequest) -> Any:
        if is_ping(request):
            return ping or reply(".", stop_reason="max_tokens")
        return steps.pop(0) if steps else None

    return step


class Held:
    """A worker whose report waits until `pings` pings went out (or the test sets `go` itself)."""

    def __init__(self, pings: int) -> None:
        self.go = threading.Event()
        self.pings = pings
        self.seen: list[KeepWarmPing] = []

    async def step(self, request: RecordedRequest) -> str:
        await anyio.to_thread.run_sync(lambda: self.go.wait(HANG_GUARD))
        return "ANALYST-REPORT: 42 files"

    def on_event(self, event: Event) -> None:
        if isinstance(event, KeepWarmPing):
            self.seen.append(event)
            if len(self.seen) >= self.pings:
                self.go.set()


def cache_blocks(request: RecordedRequest) -> list[int]:
    """The keys of a request's blocks up to its last cache mark: what the API's cache reads it by."""
    blocks = blocks_of(request.body)
    last = max(i for i, b in enumerate(blocks) if b.breakpoint is not None)
    return [b.key for b in blocks[: last + 1]]


async def stored_entries(workspace: Path) -> list[dict[str, Any]]:
    """Every entry the workspace's store holds: every session, every subagent."""
    db = workspace / ".flower" / "sessions.db"
    found: list[dict[str, Any]] = []
    async with SqliteSessionStore(db) as store:
        for project in await anyio.to_thread.run_sync(project_keys, str(db)):
            for listed in await store.list_sessions(project):
                key: Any = {"project_key": project, "session_id": listed["session_id"]}
                found += await store.load(key) or []
                for sub in await store.list_subkeys(key):
                    found += await store.load({**key, "subpath": sub}) or []
    return found


FOREGROUND = [bash("ls", description="look"), agent("analyst", "count"), "done"]
BACKGROUND = [bash("ls", description="look"), agent("analyst", "count", background=True), "Waiting.", "done"]


async def test_pings_send_the_coordinators_prefix_and_leave_no_trace(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    held = Held(pings=2)
    scripted_model.cache = PromptCache()
    scripted_model.script("main", main_script(list(FOREGROUND)))
    scripted_model.script("analyst", held.step)
    sessions: list[str] = []

    def on_event(event: Event) -> None:
        held.on_event(event)
        if isinstance(event, SessionStarted):
            sessions.append(event.session_id)

    rt = Runtime(workspace, configure=scripted_model.attach, keep_warm=TWO)
    with anyio.fail_after(HANG_GUARD):
        result = await rt.run(LEAD, "Start.", on_event=on_event)

    assert result.ok, result.error
    pings = [r for r in scripted_model.requests("main") if is_ping(r)]
    assert len(pings) == 2 and [p.number for p in held.seen] == [1, 2] and all(p.ok for p in held.seen)
    mains = [r for r in scripted_model.requests("main") if not is_ping(r)]
    waited_on = [r for r in mains if r.seq < pings[0].seq][-1]  # the coordinator's last request
    assert waited_on.tool_results[-1].text.startswith("(Bash completed")  # the glance before the call
    for ping in pings:  # every cache block of the coordinator's last request, sent again as the prefix
        coordinator_blocks = cache_blocks(waited_on)
        assert cache_blocks(ping)[: len(coordinator_blocks)] == coordinator_blocks
        for key in ("model", "tools", "system", "thinking", "output_config", "context_management"):
            assert ping.body[key] == waited_on.body[key], key
    # each ping read that whole prefix (the simulated cache), in one request: never a retried cut reply
    prefix = sum(b.tokens for b in blocks_of(waited_on.body)[: len(cache_blocks(waited_on))])
    assert [(p.usage.cache_read, p.requests) for p in held.seen] == [(prefix, 1), (prefix, 1)]
    assert result.pings == 2 and result.usage.keep_warm == held.seen[0].usage + held.seen[1].usage
    assert result.cost_usd > sum(p.cost_usd for p in held.seen) > 0
    # no trace: the store holds the coordinator's session and its worker's, nothing of the forks
    entries = await stored_entries(workspace)
    assert {e.get("sessionId") for e in entries if e.get("sessionId")} == {sessions[0]}
    assert not [e for e in entries if "USD budget" in json.dumps(e)]
    transcripts = list(Path(scripted_model.config_dir).rglob("*.jsonl"))  # the CLI's own files
    assert transcripts and all(sessions[0] in str(path) for path in transcripts)
    assert not [path for path in transcripts if "USD budget" in path.read_text()]
    assert not list(Path(tempfile.gettempdir()).glob(f"flower-warm-{os.getpid()}-*"))
    assert [r["session_id"] for r in read_records(workspace / ".flower" / RECORDS)] == [sessions[0]] * 2
    # the report reads them beside the store
    report = await build_report(workspace, options=ReportOptions(ask_cli=False))
    assert report.tokens.pings == 2 and report.tokens.keep_warm == result.usage.keep_warm
    assert report.cost.keep_warm_usd == pytest.approx(sum(p.cost_usd for p in held.seen))
    assert "keep-warm     2 pings while the coordinator waited" in report.render_text()


async def test_an_app_on_the_plain_sdk_keeps_its_coordinator_warm_around_its_own_loop(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    held = Held(pings=2)
    scripted_model.script("main", main_script(list(FOREGROUND)))
    scripted_model.script("analyst", held.step)
    agents = {"analyst": AgentDefinition(description="runs commands", prompt="You run.", tools=["Bash"])}
    five = {"CLAUDE_CODE_PROMPT_CACHE_TTL": "5m"}  # the app's choice: instrument() then adds no lifetime
    options = scripted_model.options(cwd=workspace, agents=agents, tools=["Agent", "Bash", "Read"], env=five)
    options = instrument(options, workspace=workspace, coordinator=True)

    with anyio.fail_after(HANG_GUARD):
        async with KeepWarm(options, policy=TWO, on_ping=held.on_event) as warm:
            async for message in query(prompt="Start.", options=options):
                warm.feed(message)

    assert [(p.number, p.ok) for p in warm.pings] == [(1, True), (2, True)]
    pings = [r for r in scripted_model.requests("main") if is_ping(r)]
    waited_on = [r for r in scripted_model.requests("main") if not is_ping(r) and r.seq < pings[0].seq][-1]
    assert all(cache_blocks(p)[: len(cache_blocks(waited_on))] == cache_blocks(waited_on) for p in pings)
    assert not [e for e in await stored_entries(workspace) if "USD budget" in json.dumps(e)]


class HeldPing:
    """A ping's reply that waits until the test is done: the ping stays in flight."""

    def __init__(self) -> None:
        self.arrived = threading.Event()
        self.done = threading.Event()

    async def __call__(self, request: RecordedRequest) -> Any:
        self.arrived.set()
        await anyio.to_thread.run_sync(lambda: self.done.wait(HANG_GUARD))
        return reply(".", stop_reason="max_tokens")

    async def wait(self) -> None:
        await anyio.to_thread.run_sync(lambda: self.arrived.wait(HANG_GUARD))


def leftovers() -> list[Any]:
    """What a ping could leave behind: its CLI process, its private directory."""
    return [*cli_processes(), *Path(tempfile.gettempdir()).glob(f"flower-warm-{os.getpid()}-*")]


async def run_while_a_ping_waits(
    model: ScriptedModel, workspace: Path, ping: HeldPing, keep_warm: KeepWarmPolicy
) -> tuple[StepResult, list[Event]]:
    """Run `LEAD` with its worker held until `ping` has a request in flight, then let the worker report:
    its return meets the ping mid-flight. `ping` is released at the end, whatever happens."""
    held = Held(pings=99)
    model.script("main", main_script(list(FOREGROUND), ping))
    model.script("analyst", held.step)
    events: list[Event] = []
    rt = Runtime(workspace, configure=model.attach, keep_warm=keep_warm)

    async def release_when_the_ping_is_in_flight() -> None:
        await ping.wait()
        held.go.set()  # the worker reports while the ping waits for its reply

    try:
        with anyio.fail_after(HANG_GUARD):
            async with anyio.create_task_group() as group:
                group.start_soon(release_when_the_ping_is_in_flight)
                result = await rt.run(LEAD, "Start.", on_event=events.append)
    finally:
        ping.done.set()
    return result, events


async def test_the_workers_return_stops_the_ping_in_flight(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    result, events = await run_while_a_ping_waits(scripted_model, workspace, HeldPing(), QUICK)

    assert result.ok, result.error
    (stopped,) = [e for e in events if isinstance(e, KeepWarmPing)]
    assert stopped.cancelled and not stopped.ok and result.pings == 1
    report = next(r for r in scripted_model.requests("main") if "ANALYST-REPORT" in r.last_user_text)
    assert not [r for r in scripted_model.requests("main") if is_ping(r) and r.seq > report.seq]
    assert leftovers() == []


class HeldSecond(HeldPing):
    """The first ping is answered; the second's reply waits until the test is done (in flight)."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    async def __call__(self, request: RecordedRequest) -> Any:
        self.count += 1
        if self.count == 1:
            return reply(".", stop_reason="max_tokens")
        return await super().__call__(request)


def billed(model: ScriptedModel) -> dict[int, Any]:
    """What the API would bill each request the scripted model received, in the order it received them:
    one simulated cache over the whole log (a request never answered is billed all the same)."""
    cache = PromptCache()
    return {
        r.seq: cache.send(r.body, at=r.received_at) for r in sorted(model.requests(), key=lambda r: r.seq)
    }


async def test_a_ping_stopped_after_its_request_went_out_is_counted(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.cache = PromptCache()
    result, events = await run_while_a_ping_waits(scripted_model, workspace, HeldSecond(), TWO)

    assert result.ok, result.error
    first, stopped = [e for e in events if isinstance(e, KeepWarmPing)]
    assert first.ok and not first.estimated
    assert stopped.cancelled and not stopped.ok and stopped.estimated
    # counted as the API bills it: the request the scripted model received, priced like the answered one
    requests = [r for r in scripted_model.requests("main") if is_ping(r)]
    assert len(requests) == 2
    bill = billed(scripted_model)[requests[1].seq]
    assert stopped.usage == dataclasses.replace(bill, output=first.usage.output)
    assert stopped.cost_usd > 0
    assert stopped.cost_usd == pytest.approx(price([stopped.usage], model=stopped.model).total)
    assert result.usage.keep_warm == first.usage + stopped.usage and result.pings == 2
    rows = read_records(workspace / ".flower" / RECORDS)
    assert [row["cost_usd"] for row in rows] == pytest.approx([first.cost_usd, stopped.cost_usd])
    assert leftovers() == []


async def test_a_first_ping_stopped_in_flight_counts_the_prefix_it_read(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.cache = PromptCache()
    result, events = await run_while_a_ping_waits(scripted_model, workspace, HeldPing(), QUICK)

    assert result.ok, result.error
    (stopped,) = [e for e in events if isinstance(e, KeepWarmPing)]
    assert stopped.cancelled and stopped.estimated
    (request,) = [r for r in scripted_model.requests("main") if is_ping(r)]
    bill = billed(scripted_model)[request.seq]
    # no earlier ping to copy: the prefix read is the coordinator's last request, as the API reads it
    assert stopped.usage.cache_read == bill.cache_read > 0 and stopped.usage.output == 1
    assert result.usage.keep_warm == stopped.usage and result.cost_usd > stopped.cost_usd > 0


async def test_a_cancelled_run_leaves_no_ping_behind(scripted_model: ScriptedModel, workspace: Path) -> None:
    held, ping = Held(pings=99), HeldPing()
    scripted_model.script("main", main_script(list(FOREGROUND), ping))
    scripted_model.script("analyst", held.step)
    scripted_model.strict = False  # the run is cut: its last steps are never asked for
    rt = Runtime(workspace, configure=scripted_model.attach, keep_warm=QUICK)
    try:
        with anyio.fail_after(HANG_GUARD):
            async with anyio.create_task_group() as group:
                group.start_soon(lambda: rt.run(LEAD, "Start."))
                await ping.wait()
                group.cancel_scope.cancel()  # the app gives up on the run while the ping is in flight
    finally:
        ping.done.set()
        held.go.set()

    assert leftovers() == []
    assert len([r for r in scripted_model.requests("main") if is_ping(r)]) == 1


async def test_a_resumed_session_waiting_on_a_background_worker_is_kept_warm(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    held = Held(pings=1)
    scripted_model.cache = PromptCache()
    scripted_model.script("main", main_script(["First step done.", *BACKGROUND]))
    scripted_model.script("analyst", held.step)
    rt = Runtime(
        workspace, configure=scripted_model.attach, keep_warm=KeepWarmPolicy(interval=1.0, max_pings=1)
    )
    with anyio.fail_after(HANG_GUARD):
        first = await rt.run(LEAD, "Start.")
        result = await rt.run(LEAD, "Go on.", resume=first.session_id, on_event=held.on_event)

    assert result.ok and result.session_id == first.session_id and result.pings == 1 and held.seen[0].ok
    (ping,) = [r for r in scripted_model.requests("main") if is_ping(r)]
    waited_on = [r for r in scripted_model.requests("main") if not is_ping(r) and r.seq < ping.seq][-1]
    assert "First step done." in json.dumps(waited_on.messages)  # the resumed history, loaded from the store
    assert waited_on.tool_results[-1].text.startswith("Async agent launched")  # its turn ended after it
    assert cache_blocks(ping)[: len(cache_blocks(waited_on))] == cache_blocks(waited_on)
    prefix = sum(b.tokens for b in blocks_of(waited_on.body)[: len(cache_blocks(waited_on))])
    assert held.seen[0].usage.cache_read == prefix
