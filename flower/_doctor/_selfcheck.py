"""`flower doctor`'s self-check: the CLI behaviours flower relies on, tried offline on the scripted model.

Five short runs through the installed SDK and CLI, the way a user's runs go (a `Runtime` pointed at
`flower.testing.ScriptedModel`): the first, a coordinator and a worker, meets the delegation wall, a worker,
a spill, a long report cut to its head and the usage the API reports; the second resumes it through
flower's store after an HTTP 500 (with 1-hour marks, `keep_warm=False`); the third, a hands-on agent
alone, shows the system prompt such an agent keeps; the fourth, with a model of its own, holds a worker
until its coordinator's cache has been pinged once (`_warmcheck`); the fifth, with a model of its own, has
a background worker end while its coordinator writes its last reply (`_bgcheck`).
Each fact is then read from what the scripted model received (the context the model saw), never from
flower's own return values alone.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import anyio

from .._agents import coordinator, worker
from .._result import StepResult
from .._runtime import Runtime
from .._wall.rules import COORDINATOR_PROMPT
from ..events import ApiError, Event, StoreReport
from ..testing import ScriptedModel, Usage, agent, bash, hang_guard, http_error, reply, tool_use
from ._bgcheck import BackgroundSeen, background_run, judge_background
from ._warmcheck import WarmSeen, judge_warm, keep_warm_run

__all__ = ["Check", "Progress", "self_check"]


_BIG = 6_000  # characters the worker prints: over the spill threshold
_REPORT = "ANALYST-REPORT: printed\n" + "".join(f"detail {i}: what the analyst saw\n" for i in range(200))
"""The worker's report: over the report limit, its conclusion first."""
_CONTEXT = 12_345  # input tokens the first reply reports


@dataclass(frozen=True, kw_only=True)
class Check:
    """One fact flower relies on, and whether the installed SDK and CLI still behave that way."""

    name: str
    """The fact, in a line."""
    ok: bool
    """It holds."""
    detail: str = ""
    """What was seen instead, when it does not hold."""


@dataclass
class _Seen:
    model: ScriptedModel
    workspace: Path
    first: StepResult | None = None
    second: StepResult | None = None
    events: list[Event] = field(default_factory=list)
    resumed: int = -1
    """The index of the resumed run's last request on the main thread."""
    warm: WarmSeen | None = None
    """The keep-warm run's (its own scripted model and workspace)."""
    background: BackgroundSeen | None = None
    """The background-worker run's (its own scripted model and workspace)."""


def _marks(body: dict[str, object]) -> list[object]:
    system = body.get("system")
    return [b.get("cache_control") for b in system if isinstance(b, dict)] if isinstance(system, list) else []


def _system(seen: _Seen) -> str | None:
    first = seen.model.request("main", 0)
    system = first.system_text
    if COORDINATOR_PROMPT not in system or "Goal: count the data" not in system:
        return "the coordinator's system prompt lacks flower's coordinator prompt or its instructions"
    kept_warm = _marks(first.body)
    if not kept_warm or any(isinstance(m, dict) and m.get("ttl") == "1h" for m in kept_warm):
        return f"the coordinator's cache marks (kept warm) do not ask for 5 minutes: {kept_warm}"
    hour = _marks(seen.model.request("main", seen.resumed).body)
    if not any(isinstance(m, dict) and m.get("ttl") == "1h" for m in hour):
        return f"keep_warm=False: the marks do not ask for 1 hour (CLAUDE_CODE_PROMPT_CACHE_TTL): {hour}"
    return None


def _wall(seen: _Seen) -> str | None:
    (denied,) = seen.model.request("main", 1).tool_results
    if (seen.workspace / "hands-on.txt").exists():
        return "the coordinator's Write ran although a PreToolUse hook denied it"
    if not (denied.is_error and "Delegate it" in denied.text):
        return f"the denied call came back as {denied.text[:120]!r}"
    return None


def _worker(seen: _Seen) -> str | None:
    if "analyst" not in seen.model.callers():
        return "no request was recognised as the worker's"
    report = seen.model.request("main", 2).tool_results[-1]
    if "ANALYST-REPORT" not in report.text:
        return f"the worker's report did not reach the main thread: {report.text[:120]!r}"
    return None


def _spill(seen: _Seen) -> str | None:
    (printed,) = seen.model.request("analyst", 1).tool_results
    if "y" * _BIG in printed.text or printed.is_error:
        return "the worker's large output reached its context whole (updatedToolOutput was ignored)"
    if ".flower/spill/" not in printed.text:
        return f"no spill pointer in the worker's tool result: {printed.text[:120]!r}"
    return None


def _cut(seen: _Seen) -> str | None:
    report = seen.model.request("main", 2).tool_results[-1].text
    if "detail 199:" in report:
        return "the worker's long report reached the main thread whole (updatedToolOutput was ignored)"
    if "[flower: report cut at" not in report:
        return f"no cut note in the report the main thread got: {report[-160:]!r}"
    if len(seen.model.requests("analyst")) != 2:
        return f"the worker made {len(seen.model.requests('analyst'))} requests, not 2 (it was sent back)"
    return None


def _usage(seen: _Seen) -> str | None:
    first = seen.first
    if first is None or first.peak_context < _CONTEXT or first.usage.main.input < _CONTEXT:
        peak = first.peak_context if first else 0
        return f"the reported usage ({_CONTEXT} input tokens) did not show (peak context {peak})"
    return None


