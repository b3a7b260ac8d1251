"""The demo's baseline: the same scenario as a plain SDK session, without flower.

Plain `ClaudeAgentOptions` as a user writes them: the workspace, the Claude Code prompt with the goal
appended, a plain `SqliteSessionStore` (so the same report can read it; it rewrites nothing), and nothing
else: the CLI's own tools and its built-in agents, no hooks. Nothing stops the coordinator, so it does
what a plain one does: it runs the analyst's commands itself (their whole outputs stay in its context),
writes files itself, gives what it delegates to the CLI's `general-purpose` agent with the task alone
(the CLI's own delegation, no rules restated), and its resume replays the whole history. Step 2 compacts
at the line where the flower run hands off: the CLI takes no compaction window under 100,000 tokens, so
it runs with a 100,000-token window (`CLAUDE_CODE_AUTO_COMPACT_WINDOW`, an 80,000-token effective
window) and the percentage of it that puts its threshold at flower's (`CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`,
rounded up to a whole percent), measured above each side's own fixed prefix: the CLI's tool set and
`claude_code` preset are larger than flower's coordinator's tools and prompt, and a line below the
plain session's own prefix could never be compacted under. Its compactions are requests like any
other: priced with the rest.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from contextlib import aclosing
from dataclasses import dataclass, replace
from pathlib import Path

import anyio
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKError,
    ResultMessage,
    ToolUseBlock,
    query,
)

from .._util.cause import cause_text
from ..stores import SqliteSessionStore
from ..testing import ScriptedModel
from .pause import PAUSE, PausedCache, pass_time
from .runner import ANALYST_TOOLS, PROMPT_1, PROMPT_2, WRITER_TOOLS
from .scenario import GOAL, STEP_1, STEP_2, write_logs
from .scripted import MainScript, Place, tasks_of, worker_script

__all__ = ["PlainRun", "compaction_env", "run_plain"]

Out = Callable[[str], None]
SILENCE = 1800.0
"""Seconds without a single message from the CLI after which a step is taken for hung (flower's own side
waits as long on a silent CLI: `Runtime(worker_timeout=...)`); a slow step has no limit."""
EFFECTIVE_WINDOW = 80_000
"""The CLI's effective window for `CLAUDE_CODE_AUTO_COMPACT_WINDOW=100000` (100k - 20k for the summary)."""


@dataclass(frozen=True)
class PlainRun:
    """What the plain run left: its workspace and store, its answers, the main thread's request sizes."""

    workspace: Path
    database: Path
    texts: tuple[str, ...]
    resident: tuple[int, ...]
    """Characters of conversation history in each main-thread request."""
    seconds: float
    compactions: int = 0
    """Compaction requests the CLI sent (step 2 compacts at the flower run's handoff window)."""


def _summary(findings: list[str]) -> str:
    """The plain session's compaction summary: what a summary of the audit so far keeps."""
    found = "\n".join(f"- {f}" for f in findings[-12:]) or "- none yet"
    return (
        "<analysis>The audit of logs/ is under way.</analysis>\n<summary>\n1. Primary request: audit logs/: "
        "errors per service, their causes, what to fix first.\n2. Findings so far:\n"
        f"{found}\n3. Current work: ranking the causes and writing the conclusions.\n</summary>"
    )


def _options(model: ScriptedModel, workspace: Path, store: SqliteSessionStore) -> ClaudeAgentOptions:
    tools = list(dict.fromkeys(["Agent", "Read", *ANALYST_TOOLS, *WRITER_TOOLS]))
    return model.options(
        cwd=workspace,
        system_prompt={"type": "preset", "preset": "claude_code", "append": GOAL},
        allowed_tools=tools,  # run headless without a permission prompt; the CLI's own tool set
        session_store=store,
    )


