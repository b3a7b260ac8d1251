"""A coordinator with two workers over a real git repository: a scout finds the bug, a fixer commits the fix.

The script builds a small repository in a temporary directory (a module with an off-by-one bug and its
failing test), then runs a coordinator that may only delegate: it glances at `git status` and `git log`
itself (read-only commands pass the delegation wall), sends a scout to run the tests and locate the bug,
hands the scout's one-line finding to a fixer, and checks the commit with a last glance.

Offline (the default), `flower.testing.ScriptedModel` plays the model: each script step below is what a
model would answer, and some steps read the tool results they are given (the scout's report is computed
from the real `grep` output). Everything else is real: the CLI, the tests, the edit, the commit.

Live, the same spec runs against the real API with a real prompt, capped at $0.50 per session:

    python examples/two_workers.py          # offline, no key, a few seconds
    ANTHROPIC_API_KEY=... python examples/two_workers.py --live
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from flower import Heartbeat, Runtime, coordinator, worker
from flower.events import Event, SubagentFinished, SubagentStarted, TaskFinished, TaskStarted, ToolCall
from flower.testing import RecordedRequest, ScriptedModel, ToolUse, agent, bash, read, tool_use

scout = worker(
    "Investigates code: runs tests, reads and searches files, and reports findings with file:line. "
    "Give it any question about the code.",
    "You investigate. Run commands rather than guess. Report the cause as file:line and the fix in one line.",
    tools=["Bash", "Read", "Grep", "Glob"],
)
fixer = worker(
    "Changes code: applies a precise fix, runs the tests, commits. "
    "Give it the change and its acceptance test.",
    "You change code. Make the smallest change, run the tests, commit only when they pass.",
    tools=["Bash", "Read", "Edit", "Write"],
)
lead = coordinator(
    "lead",
    "Goal: make the test suite of this repository pass with the smallest fix, committed.",
    {"scout": scout, "fixer": fixer},
)
BUDGET = {"max_budget_usd": 0.5}  # live runs only: the CLI stops a session that has spent this much

INVENTORY = '''\
"""Stock counting."""


def total(counts: list[int]) -> int:
    """The sum of every count."""
    return sum(counts[1:])
'''
TESTS = """\
import unittest

from inventory import total


class TotalTest(unittest.TestCase):
    def test_total(self) -> None:
        self.assertEqual(total([3, 4, 5]), 12)


if __name__ == "__main__":
    unittest.main()
"""


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def make_repository(repo: Path) -> None:
    """A git repository with one module, its failing test, and one commit."""
    (repo / "inventory.py").write_text(INVENTORY)
    (repo / "test_inventory.py").write_text(TESTS)
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "example@flower.invalid")
    git(repo, "config", "user.name", "flower example")
    git(repo, "config", "commit.gpgsign", "false")
    (repo / ".gitignore").write_text(".flower/\n__pycache__/\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "Add inventory.total and its test")


def scout_report(request: RecordedRequest) -> str:
    """The scout reads its own grep output (`file:line:text`) and reports the cause and the fix."""
    hit = request.tool_results[-1].text.strip().splitlines()[0]
    path, line, _ = hit.split(":", 2)
    return f"FOUND: {path}:{line} sums counts[1:] and skips the first item. FIX: return sum(counts)"


def delegate_the_fix(request: RecordedRequest) -> ToolUse:
    """The coordinator passes the scout's finding on, as a mandate with its acceptance test."""
    report = request.tool_results[-1].text
    found = re.search(r"FOUND: (.+?)\. FIX: (.+)", report)
    assert found, report
    return agent(
        "fixer",
        f"Bug: {found.group(1)}. Apply the fix `{found.group(2).strip()}`. Acceptance: "
        "`python3 -m unittest -q` passes. Then commit with the message 'Fix total(): count the first item'. "
        "Reply with the commit hash and the test summary only.",
    )


def fixer_report(request: RecordedRequest) -> str:
    """The fixer reads the test summary and the hash its Bash call printed."""
    out = request.tool_results[-1].text
    verdict = "tests OK" if "OK" in out else "tests FAILING"
    return f"Committed {out.split()[-1]}; {verdict}."


