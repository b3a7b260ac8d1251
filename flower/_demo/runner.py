"""The demo's flower run: the scenario through `Runtime` and the real CLI, with one progress line per event.

Step 1 runs the survey; step 2 resumes the session 65 minutes later, by the store's clock and the
simulated cache's (layer 4 rewrites the history it replays; a resume within the prompt cache's lifetime,
an hour for the coordinator, would repeat the last one's rewrites and decide none) and goes on until
the main thread crosses the handoff threshold once; the next generation finishes the work.

A real run hands off near its model's window (200k or 1M tokens); a two-minute demo never gets there. So
step 2 runs with a window of its own, set after step 1 so that the threshold sits `MARGIN` tokens above
where step 1 left the main thread: the handoff comes a few turns into step 2 whatever the machine (the
length of a temp path changes the context a little).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from .. import events as ev
from .._agents import AgentSpec, coordinator, worker
from .._handoff.document import AUTO_COMPACT_MARGIN, HandoffPolicy
from .._result import StepResult
from .._runtime import Runtime
from ..testing import ScriptedModel
from .pause import PAUSE, PausedCache, pass_time
from .scenario import ANALYST, GOAL, STEP_1, STEP_2, WRITER, write_logs
from .scripted import MainScript, Place, batches_of, tasks_of, worker_script

__all__ = ["MARGIN", "PROMPT_1", "PROMPT_2", "FlowerRun", "demo_window", "run_flower", "team"]

MARGIN = 1_500
"""Tokens between the main thread's context at the end of step 1 and the handoff threshold of step 2."""
RESERVE = 1_000
PROMPT_1 = "Start with a survey of logs/: scan every service."
PROMPT_2 = "Go on: rank the causes across services and write the conclusions."
ANALYST_TOOLS = ("Bash", "Read", "Grep", "Glob")
WRITER_TOOLS = ("Write", "Read", "Edit")

Out = Callable[[str], None]


def team(*, model: str | None = None, options: Mapping[str, Any] | None = None) -> AgentSpec:
    """The coordinator and its two workers (`options`: more `ClaudeAgentOptions` fields); the strict wall
    (the default, `own_steps=0`), so the scenario's hands-on attempts show its refusals."""
    workers = {
        "analyst": worker(*ANALYST, tools=ANALYST_TOOLS),
        "writer": worker(*WRITER, tools=WRITER_TOOLS),
    }
    return coordinator("lead", GOAL, workers, model=model, options=options)


def demo_window(context: int) -> int:
    """The window whose handoff threshold (window - 33,000 - `RESERVE`) is `MARGIN` above `context`."""
    return context + MARGIN + AUTO_COMPACT_MARGIN + RESERVE


@dataclass(frozen=True)
class FlowerRun:
    """What the flower run left: its workspace, its step results, the main thread's request sizes."""

    workspace: Path
    steps: tuple[StepResult, ...]
    resident: tuple[int, ...]
    """Characters of conversation history in each main-thread request (what the model re-read)."""
    seconds: float
    window: int
    """The window step 2 handed off against."""
    threshold: int
    """Its handoff threshold (tokens)."""
    prefix: int = 0
    """Characters of the main thread's fixed prefix (tools and system prompt) in its first request."""


