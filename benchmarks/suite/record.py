"""Run one workload under one strategy for real: the bundled CLI against the scripted model.

Baselines and peers run with plain `ClaudeAgentOptions` (no flower hook, store or rule); flower through
`Runtime(..., configure=model.attach)`. A peer's edit runs in the scripted model (`ScriptedModel(edit=)`),
so the agent reads the request the strategy would have sent. A workload's pause ends the session; its
idle time passes for every clock that matters: the scripted model's cache clock (the trace's times),
flower's store clock, and the CLI's own (`clock.date_back`: the transcript it resumes from is dated back
by the idle time; see docs/benchmarks.md).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from claude_agent_sdk import AgentDefinition, ClaudeAgentOptions

from flower import Runtime, worker
from flower.testing import RecordedRequest, ScriptedModel

from .actions import Workload
from .clock import date_back, gap
from .peers import PEERS
from .play import Play
from .player import Ledger
from .realistic import Behaviour
from .runs import INLINE_TOOLS, TOOLS, WORKER_PROMPT, Strategy, lead

GEN = Path(__file__).with_name("gen.py")


def _inline_spec(model: str) -> Any:
    """flower without the delegation wall: the main thread is a worker-like agent doing everything."""
    return worker(
        "Does the benchmark task.",
        "Drive the benchmark task.",
        tools=["Bash", "Read", "Write", "Edit"],
        model=model,
    )


@dataclass
class Recording:
    """A finished real run: every request the scripted model received, and the ledger of its agents."""

    workload: Workload
    strategy: Strategy
    behaviour: Behaviour
    requests: list[RecordedRequest]
    ledger: Ledger
    error: str | None
    wall: float
    resume_states: dict[int, int]
    gaps: list[float]
    """The largest gap between transcript entries the CLI saw in each resumed plain session (seconds)."""

    @property
    def finished(self) -> bool:
        """The agent reached its last action and the CLI ended without an error."""
        return self.ledger.done and self.error is None


def setup(root: Path, workload: Workload) -> None:
    """The workspace a run starts from: the fake tool, its outputs, the workload's files."""
    shutil.copy(GEN, root / "gen.py")
    (root / "bench.json").write_text(workload.bench_json())
    for rel, text in workload.files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _env(strategy: Strategy) -> dict[str, str]:
    env: dict[str, str] = {}
    if not strategy.defaults:
        env["CLAUDE_AGENT_SDK_DISABLE_BUILTIN_AGENTS"] = "1"
    if strategy.engine == "plain" and not strategy.compaction:
        env["DISABLE_AUTO_COMPACT"] = "1"
    if strategy.engine == "plain" and strategy.cache == "1h":
        env["CLAUDE_CODE_PROMPT_CACHE_TTL"] = "1h"
    return env


def _settings(workload: Workload) -> str | None:
    return json.dumps({"permissions": {"deny": list(workload.deny)}}) if workload.deny else None


def plain_options(
    model: ScriptedModel, root: Path, workload: Workload, strategy: Strategy
) -> ClaudeAgentOptions:
    """Options without flower: the `claude_code` preset (or, `prompt="sdk"`, the SDK's empty default),
    flower's tools (without `Agent` where nothing is delegated) and model (the peers and `baseline_raw`),
    or the CLI's own defaults (its tool set and built-in agents: `baseline_cc_default`)."""
    fields: dict[str, Any] = {}
    if not strategy.defaults:
        tools = list(INLINE_TOOLS if strategy.inline else TOOLS)
        fields = {"tools": tools, "allowed_tools": list(tools)}
        if strategy.delegated:
            fields["agents"] = {
                "worker": AgentDefinition(
                    description="Runs commands and reports.",
                    prompt=WORKER_PROMPT,
                    tools=["Bash", "Read", "Write", "Edit"],
                    model="inherit",
                )
            }
    if strategy.prompt == "preset":
        fields["system_prompt"] = {"type": "preset", "preset": "claude_code"}
    return model.options(
        cwd=root,
        model=strategy.model,
        env=_env(strategy),
        settings=_settings(workload),
        **fields,
    )


