"""The repository and the scripts `flower run`'s tests (and docs/run.md's transcript) run on.

A small repository whose `greet()` misspells its word, and a coordinator that glances at it, asks the
analyst to find the typo (the analyst reads a build log long enough to be spilled), then asks the builder
to fix it; the builder writes the file and runs it. The first reply of the main thread can be held until
the test says so (`hold`): the proof that the first progress line comes before the first model reply.
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import anyio

from flower.testing import RecordedRequest, ScriptedModel, agent, bash, reply, tool_use

GOAL = "Fix the greeting: greet() says helo"
FIXED = "def greet() -> str:\n    return 'hello'\n\n\nif __name__ == '__main__':\n    print(greet())\n"
ANSWER = (
    "Fixed: src/greet.py now returns 'hello'. The analyst found the typo at src/greet.py:2 (the build log "
    "is in the workbench's spill/); the builder changed it and `python3 src/greet.py` printed hello."
)
NEXT = "Is anything else misspelt?"
NEXT_ANSWER = "No: the analyst's search found no other misspelt word; src/greet.py:2 was the only one."
SLOW = "Run the slow check: sh check.sh, and report its last line."


def repository(root: Path) -> Path:
    """A git repository with the typo, a long build log and a slow check; returns its path."""
    repo = root / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "logs").mkdir()
    (repo / "src" / "greet.py").write_text(FIXED.replace("hello", "helo"))
    (repo / "logs" / "build.log").write_text(
        "".join(f"step {i:03d}: greet() returned 'helo' (expected 'hello')\n" for i in range(240))
    )
    (repo / "check.sh").write_text("echo checking\nsleep 600 # FLOWER-RUN-SLOW-CHECK\necho done\n")
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    for command in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-qm", "start"]):
        subprocess.run(command, cwd=repo, check=True, env={**env, "PATH": "/usr/bin:/bin"})
    return repo


class Gate:
    """Holds a reply until `open()`; `order` records when the test and the model each did their part."""

    def __init__(self) -> None:
        self._open = threading.Event()
        self.order: list[str] = []

    def open(self, why: str) -> None:
        self.order.append(why)
        self._open.set()

    def held(self, step: object) -> object:
        async def wait(request: RecordedRequest) -> object:
            await anyio.to_thread.run_sync(self._open.wait)
            self.order.append("the first reply")
            return step

        return wait


def fix_the_greeting(model: ScriptedModel, repo: Path, gate: Gate | None = None) -> None:
    """Scripts for `flower run GOAL`: a glance, two delegations (one spill), the answer; the first reply
    waits for `gate` when given."""
    first = reply("A look first.", bash("ls src logs"))
    model.script(
        "main",
        [
            gate.held(first) if gate is not None else first,
            reply(
                agent(
                    "analyst",
                    "Find where greet() misspells its word; logs/build.log shows the output. Reply with the "
                    "file and line.",
                    description="find the typo",
                )
            ),
            reply(
                agent(
                    "builder",
                    "In src/greet.py line 2, 'helo' should be 'hello'. Fix it and run python3 src/greet.py.",
                    description="fix the typo",
                )
            ),
            ANSWER,
        ],
    )
    model.script(
        "analyst",
        [
            bash("cat logs/build.log", description="read the build log"),
            bash("grep -n helo src/greet.py", description="find the word"),
            "The typo is at src/greet.py:2 ('helo'); every line of the build log shows it.",
        ],
    )
    model.script(
        "builder",
        [
            tool_use("Write", file_path=str(repo / "src" / "greet.py"), content=FIXED),
            bash("python3 src/greet.py", description="run it"),
            "Changed src/greet.py:2 to 'hello'; python3 src/greet.py printed hello.",
        ],
    )


def anything_else(model: ScriptedModel) -> None:
    """Scripts for the resumed session: one more delegation, the answer."""
    model.script(
        "main",
        [reply(agent("analyst", "Search src/ for other misspelt words.", description="search")), NEXT_ANSWER],
    )
    model.script("analyst", [bash("grep -rn helo src || true"), "None found in src/."])


def slow_check(model: ScriptedModel) -> None:
    """Scripts for a run stopped while the builder's command runs: the builder's report never comes."""
    model.script("main", [reply(agent("builder", SLOW, description="slow check"))])
    model.script("builder", [bash("sh check.sh", description="the slow check")])
