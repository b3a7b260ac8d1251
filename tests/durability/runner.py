"""A Runtime in a process of its own, on the scripted model, for the tests that kill it or its database.

`python -m tests.durability.runner STORE SCHEMA WORKSPACE MODE STEPS SLEEP [--subagent] [--drain S]
[--linger S] [--config DIR] [--outbox FILE] [--hold K]`

- STORE: a SQLite path or a `postgresql://` DSN (SCHEMA is its schema; `-` for SQLite).
- MODE: `start`, or `resume:<session id>`.
- STEPS Bash calls of the main thread, each `echo <tag>-k; sleep SLEEP`; with `--subagent`, the main
  thread then delegates to a worker that runs two Bash calls; then the main thread answers (`--linger`:
  that answer comes S seconds late, so a kill after the last tool result still lands mid-run).
- `--config DIR`: the CLI's config directory (its local transcript stays there after the run); by
  default the scripted model's own, removed when the runner ends normally.
- `--outbox FILE`: the outbox's file (`DeliveryPolicy.outbox`); by default the workspace's.
- `--hold K`: the K-th Bash call of the main thread sleeps 600 s instead (a kill then lands while it
  runs, whatever the machine's load); `--hold-sub`: the worker's first Bash call does.
- `--app`: the run is an app on the plain SDK, `query()` with `instrument()`ed options, not a `Runtime`.
- `--untethered`: the CLI starts without flower's supervisor (the benchmark's baseline).

Prints JSON lines: `config` (the CLI's config directory, where its local transcript goes), `session`
(from `SessionStarted`), `tool_result` (k, the agent, the text's start), `warning` (a `StoreWarning`),
then `result` (ok, error, session id, and the tool results the model saw in its last request).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time

import anyio
from claude_agent_sdk import AgentDefinition, ResultMessage, SystemMessage, query

from flower import AgentSpec, DeliveryPolicy, PostgresSessionStore, Runtime, worker
from flower._instrument import instrument
from flower.events import Event, SessionStarted, StoreWarning, ToolResult
from flower.testing import ScriptedModel, agent, bash, reply


def say(**fields: object) -> None:
    print(json.dumps({"t": round(time.time(), 3), **fields}), flush=True)


def spec() -> AgentSpec:
    helper = worker("runs two commands", "You run the commands you are given.", tools=["Bash"])
    return AgentSpec(
        name="runner", instructions="You run the steps.", tools=("Bash", "Agent"), workers={"helper": helper}
    )


def scripts(
    mode: str,
    steps: int,
    sleep: float,
    subagent: bool,
    linger: float = 0.0,
    hold: int = 0,
    hold_sub: bool = False,
) -> tuple[list[object], list[object]]:
    tag = "step" if mode == "start" else "more"
    main: list[object] = [
        bash(f"echo {tag}-{k}; sleep {600 if k == hold else sleep}") for k in range(1, steps + 1)
    ]
    helper: list[object] = []
    if subagent:
        main.append(agent("helper", f"Run the {tag} checks."))
        first = 600 if hold_sub else sleep
        helper = [bash(f"echo {tag}-sub-1; sleep {first}"), bash(f"echo {tag}-sub-2"), "checked"]
    main.append(reply("all steps done" if mode == "start" else "resumed fine", delay=linger))
    return main, helper


async def main(argv: list[str]) -> None:
    store_arg, schema, workspace, mode, steps, sleep = argv[:6]
    subagent = "--subagent" in argv
    drain = float(argv[argv.index("--drain") + 1]) if "--drain" in argv else 30.0
    linger = float(argv[argv.index("--linger") + 1]) if "--linger" in argv else 0.0
    config = argv[argv.index("--config") + 1] if "--config" in argv else None
    outbox = argv[argv.index("--outbox") + 1] if "--outbox" in argv else None
    hold = int(argv[argv.index("--hold") + 1]) if "--hold" in argv else 0
    if "--untethered" in argv:  # the CLI as the SDK starts it, with no supervisor
        for name in ("flower._run.generation", "flower._instrument", "flower._warm.fork"):
            setattr(importlib.import_module(name), "tether", lambda options: options)  # noqa: B010

    os.makedirs(workspace, exist_ok=True)
    store: object = store_arg
    if store_arg.startswith("postgres"):
        store = PostgresSessionStore(store_arg, schema=schema, runner=f"runner-{os.getpid()}")
    main_script, helper_script = scripts(
        mode.split(":")[0], int(steps), float(sleep), subagent, linger, hold, "--hold-sub" in argv
    )
    resume = mode.split(":", 1)[1] if mode.startswith("resume:") else None
    counts = {"n": 0}

    def on_event(event: Event) -> None:
        if isinstance(event, SessionStarted):
            say(ev="session", session_id=event.session_id, resumed=event.resumed)
        elif isinstance(event, ToolResult):
            counts["n"] += 1
            say(
                ev="tool_result", n=counts["n"], agent=event.agent, id=event.tool_use_id, text=event.text[:30]
            )
        elif isinstance(event, StoreWarning):
            say(ev="warning", message=event.message[:300], pending=event.pending, resolved=event.resolved)

    async with ScriptedModel(main=main_script, agents={"helper": helper_script}, strict=False) as model:
        say(ev="config", config_dir=config or model.config_dir, pid=os.getpid())
        if "--app" in argv:
            await app(model, workspace, store, resume)
            return
        rt = Runtime(
            workspace,
            store=store,  # type: ignore[arg-type]
            configure=model.attach,
            delivery=DeliveryPolicy(drain_timeout=drain, outbox=outbox),
            env={"CLAUDE_CONFIG_DIR": config} if config else None,
        )
        try:
            result = await rt.run(
                spec(), "Run the steps." if resume is None else "Go on.", resume=resume, on_event=on_event
            )
            requests = model.requests("main")
            seen = [view.text[:30] for view in requests[-1].tool_results] if requests else []
            say(
                ev="result",
                ok=result.ok,
                error=result.error,
                cause=type(result.cause).__name__ if result.cause else None,
                session_id=result.session_id,
                seen=seen,
                prompts=[r.last_user_text[:40] for r in requests] if requests else [],
            )
        finally:
            await rt.store.aclose()
            if isinstance(store, PostgresSessionStore):
                await store.aclose()


async def app(model: ScriptedModel, workspace: str, store: object, resume: str | None) -> None:
    """The run as an app on the plain SDK: its own options, `instrument()`ed, then `query()`."""
    helper = AgentDefinition(description="runs two commands", prompt="You run the commands.", tools=["Bash"])
    options = model.options(cwd=workspace, tools=["Bash", "Agent"], agents={"helper": helper}, resume=resume)
    options = instrument(options, workspace=workspace, store=store)  # type: ignore[arg-type]
    ok, session = False, None
    try:
        async for message in query(prompt="Run the steps.", options=options):
            if isinstance(message, SystemMessage) and message.subtype == "init":
                session = message.data.get("session_id")
                say(ev="session", session_id=session, resumed=resume is not None)
            elif isinstance(message, ResultMessage):
                ok = not message.is_error
    finally:
        if isinstance(store, PostgresSessionStore):
            await store.aclose()
    say(ev="result", ok=ok, error=None, cause=None, session_id=session, seen=[], prompts=[])


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