class Progress:
    """Turns flower's events into one line each: glances, denials, delegations, refusals of a worker's call,
    errors, layer 4, handoff."""

    def __init__(self, out: Out, label: str = "flower", *, scripted: bool = False) -> None:
        self.out = out
        self.label = label
        self.model = "the scripted model (a failure the scenario plays)" if scripted else "the model API"
        """Who answered an API error: offline, the scripted model plays it on purpose."""
        self.delegations = 0
        self._calls: dict[str, ev.ToolCall] = {}

    def line(self, kind: str, text: str) -> None:
        """Print one progress line."""
        self.out(f"  {kind:<9}{text}")

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.ToolCall):
            self._calls[event.tool_use_id] = event
        elif isinstance(event, ev.ToolResult) and event.agent is None:
            self._result(event)
        elif isinstance(event, ev.ToolResult) and event.refused:
            call = self._calls.get(event.tool_use_id)
            name = call.name if call is not None else "a call"
            self.line("refused", f"{event.agent}'s {name}: {event.text.strip()[:80]}")
        elif isinstance(event, ev.SubagentFinished):
            self.delegations += 1
            summary = (event.summary or event.status).strip().splitlines()
            self.line(
                f"[{self.delegations:02d}]",
                f"{event.agent or 'subagent':<9}{summary[0][:90] if summary else ''}",
            )
        elif isinstance(event, ev.ApiError):
            state = "the CLI retries" if event.retrying else "the CLI gave up"
            self.line("api", f"HTTP {event.status or '?'} from {self.model}; {state}")
        elif isinstance(event, ev.StoreReport) and event.report.subpath is None:
            report = event.report
            self.line(
                "layer 4",
                f"resume rewrote the history: {len(report.expired)} expired, {len(report.pruned)} pruned, "
                f"{len(report.trimmed)} trimmed ({report.chars_saved:,} chars)",
            )
        elif isinstance(event, ev.HandoffWarning):
            self.line("context", f"{event.context:,} tokens, handoff at {event.threshold:,}")
        elif isinstance(event, ev.HandoffDone):
            where = Path(event.path).name if event.path else "memory"
            self.line(
                "handoff",
                f"at {event.context:,} tokens: generation {event.generation} starts from notes/{where}",
            )

    def _result(self, event: ev.ToolResult) -> None:
        call = self._calls.get(event.tool_use_id)
        if call is None or call.name == "Agent":
            return
        what = str(call.input.get("command") or call.input.get("file_path") or call.name)
        if event.is_error and "hook error" in event.text:
            self.line("denied", f"{call.name} {what[:60]!r}: the coordinator delegates instead")
        elif call.name == "Bash":
            spilled = "  (spilled)" if "[spilled]" in event.text else ""
            self.line("glance", f"{what[:64]}{spilled}")


async def run_flower(root: Path, out: Out) -> FlowerRun:
    """Run both steps of the scenario with flower in `root/flower` and return what it left."""
    workspace = root / "flower"
    await anyio.to_thread.run_sync(write_logs, workspace)
    place = Place(str(workspace.resolve()), str(workspace.resolve() / ".flower"))
    started = time.monotonic()
    cache = PausedCache()
    async with ScriptedModel(strict=False, cache=cache) as model:
        tasks = tasks_of(STEP_1 + STEP_2)
        for name in ("analyst", "writer"):
            mine = [t for t in tasks if t.worker == name]
            batches = batches_of(STEP_1 + STEP_2) if name == "analyst" else []
            model.script(name, worker_script(model, mine, place, flower=True, batches=batches))
        spec = team()
        progress = Progress(out, scripted=True)

        out("flower, step 1: the survey")
        first = MainScript(model, STEP_1, place, flower=True)
        model.script("main", first)
        runtime = Runtime(workspace, configure=model.attach)
        one = await runtime.run(spec, PROMPT_1, on_event=progress)
        out(f"  result   {one.text if one.ok else f'did not finish: {one.error}'}")
        if not one.ok:  # step 2 would resume a session cut short
            return FlowerRun(workspace, (one,), (), time.monotonic() - started, 0, 0)

        window = demo_window(one.peak_context)
        policy = HandoffPolicy(window=window, reserve=RESERVE, warn_margin=MARGIN // 2)
        await anyio.to_thread.run_sync(pass_time, workspace / ".flower" / "sessions.db", PAUSE)
        cache.paused = PAUSE
        out(
            f"flower, step 2, {PAUSE / 60:.0f} minutes later: resume the session "
            f"(handoff at {policy.threshold(window):,} tokens)"
        )
        model.script("main", MainScript(model, STEP_2, place, flower=True, findings=first.findings))
        later = Runtime(workspace, handoff=policy, configure=model.attach)
        two = await later.run(spec, PROMPT_2, resume=one.session_id, on_event=progress)
        out(f"  result   {two.text if two.ok else f'did not finish: {two.error}'}")
        resident = tuple(r.sizes.messages for r in model.requests("main"))
        opening = model.request("main", 0).sizes
    return FlowerRun(
        workspace,
        (one, two),
        resident,
        time.monotonic() - started,
        window,
        policy.threshold(window),
        opening.tools + opening.system,
    )
