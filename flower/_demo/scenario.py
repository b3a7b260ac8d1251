"""The demo's scenario as plain data: a log audit in two steps, what each move of the main thread is.

A coordinator audits twelve services' logs with two workers: `analyst` runs commands, `writer` writes
files (never one named `REPORT*.md`, `SUMMARY*.md`, `FINDINGS*.md` or `ANALYSIS*.md`: the CLI refuses a
subagent's Write of those). Step 1 surveys (glances, two hands-on attempts, a scanner script written once
and run on every log); step 2 resumes the session to rank causes and write the conclusions, and runs
long enough to hand off once. The same moves are played with flower and as a plain SDK session
(`flower._demo.scripted` turns a move into the model's reply for each); the commands, files and outputs
are real.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = [
    "ANALYST",
    "CAUSES",
    "GOAL",
    "SERVICES",
    "STEP_1",
    "STEP_2",
    "WRITER",
    "Move",
    "Task",
    "write_logs",
]

SERVICES = tuple(f"service-{n:02d}" for n in range(1, 13))
CAUSES = ("timeout", "connection_reset", "disk_full", "auth_failed", "bad_gateway")
GOAL = "Goal: audit logs/ (one file per service): errors per service, their causes, and what to fix first."

ANALYST = (
    "Analyse files: counts, searches, comparisons. Give it any job that reads files or runs commands.",
    "You analyse logs with the command line; never estimate by hand.",
)
"""(description, instructions) of the worker that runs commands."""
WRITER = (
    "Writes files: scripts, notes, summaries. Give it any job that creates or edits a file.",
    "You write files exactly as asked, then report their paths.",
)
"""(description, instructions) of the worker that writes files."""


def write_logs(root: Path, *, seed: int = 7, lines: int = 150) -> None:
    """Twelve deterministic service logs under `root/logs/` (about 13k characters each)."""
    rng = random.Random(seed)
    (root / "logs").mkdir(parents=True, exist_ok=True)
    for index, service in enumerate(SERVICES):
        weights = [1 + ((index + k) % len(CAUSES)) * 2 for k in range(len(CAUSES))]
        rows = []
        for n in range(lines):
            stamp = f"2026-11-29T{8 + n // 30:02d}:{(n * 2) % 60:02d}:{rng.randrange(60):02d}Z"
            roll = rng.random()
            if roll < 0.35:
                cause = rng.choices(CAUSES, weights)[0]
                rows.append(
                    f"{stamp} {service} ERROR cause={cause} request=r-{rng.randrange(10**5):05d} "
                    f"upstream=db-{rng.randrange(4)} took={rng.randrange(50, 30000)}ms"
                )
            elif roll < 0.5:
                rows.append(
                    f"{stamp} {service} WARN slow request=r-{rng.randrange(10**5):05d} took=2.{n % 10}s"
                )
            else:
                rows.append(f"{stamp} {service} INFO ok request=r-{rng.randrange(10**5):05d} status=200")
        (root / "logs" / f"{service}.log").write_text("\n".join(rows) + "\n", encoding="utf-8")


SCANNER = """\
#!/bin/sh
# desc: errors of one log file: total and top cause on line 1, then every ERROR and WARN line
f="$1"
top=$(grep ' ERROR ' "$f" | grep -o 'cause=[a-z_]*' | sort | uniq -c | sort -rn | head -1)
echo "TOTAL $(grep -c ' ERROR ' "$f") TOP $(echo $top | awk '{print $2" "$1}')"
grep -n -E ' (ERROR|WARN) ' "$f"
"""


@dataclass(frozen=True, kw_only=True)
class Task:
    """One delegation. Texts may hold `{wb}` (the workbench: `.flower/` with flower, the workspace
    without) and `{ws}` (the workspace)."""

    worker: Literal["analyst", "writer"]
    title: str
    """The Agent call's short description."""
    goal: str
    """What is specific to the task: the mandate's whole content with flower."""
    command: str = ""
    """The analyst's command."""
    path: str = ""
    """The writer's file."""
    content: str = ""
    """What the writer writes."""


@dataclass(frozen=True, kw_only=True)
class Move:
    """One reply of the main thread."""

    kind: Literal["glance", "delegate", "hands_on", "finish"]
    text: str = ""
    """Prose before the calls, or the final answer of a `finish`."""
    commands: tuple[str, ...] = ()
    """A glance's read-only commands (run in parallel)."""
    tasks: tuple[Task, ...] = ()
    """A delegation's tasks (parallel Agent calls)."""
    tool: str = ""
    """A hands-on move's tool (`Write` or `Bash`): flower's wall refuses it, a plain session runs it."""
    tool_input: tuple[tuple[str, str], ...] = ()
    flaky: bool = False
    """The first request for this move fails with HTTP 500 (the CLI retries it)."""


def _scan(service: str) -> Task:
    short = service.removeprefix("service-")
    return Task(
        worker="analyst",
        title=f"scan {service}",
        goal=f"Run the scanner on logs/{service}.log. Done when: its error total and top cause are known; "
        f"the listing is saved as artifacts/errors-{short}.txt.",
        command=f"sh {{wb}}/scripts/errors.sh logs/{service}.log | tee {{wb}}/artifacts/errors-{short}.txt",
    )


def _analysis(title: str, goal: str, command: str) -> Task:
    return Task(worker="analyst", title=title, goal=goal, command=command)


