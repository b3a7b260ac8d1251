"""Run one workload under one strategy for real: the bundled CLI against the scripted model.

Baselines run with plain `ClaudeAgentOptions` (no flower hooks, store or rules): the same system preset,
tool list and model as flower's sessions, so only the management differs. `baseline_raw` has compaction
disabled (`DISABLE_AUTO_COMPACT=1`); `baseline_cc_default` keeps the CLI's defaults (it compacts, and it
persists Bash outputs over 30,000 chars to a file with a 2 KB preview, as it always does). flower runs
through `Runtime(..., configure=model.attach)`.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from claude_agent_sdk import AgentDefinition, ClaudeAgentOptions

from flower import Runtime, SpillPolicy, coordinator, worker
from flower.options import session_tools
from flower.testing import RecordedRequest, ScriptedModel

from .actions import Denied, Pause, Reuse, Subtask, Workload, flatten
from .player import Ledger, Play

MODEL = "claude-sonnet-4-6"
"""The CLI reports a 200,000-token window for it (facts §5), so the marathon reaches the wall."""
UNBOUNDED_MODEL = "claude-sonnet-4-5"
"""Same window, but the CLI neither compacts nor refuses locally (facts §5): the peers' recording."""
WINDOW = 200_000
HARD_LIMIT = WINDOW - 23_000
"""With compaction off, the CLI refuses a prompt locally at about window - 23k (facts §5)."""
GEN = Path(__file__).with_name("gen.py")
WORKER_PROMPT = "You do hands-on work: run what you are asked, then report briefly."


def _flower_worker() -> Any:
    return worker("Runs commands and reports.", WORKER_PROMPT, tools=["Bash", "Read", "Write", "Edit"])


def lead(model: str = MODEL) -> Any:
    """flower's coordinator for the benchmark: one worker with Bash, Read, Write and Edit."""
    return coordinator("lead", "Drive the benchmark task.", {"worker": _flower_worker()}, model=model)


TOOLS = session_tools(lead())
"""flower's session tools; the baselines are offered the same list."""


@dataclass(frozen=True)
class Strategy:
    """How a run is made: plain SDK or flower, inline or delegated, and the knobs of each."""

    name: str
    engine: Literal["plain", "flower"]
    delegated: bool = False
    compaction: bool = True
    runtime: Mapping[str, Any] = field(default_factory=dict)
    parallel: int = 1
    model: str = MODEL
    note: str = ""

    @property
    def scripts(self) -> str:
        """Where this strategy's recurring script lives (the workbench's scripts/ for flower)."""
        return (
            ".flower/scripts"
            if self.engine == "flower" and self.runtime.get("workbench", True)
            else "scripts"
        )


@dataclass
class Recording:
    """A finished real run: every request the scripted model received, and the ledger of its agents."""

    workload: Workload
    strategy: Strategy
    requests: list[RecordedRequest]
    ledger: Ledger
    error: str | None
    wall: float
    resume_states: dict[int, int]

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
    env = {"CLAUDE_AGENT_SDK_DISABLE_BUILTIN_AGENTS": "1"}
    if strategy.engine == "plain" and not strategy.compaction:
        env["DISABLE_AUTO_COMPACT"] = "1"
    return env


def _settings(workload: Workload) -> str | None:
    return json.dumps({"permissions": {"deny": list(workload.deny)}}) if workload.deny else None


def plain_options(
    model: ScriptedModel, root: Path, workload: Workload, strategy: Strategy
) -> ClaudeAgentOptions:
    """The baselines' options: flower's preset, tools and model, none of its hooks or store."""
    agents = None
    if strategy.delegated:
        agents = {
            "worker": AgentDefinition(
                description="Runs commands and reports.",
                prompt=WORKER_PROMPT,
                tools=["Bash", "Read", "Write", "Edit"],
                model="inherit",
            )
        }
    return model.options(
        cwd=root,
        system_prompt={"type": "preset", "preset": "claude_code"},
        tools=list(TOOLS),
        allowed_tools=list(TOOLS),
        model=strategy.model,
        env=_env(strategy),
        settings=_settings(workload),
        agents=agents,
    )


def _runtime(model: ScriptedModel, root: Path, workload: Workload, strategy: Strategy) -> Runtime:
    settings = _settings(workload)

    def configure(options: ClaudeAgentOptions) -> ClaudeAgentOptions:
        env = {**options.env, **_env(strategy)}
        return model.attach(dataclasses.replace(options, settings=settings, env=env))

    return Runtime(root, configure=configure, check_credentials=False, **dict(strategy.runtime))


async def record(workload: Workload, strategy: Strategy, *, timeout: float = 900.0) -> Recording:
    """Run the workload once through the real CLI; pauses end a session and resume it."""
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
        )
        resume_states: dict[int, int] = {}
        started = time.perf_counter()
        async with ScriptedModel(strict=False) as model:
            model.script("main", play.on_main)
            model.script("compact", play.on_compact)
            model.script("worker", play.on_worker)
            error = await _phases(model, root, workload, strategy, play, resume_states, timeout)
            requests = model.requests()
        return Recording(
            workload, strategy, requests, play.ledger, error, time.perf_counter() - started, resume_states
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
    timeout: float,
) -> str | None:
    prompt, resume = workload.task, None
    rt = _runtime(model, root, workload, strategy) if strategy.engine == "flower" else None
    spec = lead(strategy.model) if strategy.delegated else _inline_spec(strategy.model)
    while True:
        play.pause_requested = None
        try:
            if rt is not None:
                result = await rt.run(spec, prompt, resume=resume)
                session, error = result.session_id, result.error
            else:
                options = dataclasses.replace(plain_options(model, root, workload, strategy), resume=resume)
                run = await model.run(prompt, options=options, timeout=timeout)
                session, error = run.session_id, (str(run.error) if run.error else None)
        except Exception as exc:  # a broken run is a result, not a crash of the suite
            return f"{type(exc).__name__}: {exc}"
        pause = play.pause_requested
        if pause is None or error is not None:
            return error
        if pause.external_change:
            subprocess.run(["python3", "gen.py", "external"], cwd=root, check=True, capture_output=True)
        if rt is not None:  # the workload's idle time passes for the store's clock too (expiry's pause)
            idle = sum(play.ledger.idle.values())
            rt.store.clock = lambda idle=idle: time.time() + idle
        resume_states[play.ledger.pauses[-1]] = play.current_state()
        prompt, resume = "Continue where you left off.", session