def _retry(seen: _Seen) -> str | None:
    statuses = [e.status for e in seen.events if isinstance(e, ApiError) and e.retrying]
    return None if statuses == [500] else f"expected one retry of an HTTP 500, saw statuses {statuses}"


def _resume(seen: _Seen) -> str | None:
    if not any(isinstance(e, StoreReport) for e in seen.events):
        return "the resume did not load the session from flower's store"
    request = seen.model.request("main", seen.resumed)
    if "ANALYST-REPORT" not in request or "Go on." not in request.last_user_text:
        return "the resumed request lacks the earlier turns or the new prompt"
    return None


def _preset(seen: _Seen) -> str | None:
    system = seen.model.request("main", -1).system_text
    if "You are Claude Code" not in system or "Goal: count by hand." not in system:
        return "a hands-on agent's system prompt lacks the Claude Code preset or its appended instructions"
    return None


FACTS: list[tuple[str, Callable[[_Seen], str | None]]] = [
    (
        "a coordinator runs on flower's own prompt and its instructions, its cache marks at 5 minutes "
        "(kept warm), at 1 hour with keep_warm=False",
        _system,
    ),
    ("a hands-on agent keeps the CLI's claude_code preset, with its instructions appended", _preset),
    ("a PreToolUse deny stops the call and reaches the model as an error result (the wall)", _wall),
    ("a worker started with the Agent tool is told apart, and its report reaches the main thread", _worker),
    ("a PostToolUse updatedToolOutput replaces a worker's Bash output (spill)", _spill),
    ("a PostToolUse updatedToolOutput on Agent cuts a long report to its head (the report cap)", _cut),
    ("the usage the API reports is the context flower watches and counts", _usage),
    ("an HTTP 500 is retried and reported as an api_retry with its status", _retry),
    ("a resume through flower's session store replays the session", _resume),
    (
        "a keep-warm ping (a forked resume) sends the coordinator's last request again as its prefix, in "
        "one request, and leaves nothing in the store",
        lambda seen: judge_warm(seen.warm),
    ),
    (
        "a background worker that ends while the coordinator writes its last reply is read by it before "
        "the run returns (the CLI's session states)",
        lambda seen: judge_background(seen.background),
    ),
]


class Progress(Protocol):
    """What the self-check tells about its progress: each step's name, and each event of its runs."""

    def step(self, label: str) -> None: ...

    def __call__(self, event: object = None) -> None: ...


async def _scenario(seen: _Seen, progress: Progress | None) -> None:
    model, workspace = seen.model, seen.workspace
    analyst = worker("Counts things in files.", "You count with the command line.", tools=["Bash", "Write"])
    # the strict wall (the default: no own step), so that its deny of the coordinator's Write is checked
    lead = coordinator("lead", "Goal: count the data.", {"analyst": analyst})
    rt = Runtime(workspace, configure=model.attach, check_credentials=False)
    model.script(
        "main",
        [
            reply(
                tool_use("Write", file_path=str(workspace / "hands-on.txt"), content="x"),
                usage=Usage(input_tokens=_CONTEXT, output_tokens=10),
            ),
            agent("analyst", "Print the data."),
            "The analyst printed the data.",
        ],
    )
    model.script("analyst", [bash(f"python3 -c \"print('y' * {_BIG})\""), _REPORT])

    def on_event(event: Event) -> None:
        seen.events.append(event)
        if progress is not None:
            progress(event)

    if progress is not None:
        progress.step("self-check run 1 of 4")
    seen.first = await rt.run(lead, "Start.", on_event=on_event)
    if progress is not None:
        progress.step("self-check run 2 of 4 (a resume)")
    model.script("main", [http_error(500), "Resumed."])
    hour = Runtime(workspace, configure=model.attach, check_credentials=False, keep_warm=False)
    seen.second = await hour.run(lead, "Go on.", resume=seen.first.session_id, on_event=on_event)
    seen.resumed = len(model.requests("main")) - 1
    model.script("main", ["Counted."])
    await rt.run(worker("Counts by hand.", "Goal: count by hand.", tools=["Bash"]), "Count.")
    if progress is not None:
        progress.step("self-check run 3 of 4 (a worker held, its coordinator kept warm)")
    seen.warm = await keep_warm_run(workspace / "warm")
    if progress is not None:
        progress.step("self-check run 4 of 4 (a background worker reports during the last reply)")
    seen.background = await background_run(workspace / "background")


async def self_check(progress: Progress | None = None) -> list[Check]:
    """Run the scenario and judge each fact; a run that fails outright fails every fact with its cause.
    `progress` is told each step and given each event."""
    with tempfile.TemporaryDirectory(prefix="flower-doctor-") as root:
        seen = _Seen(model=ScriptedModel(strict=False), workspace=Path(root))
        failure = None
        try:
            async with seen.model:
                # a hang guard, not a speed check: under a minute idle, minutes for five CLI runs on a
                # busy machine; the harness's bound, since the self-check runs through that harness
                with anyio.fail_after(hang_guard()):
                    await _scenario(seen, progress)
        except Exception as exc:  # the doctor reports, it does not raise
            failure = f"the self-check run failed: {type(exc).__name__}: {exc}"
        checks = []
        for name, judge in FACTS:
            try:
                why = failure or judge(seen)
            except Exception as exc:  # a request that never came, a shape that moved
                why = f"{type(exc).__name__}: {exc}"
            checks.append(Check(name=name, ok=why is None, detail=why or ""))
        return checks