def _note(title: str, name: str, goal: str, content: str) -> Task:
    return Task(worker="writer", title=title, goal=goal, path=f"{{wb}}/notes/{name}", content=content)


def _batch(services: tuple[str, ...], text: str, *, flaky: bool = False) -> Move:
    return Move(kind="delegate", text=text, tasks=tuple(_scan(s) for s in services), flaky=flaky)


STEP_1: tuple[Move, ...] = (
    Move(kind="glance", text="Looking first.", commands=("ls logs | wc -l", "wc -l logs/*.log")),
    Move(kind="glance", commands=("head -3 logs/service-01.log",)),
    Move(
        kind="hands_on",
        text="Writing the plan down.",
        tool="Write",
        tool_input=(("file_path", "{ws}/PLAN.md"), ("content", "1. scan every log\n2. rank causes\n")),
    ),
    Move(
        kind="delegate",
        text="A scanner first, reused for every log.",
        tasks=(
            Task(
                worker="writer",
                title="write the scanner",
                goal="Write the scanner {wb}/scripts/errors.sh: line 1 `TOTAL <n> TOP cause=<c> <k>`, then "
                "every ERROR and WARN line with its line number.",
                path="{wb}/scripts/errors.sh",
                content=SCANNER,
            ),
        ),
    ),
    Move(kind="glance", commands=("ls -la {wb}/scripts",)),
    _batch(SERVICES[0:3], "Scanning in parallel."),
    _batch(SERVICES[3:6], "Next three.", flaky=True),
    Move(
        kind="hands_on",
        text="Normalising line endings first.",
        tool="Bash",
        tool_input=(("command", "sed -i 's/\\r$//' logs/service-01.log"), ("description", "fix endings")),
    ),
    _batch(SERVICES[6:9], "Next three."),
    Move(kind="glance", commands=("ls {wb}/artifacts | wc -l",)),
    _batch(SERVICES[9:12], "The last three."),
    Move(kind="glance", text="One raw log, to see the format.", commands=("cat logs/service-12.log",)),
    Move(kind="glance", commands=("wc -c logs/*.log", "du -sh logs")),
    Move(kind="finish", text="survey"),
)
"""Step 1: 9 glances, 2 hands-on attempts, 13 delegations (one script written, run 12 times)."""

STEP_2: tuple[Move, ...] = (
    Move(kind="glance", text="Picking up.", commands=("ls {wb}/artifacts",)),
    Move(
        kind="delegate",
        text="Two views across services.",
        tasks=(
            _analysis(
                "rank causes",
                "Rank the error causes across all logs. Done when: a count per cause, saved as "
                "artifacts/causes.txt.",
                "grep -ho 'cause=[a-z_]*' logs/*.log | sort | uniq -c | sort -rn "
                "| tee {wb}/artifacts/causes.txt",
            ),
            _analysis(
                "errors per hour",
                "Count errors per hour across all logs. Done when: one line per hour, saved as "
                "artifacts/hours.txt.",
                "grep -h ' ERROR ' logs/*.log | cut -c1-13 | sort | uniq -c | tee {wb}/artifacts/hours.txt",
            ),
        ),
    ),
    Move(
        kind="delegate",
        text="The timeouts in detail.",
        tasks=(
            _analysis(
                "list timeouts",
                "List every timeout with its request id. Done when: the list is saved as "
                "artifacts/timeouts.txt and its length is known.",
                "grep -n 'cause=timeout' logs/*.log | tee {wb}/artifacts/timeouts.txt",
            ),
        ),
    ),
    Move(
        kind="delegate",
        text="Slow requests against errors.",
        tasks=(
            _analysis(
                "warn vs error",
                "For each service, count WARN and ERROR lines. Done when: a table saved as "
                "artifacts/warn-error.txt.",
                "for f in logs/*.log; do echo \"$f $(grep -c ' WARN ' $f) $(grep -c ' ERROR ' $f)\"; done "
                "| tee {wb}/artifacts/warn-error.txt",
            ),
        ),
    ),
    Move(
        kind="delegate",
        text="Recording the decision.",
        tasks=(
            _note(
                "record decision",
                "decision-top-cause.md",
                "Record in {wb}/notes/decision-top-cause.md: fix timeouts first (most frequent cause, "
                "every service).",
                "# Fix timeouts first\n"
                "Most frequent cause in artifacts/causes.txt, present in every service.\n",
            ),
        ),
    ),
    Move(
        kind="delegate",
        text="Checking two scans again.",
        tasks=(_scan("service-03"), _scan("service-09")),
    ),
    Move(
        kind="delegate",
        text="The summary.",
        tasks=(
            _note(
                "write summary",
                "log-audit.md",
                "Write {wb}/notes/log-audit.md: per-service totals from artifacts/errors-*.txt, the ranking "
                "from artifacts/causes.txt, the decision.",
                "# Log audit\nTotals: artifacts/errors-*.txt. Causes: artifacts/causes.txt.\n"
                "Decision: notes/decision-top-cause.md.\n",
            ),
        ),
    ),
    Move(
        kind="delegate",
        text="Last check of the hours.",
        tasks=(
            _analysis(
                "peak hour",
                "Find the hour with the most errors in artifacts/hours.txt. Done when: the hour and count.",
                "sort -rn {wb}/artifacts/hours.txt | head -1",
            ),
        ),
    ),
    Move(kind="finish", text="conclusions"),
)
"""Step 2 (a resume): 1 glance, 9 delegations; long enough to hand off once on the demo's window."""
