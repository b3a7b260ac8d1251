"""The demo's baseline: the same scenario as a plain SDK session, without flower.

Plain `ClaudeAgentOptions`: the two workers as `AgentDefinition`s, the Claude Code prompt with the goal
appended, a plain `SqliteSessionStore` (so the same report can read it; it rewrites nothing), no hooks.
Nothing stops the coordinator, so it does what a plain one does: it runs the analyst's commands itself
(their whole outputs stay in its context), writes files itself, restates the worker rules in its
mandates, and its resume replays the whole history. Step 2 compacts at the line where the flower run
hands off: the CLI takes no compaction window under 100,000 tokens, so it runs with a 100,000-token
window (`CLAUDE_CODE_AUTO_COMPACT_WINDOW`, an 80,000-token effective window) and the percentage of it
that puts its threshold at flower's (`CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`, rounded up to a whole percent).
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
    AgentDefinition,
    AssistantMessage,
    ClaudeAgentOptions,
    ResultMessage,
    ToolUseBlock,
    query,
)
from claude_agent_sdk._errors import ResultError

from ..cost import PromptCache
from ..stores import SqliteSessionStore
from ..testing import ScriptedModel
from .runner import ANALYST_TOOLS, PROMPT_1, PROMPT_2, WRITER_TOOLS
from .scenario import ANALYST, GOAL, STEP_1, STEP_2, WRITER, write_logs
from .scripted import MainScript, Place, tasks_of, worker_script

__all__ = ["PlainRun", "compaction_env", "run_plain"]

Out = Callable[[str], None]
TIMEOUT = 120.0
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
    tools = ["Agent", "Read", "TodoWrite", *ANALYST_TOOLS, *WRITER_TOOLS]
    tools = list(dict.fromkeys(tools))
    return model.options(
        cwd=workspace,
        system_prompt={"type": "preset", "preset": "claude_code", "append": GOAL},
        tools=tools,
        allowed_tools=tools,
        agents={
            "analyst": AgentDefinition(
                description=ANALYST[0], prompt=ANALYST[1], tools=list(ANALYST_TOOLS), model="inherit"
            ),
            "writer": AgentDefinition(
                description=WRITER[0], prompt=WRITER[1], tools=list(WRITER_TOOLS), model="inherit"
            ),
        },
        session_store=store,
        env={"CLAUDE_AGENT_SDK_DISABLE_BUILTIN_AGENTS": "1"},
    )


async def _run(prompt: str, options: ClaudeAgentOptions, out: Out) -> tuple[str, str | None]:
    """One `query()` to its end; one progress line per main-thread reply that calls tools."""
    text, session = "", None
    with anyio.fail_after(TIMEOUT):
        try:
            async with aclosing(query(prompt=prompt, options=options)) as stream:  # type: ignore[type-var]
                async for message in stream:
                    if isinstance(message, AssistantMessage) and message.parent_tool_use_id is None:
                        calls = [b for b in message.content if isinstance(b, ToolUseBlock)]
                        if calls:
                            names = ", ".join(_brief(b) for b in calls)
                            out(f"  {'plain':<9}{names[:86]}")
                    elif isinstance(message, ResultMessage):
                        text, session = message.result or "", message.session_id
        except ResultError as exc:
            text = f"error: {exc}"
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


async def run_plain(root: Path, out: Out, *, threshold: int | None = None) -> PlainRun:
    """Run both steps of the scenario as a plain SDK session in `root/plain`; step 2 compacting at
    `threshold` tokens (the flower run's handoff threshold), when given."""
    workspace = root / "plain"
    await anyio.to_thread.run_sync(write_logs, workspace)
    for name in ("scripts", "artifacts", "notes"):
        (workspace / name).mkdir()
    database = workspace / "sessions.db"
    place = Place(str(workspace.resolve()), str(workspace.resolve()))
    started = time.monotonic()
    async with (
        ScriptedModel(strict=False, cache=PromptCache()) as model,
        SqliteSessionStore(database) as store,
    ):
        tasks = tasks_of(STEP_1 + STEP_2)
        for name in ("analyst", "writer"):
            mine = [t for t in tasks if t.worker == name]
            model.script(name, worker_script(model, mine, place, flower=False))
        options = _options(model, workspace, store)
        out("plain SDK, step 1: the survey")
        first = MainScript(model, STEP_1, place, flower=False)
        model.script("main", first)
        one, session = await _run(PROMPT_1, options, out)
        out(f"  result   {one}")
        out("plain SDK, step 2: resume the session")
        model.script("main", MainScript(model, STEP_2, place, flower=False, findings=first.findings))
        model.script("compact", lambda request: _summary(first.findings))
        later = replace(options, resume=session)
        if threshold is not None:
            later = replace(later, env={**later.env, **compaction_env(threshold)})
        two, _ = await _run(PROMPT_2, later, out)
        out(f"  result   {two}")
        resident = tuple(r.sizes.messages for r in model.requests("main"))
        compactions = len(model.requests("compact"))
    return PlainRun(workspace, database, (one, two), resident, time.monotonic() - started, compactions)