def final_answer(request: RecordedRequest) -> str:
    """The coordinator's last glance shows the commit; it answers from it."""
    head = request.tool_results[-1].text.splitlines()[0]
    return f"Fixed and committed: {head.split(' ', 1)[1]}"


def offline_model(repo: Path) -> ScriptedModel:
    module = str(repo / "inventory.py")
    return ScriptedModel(
        main=[
            bash("git status -s && git log --oneline -3"),  # a glance: the coordinator runs it itself
            agent(
                "scout",
                "Run `python3 -m unittest -q`, find why it fails, and reply with the cause as file:line "
                "and the fix in one line. Nothing else.",
            ),
            delegate_the_fix,
            bash("git log --oneline -1 && git status -s"),  # a glance to check the worker's claim
            final_answer,
        ],
        agents={
            "scout": [
                bash("python3 -m unittest -q 2>&1 | tail -3"),
                bash("grep -Hn 'counts\\[1:\\]' *.py"),
                scout_report,
            ],
            "fixer": [
                read(module),  # the CLI's Edit wants the file read first
                tool_use("Edit", file_path=module, old_string="sum(counts[1:])", new_string="sum(counts)"),
                bash(
                    "python3 -m unittest -q 2>&1 | tail -1 && "
                    "git commit -qam 'Fix total(): count the first item' && git rev-parse --short HEAD"
                ),
                fixer_report,
            ],
        },
    )


def trace(event: Event) -> None:
    """Print who does what: the coordinator's own calls, and each worker's start, calls and report."""
    match event:
        case ToolCall(agent=None, name="Agent"):
            pass  # SubagentStarted says it better
        case ToolCall(agent=who, name=name, input=tool_input):
            brief = tool_input.get("command") or Path(str(tool_input.get("file_path", ""))).name
            print(f"  [{who or 'lead'}] {name} {brief}")
        case SubagentStarted(agent=who):
            print(f"  [lead] delegates to {who}")
        case SubagentFinished(agent=who, summary=summary):
            print(f"  [{who}] reports: {summary.strip()[:100]}")
        case TaskStarted(agent=who, description=description):  # a slow command the CLI moved aside
            print(f"  [{who or 'lead'}] runs in the background: {description[:100]}")
        case TaskFinished(agent=who, summary=summary):
            print(f"  [{who or 'lead'}] {summary.strip()[:100]}")


def tests_pass(repo: Path) -> bool:
    done = subprocess.run(
        [sys.executable, "-m", "unittest", "-q"], cwd=repo, capture_output=True, text=True, check=False
    )
    return done.returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--live", action="store_true", help="use the real API (needs ANTHROPIC_API_KEY)")
    live = parser.parse_args().live
    if live and not os.environ.get("ANTHROPIC_API_KEY"):
        sys.exit("--live calls the real Anthropic API: set ANTHROPIC_API_KEY first (or run without --live).")

    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        make_repository(repo)
        print(f"tests before: {'OK' if tests_pass(repo) else 'FAILING'}")
        if live:
            capped = dataclasses.replace(lead, options=BUDGET)
            result = Runtime(repo).run_sync(capped, "Make the tests pass and commit the fix.", on_event=trace)
            print(f"cost=${result.cost_usd:.4f}")
        else:
            with offline_model(repo) as model:
                result = Runtime(repo, configure=model.attach).run_sync(lead, "Start.", on_event=trace)
                callers = model.callers()
                calls = " ".join(f"{c}={len(model.requests(c))}" for c in callers)
                chars = " ".join(f"{c}={model.request(c, -1).sizes.messages:,}" for c in callers)
            print(f"requests: {calls}")
            print(f"history chars in the last request: {chars}")
        print(result.text)
        print(f"ok={result.ok} turns={result.num_turns}" + (f" error={result.error}" if result.error else ""))
        print(f"tests after: {'OK' if tests_pass(repo) else 'FAILING'}")
        print(f"git log: {' | '.join(git(repo, 'log', '--format=%s').splitlines())}")


if __name__ == "__main__":
    # a line on stderr at once, then one whenever the run has been silent for 15 s
    with Heartbeat(f"{Path(__file__).name}: {__doc__.splitlines()[0]}"):
        main()