def _runtime(model: ScriptedModel, root: Path, workload: Workload, strategy: Strategy) -> Runtime:
    settings = _settings(workload)

    def configure(options: ClaudeAgentOptions) -> ClaudeAgentOptions:
        env = {**options.env, **_env(strategy)}
        return model.attach(dataclasses.replace(options, settings=settings, env=env))

    return Runtime(root, configure=configure, check_credentials=False, **dict(strategy.runtime))


async def record(
    workload: Workload, strategy: Strategy, behaviour: Behaviour | None = None, *, timeout: float = 900.0
) -> Recording:
    """Run the workload once through the real CLI; pauses end a session and resume it."""
    behaviour = behaviour or Behaviour()
    root = Path(tempfile.mkdtemp(prefix="flower-bench-"))
    try:
        setup(root, workload)
        play = Play(
            workload,
            root,
            delegated=strategy.delegated,
            pointers_in_handoff=strategy.engine == "flower",
            scripts=strategy.scripts,
            parallel=strategy.parallel,
            behaviour=behaviour,
            agent_type="general-purpose" if strategy.defaults else "worker",
            chunk=strategy.chunk,
            self_glance=strategy.self_glance,
            fold=strategy.fold and strategy.engine == "flower",
            own_steps=strategy.own_steps if strategy.engine == "flower" else 0,
            batch=strategy.batch if strategy.engine == "flower" else 1,
            inline_until=strategy.inline_until if strategy.delegated else None,
        )
        resume_states: dict[int, int] = {}
        gaps: list[float] = []
        started = time.perf_counter()
        edit = PEERS[strategy.peer].edit if strategy.peer else None
        async with ScriptedModel(strict=False, edit=edit) as model:
            model.script("main", play.on_main)
            model.script("compact", play.on_compact)
            model.script("worker", play.on_worker)
            model.script("subagent", play.on_worker)  # the CLI's built-in agents carry no marker
            error = await _phases(model, root, workload, strategy, play, resume_states, gaps, timeout)
            requests = model.requests()
        wall = time.perf_counter() - started
        return Recording(
            workload, strategy, behaviour, requests, play.ledger, error, wall, resume_states, gaps
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


async def _phases(
    model: ScriptedModel,
    root: Path,
    workload: Workload,
    strategy: Strategy,
    play: Play,
    resume_states: dict[int, int],
    gaps: list[float],
    timeout: float,
) -> str | None:
    prompt, resume, idle, dated = workload.task, None, 0.0, 0.0
    rt = _runtime(model, root, workload, strategy) if strategy.engine == "flower" else None
    spec = (
        lead(strategy.model, own_steps=strategy.own_steps, **strategy.spec)
        if strategy.delegated
        else _inline_spec(strategy.model)
    )
    while True:
        play.pause_requested = None
        try:
            if rt is not None:
                result = await rt.run(spec, prompt, resume=resume)
                session, error = result.session_id, result.error
            else:
                options = plain_options(model, root, workload, strategy)
                options = dataclasses.replace(options, resume=resume)
                run = await model.run(prompt, options=options, timeout=timeout)
                session, error = run.session_id, (str(run.error) if run.error else None)
                if resume is not None and session:
                    gaps.append(gap(model.config_dir, session))
        except Exception as exc:  # a broken run is a result, not a crash of the suite
            return f"{type(exc).__name__}: {exc}"
        pause = play.pause_requested
        if pause is None or error is not None:
            return error
        if pause.external_change:
            subprocess.run(["python3", "gen.py", "external"], cwd=root, check=True, capture_output=True)
        idle = sum(play.ledger.idle.values())
        if rt is not None:  # the workload's idle time passes for the store's clock too (expiry's pause)
            rt.store.clock = lambda idle=idle: time.time() + idle
        elif session and idle > dated:  # the CLI reads the gap from its transcript's timestamps
            date_back(model.config_dir, session, idle - dated)
            dated = idle
        resume_states[play.ledger.pauses[-1]] = play.current_state()
        prompt, resume = "Continue where you left off.", session