def _inline_spec(model: str) -> Any:
    """flower without the delegation wall: the main thread is a worker-like agent doing everything."""
    return worker(
        "Does the benchmark task.",
        "Drive the benchmark task.",
        tools=["Bash", "Read", "Write", "Edit"],
        model=model,
    )


HEAD_ONLY, HEAD_TAIL, LONG_HEAD = (400, 0), (300, 100), (2000, 0)
"""The spill previews compared on W1: (head, tail) chars."""


def default_shape() -> tuple[int, int]:
    """flower's current default preview, (head, tail)."""
    policy = SpillPolicy()
    return policy.head, policy.tail


def shape_label(shape: tuple[int, int]) -> str:
    """`300 head + 100 tail`, `400 head`."""
    return f"{shape[0]} head" + (f" + {shape[1]} tail" if shape[1] else "")


def sweep_name(base: str, shape: tuple[int, int]) -> str:
    """The strategy that runs `base` with preview `shape` (plain `base` for the default shape)."""
    return base if shape == default_shape() else f"{base}, preview {shape_label(shape)}"


ABLATIONS: dict[str, dict[str, Any]] = {
    "flower -spill": {"spill_threshold": None},
    "flower -expiry": {"ephemeral": False},
    "flower -denial_prune": {"keep_denials": 1_000_000},
    "flower -handoff": {"handoff": False},
    "flower -workbench": {"workbench": False},
    "flower -report_cap": {"report_limit": None},
}


def idle_layers(workload: Workload) -> dict[str, str]:
    """Ablations that cannot change a workload's run, with why: their layer has nothing to act on there.

    They are not run (the run would be flower's, request for request) and the report says so.
    """
    actions = flatten(workload.actions)
    big = any(o.size >= 4_000 for o in workload.outputs.values()) or any(
        len(t) >= 4_000 for t in workload.files.values()
    )
    resumes = any(isinstance(a, Pause) for a in actions)
    denials = any(isinstance(a, Denied) for a in actions)
    reuse = any(isinstance(a, Reuse) for a in actions)
    pasted = any(isinstance(a, Subtask) and a.pasted for a in workload.actions)
    idle: dict[str, str] = {}
    if not big:
        idle["flower -spill"] = "no output reaches the 4,000-char threshold"
    if not resumes:
        idle["flower -expiry"] = "no resume (expiry acts when a session is resumed)"
    if not (resumes and denials):
        idle["flower -denial_prune"] = "no denial before a resume (pruning acts when a session is resumed)"
    if not workload.pad:
        idle["flower -handoff"] = "the context never nears the window"
    if not (reuse or workload.pad):
        idle["flower -workbench"] = "no recurring script and no new session"
    if not pasted:
        idle["flower -report_cap"] = "no worker report reaches the 4,000-char limit"
    return idle


def strategies_for(workload: Workload, *, quick: bool) -> list[Strategy]:
    """The real strategies a workload runs under (the peers are transforms of `baseline_raw`).

    `quick` keeps the baselines, flower and flower without its delegation wall.
    """
    fan_out = workload.key == "w3"
    rows = [
        Strategy("baseline_raw", "plain", compaction=False, note="plain SDK, compaction off"),
        Strategy("baseline_cc_default", "plain", delegated=fan_out, note="the CLI's own behaviour"),
        Strategy("flower", "flower", delegated=True),
        Strategy("flower -delegation", "flower", note="the main thread does everything itself"),
    ]
    if quick:
        return rows
    idle = idle_layers(workload)
    rows += [
        Strategy(name, "flower", delegated=True, runtime=knobs)
        for name, knobs in ABLATIONS.items()
        if name not in idle
    ]
    if fan_out:
        rows.insert(2, Strategy("baseline_cc_default x6 parallel", "plain", delegated=True, parallel=6))
        rows.insert(4, Strategy("flower x6 parallel", "flower", delegated=True, parallel=6))
    if workload.key == "w1":  # the spill preview sweep (issue part 4): the shapes flower does not default to
        for shape in (HEAD_ONLY, HEAD_TAIL, LONG_HEAD):
            if shape == default_shape():
                continue
            policy = SpillPolicy(head=shape[0], tail=shape[1])
            if (
                shape != LONG_HEAD
            ):  # a coordinator never reads a preview: 2,000 head matters where work is done
                rows.append(
                    Strategy(
                        sweep_name("flower", shape),
                        "flower",
                        delegated=True,
                        runtime={"spill_threshold": policy},
                    )
                )
            rows.append(
                Strategy(
                    sweep_name("flower -delegation", shape), "flower", runtime={"spill_threshold": policy}
                )
            )
    return rows


RECORDER = Strategy(
    "raw recording (no wall)",
    "plain",
    compaction=False,
    model=UNBOUNDED_MODEL,
    note="transform source only: a model the CLI neither compacts nor blocks",
)