async def _run(prompt: str, options: ClaudeAgentOptions, out: Out) -> tuple[str, str | None]:
    """One `query()` to its end; one progress line per main-thread reply that calls tools.

    No time limit on the step: a busy machine makes a live run slow, not wrong. Only a CLI that sends
    nothing at all for `SILENCE` seconds is taken for hung, and the step ends with an error that says so.
    """
    text, session = "", None
    try:
        async with aclosing(query(prompt=prompt, options=options)) as stream:  # type: ignore[type-var]
            while True:
                with anyio.move_on_after(SILENCE) as quiet:
                    message = await anext(stream, None)
                if quiet.cancelled_caught:
                    return (
                        f"error: the CLI sent nothing for {SILENCE:g} s (hung), so the step was stopped",
                        session,
                    )
                if message is None:
                    break
                if isinstance(message, AssistantMessage) and message.parent_tool_use_id is None:
                    calls = [b for b in message.content if isinstance(b, ToolUseBlock)]
                    if calls:
                        names = ", ".join(_brief(b) for b in calls)
                        out(f"  {'plain':<9}{names[:86]}")
                elif isinstance(message, ResultMessage):
                    text, session = message.result or "", message.session_id
    except ClaudeSDKError as exc:  # an error result, a CLI that could not start or died
        text = f"error: {cause_text(exc)}"
    return text, session


def _brief(block: ToolUseBlock) -> str:
    data = block.input
    if block.name == "Agent":
        return f"Agent {data.get('subagent_type')}: {data.get('description')}"
    return f"{block.name} {data.get('description') or data.get('file_path') or ''}".strip()


def compaction_env(threshold: int) -> dict[str, str]:
    """The CLI's environment for compacting at `threshold` tokens (its window has a 100k minimum)."""
    percent = min(100, max(1, math.ceil(100 * threshold / EFFECTIVE_WINDOW)))
    return {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": str(percent)}


async def run_plain(root: Path, out: Out, *, threshold: int | None = None, prefix: int = 0) -> PlainRun:
    """Run both steps of the scenario as a plain SDK session in `root/plain`; step 2 compacting at
    `threshold` tokens (the flower run's handoff threshold), when given, moved by the difference between
    this session's fixed prefix (tools and system prompt) and `prefix` characters (the flower run's)."""
    workspace = root / "plain"
    await anyio.to_thread.run_sync(write_logs, workspace)
    for name in ("scripts", "artifacts", "notes"):
        (workspace / name).mkdir()
    database = workspace / "sessions.db"
    place = Place(str(workspace.resolve()), str(workspace.resolve()))
    started = time.monotonic()
    cache = PausedCache()
    async with (
        ScriptedModel(strict=False, cache=cache) as model,
        SqliteSessionStore(database) as store,
    ):
        delegated = [t for t in tasks_of(STEP_1 + STEP_2) if t.worker == "writer"]  # the analyst's: inline
        model.script("subagent", worker_script(model, delegated, place, flower=False))
        options = _options(model, workspace, store)
        out("plain SDK, step 1: the survey")
        first = MainScript(model, STEP_1, place, flower=False)
        model.script("main", first)
        one, session = await _run(PROMPT_1, options, out)
        out(f"  result   {one}")
        await anyio.to_thread.run_sync(pass_time, database, PAUSE)
        cache.paused = PAUSE
        out(f"plain SDK, step 2, {PAUSE / 60:.0f} minutes later: resume the session")
        model.script("main", MainScript(model, STEP_2, place, flower=False, findings=first.findings))
        model.script("compact", lambda request: _summary(first.findings))
        later = replace(options, resume=session)
        if threshold is not None:
            first_request = model.request("main", 0).sizes
            own = first_request.tools + first_request.system
            line = threshold + max(0, own - prefix) // 4  # tokens: characters / 4, as everywhere here
            later = replace(later, env={**later.env, **compaction_env(line)})
        two, _ = await _run(PROMPT_2, later, out)
        out(f"  result   {two}")
        resident = tuple(r.sizes.messages for r in model.requests("main"))
        compactions = len(model.requests("compact"))
    return PlainRun(workspace, database, (one, two), resident, time.monotonic() - started, compactions)
