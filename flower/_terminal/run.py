"""`flower run "GOAL"`: a strict coordinator and its workers on a goal, in the repository it is started in.

The run is `Runtime.run` with flower's layers as they ship (workbench, spill, layer 4, handoff; the store
in `<repository>/.flower/`), the team of `flower._terminal.team`, and `RunLines` printing its progress.
The model and credentials are the Claude Code CLI's (`ANTHROPIC_API_KEY`, a `claude` login...); without
them the run fails at once with the `CredentialsError` `Runtime` raises.

Ctrl-C (or SIGTERM) stops the run cleanly: the run is cancelled (the Runtime shuts its CLI down and keeps
the store whole), every process the run started and left (a worker's command runs in a session of its
own, which the CLI's end does not reach) is ended by pid (`_reap`), and the command that resumes the
session is printed. The exit status is then 130 (143 for SIGTERM).

For tests and docs only: `FLOWER_RUN_SCRIPTED_MODEL=<base URL of a running flower.testing.ScriptedModel>`
points the CLI at that scripted model instead of the API (fake key, a temp config directory, each
worker's prompt marked so the model tells them apart), as `flower demo` does with its embedded one.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import anyio
from claude_agent_sdk import ClaudeAgentOptions

from .._agents import AgentSpec
from .._errors import SpecError
from .._result import StepResult
from .._runtime import Runtime
from ..events import Event
from . import _reap
from .lines import RunLines, event_json, first_words
from .team import DEFAULT_WORKERS, lead, load_workers

__all__ = ["SCRIPTED_MODEL_ENV", "RunRequest", "resume_command", "run_goal"]

SCRIPTED_MODEL_ENV = "FLOWER_RUN_SCRIPTED_MODEL"
"""For tests and docs only: the base URL of a running `flower.testing.ScriptedModel` that `flower run`
talks to instead of the API (no key needed)."""

_EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143}


@dataclass(frozen=True, kw_only=True)
class RunRequest:
    """What `flower run` was asked: the goal, a session to resume, the team, the output."""

    goal: str
    """The goal (or, with `resume`, the next instruction)."""
    workspace: Path
    """The repository the run works in (the current directory)."""
    resume: str | None = None
    """A session id or an unambiguous prefix of one (`flower sessions` lists them)."""
    workers: Path | None = None
    """A `.toml` or `.py` file of the project's own workers (`flower._terminal.team.load_workers`)."""
    model: str | None = None
    """The model of the coordinator, which the workers inherit (None: the CLI's default)."""
    json: bool = False
    """Print the events as JSON lines instead of progress lines."""
    inline_until: int | None = None
    """The coordinator works hands-on itself while its context is under this many tokens (None: it
    delegates from the start)."""


def resume_command(session_id: str) -> str:
    """The command that continues `session_id`."""
    return f'flower run --resume {session_id} "next instruction"'


def _scripted(url: str, root: str) -> Callable[[ClaudeAgentOptions], ClaudeAgentOptions]:
    from ..testing._cli_env import cli_env, pointed

    env = cli_env(url.rstrip("/"), root)
    for sub in ("config", "tmp"):
        os.makedirs(os.path.join(root, sub), mode=0o700, exist_ok=True)
    return lambda options: pointed(options, env, mark_agents=True)


def _colour(stream: TextIO) -> bool:
    return stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


async def run_goal(
    request: RunRequest, *, stdout: TextIO | None = None, env: Mapping[str, str] | None = None
) -> int:
    """Run `request` and print its progress, answer and economy on `stdout`; return the exit status.

    0: the run finished; 1: it ended without finishing (its error is printed); 130/143: stopped by
    SIGINT/SIGTERM (the resume command is printed). Invalid arguments raise `SpecError`, missing
    credentials `CredentialsError`, before anything runs.
    """
    out_stream = stdout or sys.stdout
    environ = os.environ if env is None else env

    def out(line: str) -> None:
        print(line, file=out_stream, flush=True)

    if not request.goal.strip():
        raise SpecError("GOAL is empty: say what to do (with --resume: the next instruction)")
    workers = load_workers(request.workers) if request.workers is not None else dict(DEFAULT_WORKERS)
    spec = lead(workers, model=request.model, inline_until=request.inline_until)
    resume = None
    if request.resume is not None:
        from .sessions import resolve_session

        resume = await resolve_session(request.workspace, request.resume)
    lines = RunLines(
        (lambda _line: None) if request.json else out,
        workbench=request.workspace / ".flower",
        colour=not request.json and _colour(out_stream),
    )
    if not request.json:
        start = f"resuming {resume}" if resume else "a strict coordinator"
        out(f"flower run: {start} with {', '.join(workers)}, in {request.workspace}")
        out(f"  goal     {first_words(request.goal, 90)}")
    scratch = tempfile.mkdtemp(prefix="flower-run-") if environ.get(SCRIPTED_MODEL_ENV) else None
    try:
        configure = _scripted(environ[SCRIPTED_MODEL_ENV], scratch) if scratch else None
        runtime = Runtime(request.workspace, configure=configure)
        return await _supervised(request, runtime, spec, resume, lines, out)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


