"""The scripted model's side of the demo: each move of the scenario as the reply a model would send.

Every script here is a callable that reads the request it answers, so it stays right whatever order the
CLI sends requests in (parallel workers, a retry, a handoff). The main thread's script walks the moves;
a worker's script finds its task from the mandate it was given and reports from its real tool output.

The scripts give no usage: the scripted model reports what flower's cost model (`flower.report.PromptCache`,
shared by the whole run) says the API would (input, cache reads and writes; output is the reply's own
size), so a rewritten history (layer 4 on resume) or a fresh session shows as the cache miss it would be
on the API, and the demo, `flower report` and the benchmarks price alike.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..testing import RecordedRequest, ScriptedModel, agent, bash, http_error, reply, tool_use
from ..testing._steps import HttpError, Reply, ToolUse
from .scenario import Move, Task

__all__ = ["PLAIN_AGENT", "MainScript", "Place", "batches_of", "tasks_of", "worker_script"]

HANDOFF_ASK = "Write the handoff document now"
TAKEOVER = "You are taking over work in progress"

_MOVED = re.compile(r"\[spilled\][^\n]*?([\d,]+) chars moved")
_FINDING = re.compile(r"service-\d+: \d+ errors, top cause \w+ \(\d+\)")

PLAIN_AGENT = "general-purpose"
"""The CLI's own agent a plain session delegates to (its built-in agents, as shipped)."""


@dataclass(frozen=True)
class Place:
    """Where one run works: the workspace, and its workbench (`.flower/`, or the workspace itself)."""

    workspace: str
    workbench: str

    def fill(self, text: str) -> str:
        """`text` with `{ws}` and `{wb}` replaced."""
        return text.replace("{ws}", self.workspace).replace("{wb}", self.workbench)


def first_user_text(request: RecordedRequest) -> str:
    """The text of the first user message (a subagent's mandate, a session's first prompt)."""
    for message in request.messages:
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            blocks = content if isinstance(content, list) else []
            return "\n".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict))
    return ""


def mandate(task: Task, place: Place, *, flower: bool) -> str:
    """The Agent prompt: with flower what is specific and where the workbench is; plain, the task as a
    user's session gives it to the CLI's own agent (no rules: the CLI's delegation as shipped)."""
    goal = place.fill(task.goal)
    if flower:
        return f"{goal}\nWorkbench: {place.workbench} (long outputs in its artifacts/; reply with paths)."
    return goal


def batch_mandate(tasks: tuple[Task, ...], place: Place) -> str:
    """One mandate for a whole move (flower's rules: related runs one worker does in a row)."""
    goals = "\n".join(f"- {place.fill(task.goal)}" for task in tasks)
    return (
        f"Do these in a row, one short report for all:\n{goals}\n"
        f"Workbench: {place.workbench} (long outputs in its artifacts/; reply with paths)."
    )


def batches_of(moves: tuple[Move, ...]) -> list[tuple[Task, ...]]:
    """The moves whose several analyst tasks a flower coordinator gives one worker."""
    batches = []
    for move in moves:
        runs = tuple(task for task in move.tasks if task.worker == "analyst")
        if move.kind == "delegate" and len(runs) > 1 and len(runs) == len(move.tasks):
            batches.append(runs)
    return batches


def finding(service: str, output: str) -> str | None:
    """`service-07: 53 errors, top cause auth_failed (23)` from the scanner's first line, if present."""
    line = next((x for x in output.splitlines() if x.startswith("TOTAL ")), None)
    parts = line.split() if line else []  # TOTAL n TOP cause=c k
    if len(parts) < 5:
        return None
    return f"{service}: {parts[1]} errors, top cause {parts[3].removeprefix('cause=')} ({parts[4]})"


def _report(task: Task, place: Place, output: str, *, failed: bool = False) -> str:
    if task.worker == "writer":
        path = os.path.relpath(place.fill(task.path), place.workspace)
        if failed:  # the worker reports what happened, not what it meant to do
            return f"Could not write {path}: {output.strip()[:200]}"
        return f"Wrote {path}."
    found = finding(task.title.removeprefix("scan "), output)
    if found is not None:
        return f"{found}. Listing in artifacts/."
    lines = [
        line.strip() for line in output.splitlines() if line.strip() and not line.startswith("[spilled]")
    ]
    head = lines[0][:36] if lines else "(no output)"
    moved = _MOVED.search(output)  # a spilled output: the pointer gives the whole size
    size = int(moved.group(1).replace(",", "")) if moved else len(output)
    return f"{task.title}: {head!r} first; all {size:,} chars in artifacts/."


def worker_script(
    model: ScriptedModel,
    tasks: list[Task],
    place: Place,
    *,
    flower: bool,
    batches: list[tuple[Task, ...]] | None = None,
) -> Callable[[RecordedRequest], Reply]:
    """A worker: finds its task (or its `batches`' tasks, done in a row) by its mandate, runs or writes
    each, then reports from the real results."""
    by_mandate = {batch_mandate(b, place): b for b in batches or []}
    by_mandate.update({mandate(t, place, flower=flower): (t,) for t in tasks})

    def script(request: RecordedRequest) -> Reply:
        asked = first_user_text(request)
        found = next((b for text, b in by_mandate.items() if text in asked), None)
        if found is None:
            return reply("I could not tell which task this is.")
        if request.turn < len(found):
            task = found[request.turn]
            if task.worker == "writer":
                call = tool_use("Write", file_path=place.fill(task.path), content=place.fill(task.content))
            else:
                call = bash(place.fill(task.command), description=task.title)
            return reply(call)
        results = request.tool_results[-len(found) :]
        if len(results) < len(found):
            return reply(_report(found[0], place, "", failed=True))
        return reply(
            "\n".join(
                _report(task, place, result.text, failed=result.is_error)
                for task, result in zip(found, results, strict=True)
            )
        )

    return script


