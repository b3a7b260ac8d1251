"""The transcript docs/run.md shows, from a real run: `python -m tests.terminal.transcript` prints it.

It runs the tests' scenario (`tests.terminal.scenario`) through the real CLI and flower's scripted model,
in a pseudo-terminal: `flower run GOAL`, `flower sessions`, then `flower run --resume`. The terminal's
control codes are removed and the temp directory is shown as `~/greet`; nothing else is changed.
`normalised()` is what a test compares with the page: ids, numbers and times masked.
"""

from __future__ import annotations

import re
import shlex
import tempfile
from pathlib import Path

from flower._terminal import SCRIPTED_MODEL_ENV
from flower.testing import ScriptedModel
from tests.terminal import scenario
from tests.terminal.terminal import Terminal, environment, piped, plain

SHOWN_AS = "~/greet"


def _shown(text: str, repo: Path) -> str:
    text = plain(text).replace("\x1b[?25h", "")
    return text.replace(str(repo.resolve()), SHOWN_AS).replace(str(repo), SHOWN_AS)


def capture() -> str:
    """Run the scenario and return what the terminal showed, each command after a `$ ` line."""
    parts = []
    with tempfile.TemporaryDirectory(prefix="flower-transcript-") as root:
        repo = scenario.repository(Path(root))
        with ScriptedModel() as model:
            env = environment({SCRIPTED_MODEL_ENV: model.base_url})
            scenario.fix_the_greeting(model, repo)
            first = Terminal(["run", scenario.GOAL], cwd=repo, env=env)
            first.finish()
            parts.append(f"$ flower run {shlex.quote(scenario.GOAL)}\n{_shown(first.text, repo)}")
            session_id = next(
                line.split()[1] for line in plain(first.text).splitlines() if line.startswith("session  ")
            )
            listed = piped(["sessions"], cwd=repo, env=env)
            parts.append(f"$ flower sessions\n{_shown(listed.stdout, repo)}")
            scenario.anything_else(model)
            again = Terminal(["run", "--resume", session_id[:8], scenario.NEXT], cwd=repo, env=env)
            again.finish()
            command = f"flower run --resume {session_id[:8]} {shlex.quote(scenario.NEXT)}"
            parts.append(f"$ {command}\n{_shown(again.text, repo)}")
    return "\n".join(part.rstrip("\n") + "\n" for part in parts)


def normalised(text: str) -> list[str]:
    """`text`'s lines with session ids, numbers and times masked (what a rerun keeps)."""
    text = re.sub(r"\b[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}\b", "<id>", text)
    text = re.sub(r"--resume [0-9a-f]{8}\b", "--resume <id>", text)
    text = re.sub(r"[0-9a-f]{16}-bash\.txt", "<file>", text)
    text = re.sub(r"\d[\d,.:-]*", "<n>", text)
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def page_transcript(page: Path) -> str:
    """The transcript block of docs/run.md (the first ```text block after the transcript heading)."""
    text = page.read_text(encoding="utf-8")
    found = re.search(r"## A run, as the terminal shows it.*?```text\n(.*?)```", text, re.S)
    assert found is not None, f"{page}: no transcript block"
    return found.group(1)


if __name__ == "__main__":
    print(capture(), end="")