async def _supervised(
    request: RunRequest,
    runtime: Runtime,
    spec: AgentSpec,
    resume: str | None,
    lines: RunLines,
    out: Callable[[str], None],
) -> int:
    """The run, stopped cleanly by SIGINT or SIGTERM."""
    _reap.become_subreaper()
    stopped: list[signal.Signals] = []
    running: dict[int, str] = {}

    def on_event(event: Event) -> None:
        lines(event)
        if request.json:
            out(event_json(event))

    result: StepResult | None = None
    try:
        result = await _watched(request, runtime, spec, resume, on_event, stopped, running)
    except BaseExceptionGroup as group:  # the task group's: the run's own error, as run() raised it
        raise _first(group) from None
    if stopped:
        await anyio.to_thread.run_sync(lambda: _reap.end_all(running))
        return _interrupted(request, stopped[0], lines.counts.session_id or resume, out)
    assert result is not None
    return _finished(request, result, lines, out)


async def _watched(
    request: RunRequest,
    runtime: Runtime,
    spec: AgentSpec,
    resume: str | None,
    on_event: Callable[[Event], None],
    stopped: list[signal.Signals],
    running: dict[int, str],
) -> StepResult | None:
    """`runtime.run`, cancelled by the first SIGINT or SIGTERM (None then), which lists the processes
    running under this one before the CLI's own end orphans them."""
    result: StepResult | None = None
    async with anyio.create_task_group() as group:
        with anyio.CancelScope() as run_scope:

            async def watch() -> None:
                with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    async for number in signals:
                        if not stopped:
                            stopped.append(signal.Signals(number))
                            running.update(_reap.descendants())
                            run_scope.cancel()

            group.start_soon(watch)
            try:
                result = await runtime.run(spec, request.goal, resume=resume, on_event=on_event)
            finally:
                group.cancel_scope.cancel()
    return result


def _first(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The one exception a task group wrapped (the first, should there be several)."""
    first = group.exceptions[0]
    return _first(first) if isinstance(first, BaseExceptionGroup) else first


def _interrupted(
    request: RunRequest, number: signal.Signals, session_id: str | None, out: Callable[[str], None]
) -> int:
    if request.json:
        out(json.dumps({"event": "Interrupted", "signal": number.name, "session_id": session_id}))
    else:
        out("")
        out(
            f"flower run: interrupted ({number.name}); the workers and the CLI are stopped, "
            "the store is whole."
        )
    if session_id is not None:
        print(f"Resume it with:\n  {resume_command(session_id)}", file=sys.stderr, flush=True)
    else:
        print("No session had started yet.", file=sys.stderr, flush=True)
    return _EXIT.get(number, 130)


def _finished(request: RunRequest, result: StepResult, lines: RunLines, out: Callable[[str], None]) -> int:
    workbench = request.workspace / ".flower"
    economy = lines.economy(result, workbench)
    if request.json:
        done = {
            "event": "Done",
            "ok": result.ok,
            "session_id": result.session_id,
            "text": result.text,
            "error": result.error,
            "cost_usd": result.cost_usd,
            "peak_context": result.peak_context,
            "retired": list(result.retired),
            "economy": economy,
        }
        out(json.dumps(done, ensure_ascii=False))
    else:
        out("")
        if result.text:
            out(result.text.rstrip())
            out("")
        out(f"economy  {economy}")
        if result.session_id:
            out(f"session  {result.session_id}  (continue: {resume_command(result.session_id)})")
    if not result.ok:
        print(f"flower run: the run did not finish: {result.error}", file=sys.stderr, flush=True)
        return 1
    return 0