@dataclass
class MainScript:
    """The main thread, move after move; it answers a handoff request and resumes after a takeover.

    `flower=False` plays the same moves as a plain session would: the analyst's commands run in the
    main thread itself, hands-on calls are not refused, and what it delegates goes to the CLI's own
    `general-purpose` agent with the task alone.
    """

    model: ScriptedModel
    moves: tuple[Move, ...]
    place: Place
    flower: bool
    findings: list[str] = field(default_factory=list)
    cursor: int = 0
    failed: set[int] = field(default_factory=set)
    ended: bool = False

    def __call__(self, request: RecordedRequest) -> Reply | HttpError:
        self._collect(request)
        if HANDOFF_ASK in request.last_user_text:
            if self._last_calls_failed(request):
                self.cursor = max(0, self.cursor - 1)  # the move the handoff interrupted is done again
            return reply(self._handoff_document())
        if self.cursor >= len(self.moves):
            return reply("Nothing left to do.")
        move = self.moves[self.cursor]
        if move.flaky and self.cursor not in self.failed:
            self.failed.add(self.cursor)
            return http_error(500, "scripted outage")
        self.cursor += 1
        return self._render(move)

    def _collect(self, request: RecordedRequest) -> None:
        """Keep every per-service finding seen: in a worker's report, or in the scanner's own output."""
        titles = {
            str(b.get("id")): str((b.get("input") or {}).get("description", "")) for b in request.tool_uses
        }
        for result in request.tool_results:
            title = titles.get(result.tool_use_id, "")
            found = [*_FINDING.findall(result.text)]
            if title.startswith("scan "):
                own = finding(title.removeprefix("scan "), result.text)
                found += [own] if own else []
            for line in found:
                if line not in self.findings:
                    self.findings.append(line)

    @staticmethod
    def _last_calls_failed(request: RecordedRequest) -> bool:
        calls = [
            str(b.get("id"))
            for m in request.messages
            if m.get("role") == "assistant" and isinstance(m.get("content"), list)
            for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "tool_use"
        ]
        if not calls:
            return False
        results = {r.tool_use_id: r for r in request.tool_results}
        last = results.get(calls[-1])
        return last is None or last.is_error

    def _render(self, move: Move) -> Reply:
        blocks: list[str | ToolUse] = [move.text] if move.text and move.kind != "finish" else []
        if move.kind == "glance":
            blocks += [bash(self.place.fill(c)) for c in move.commands]
        elif move.kind == "hands_on":
            blocks.append(tool_use(move.tool, {k: self.place.fill(v) for k, v in move.tool_input}))
        elif move.kind == "delegate" and self.flower and move.tasks in batches_of((move,)):
            prompt = batch_mandate(move.tasks, self.place)
            blocks.append(agent("analyst", prompt, description=f"{len(move.tasks)} runs in a row"))
        elif move.kind == "delegate":
            for task in move.tasks:
                if task.worker == "analyst" and not self.flower:
                    blocks.append(bash(self.place.fill(task.command), description=task.title))
                else:
                    prompt = mandate(task, self.place, flower=self.flower)
                    kind = task.worker if self.flower else PLAIN_AGENT
                    blocks.append(agent(kind, prompt, description=task.title))
        else:
            blocks.append(self._final(move.text))
            self.ended = True
        return reply(*blocks)

    def _final(self, what: str) -> str:
        worst = max(self.findings, key=lambda f: int(f.split()[1]), default="no scan reported")
        if what == "survey":
            return f"Survey done: {len(self.findings)} services scanned; most errors: {worst}."
        return (
            "Audit done: causes ranked (artifacts/causes.txt), timeouts listed, decision and summary in "
            f"notes/. Most errors: {worst}."
        )

    def _handoff_document(self) -> str:
        left = self.moves[self.cursor :]
        following = next((m for m in left if m.kind != "finish"), None)
        step = following.text if following and following.text else "write the conclusions"
        found = "\n".join(f"- {f}" for f in self.findings[-12:]) or "- none yet"
        return (
            "## Doing now\nAuditing logs/: scans done, ranking causes and writing the conclusions.\n"
            f"## Decided\n- The scanner scripts/errors.sh is the one tool for per-service totals.\n{found}\n"
            "## Dead ends\nnone\n"
            f"## Next step\n{step}\n"
            f"## Where things are\n- {self.place.workbench}/scripts/errors.sh\n"
            f"- {self.place.workbench}/artifacts/ (listings)\n- {self.place.workbench}/notes/ (decisions)\n"
        )


def tasks_of(moves: tuple[Move, ...]) -> list[Task]:
    """Every task of these moves (for the workers' scripts)."""
    return [task for move in moves for task in move.tasks]
