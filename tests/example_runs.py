"""What an example prints when it starts, checked the same way for each example."""

from __future__ import annotations

from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def assert_says_what_starts(name: str, stderr: str) -> None:
    """The first line on stderr, printed before any work, is what the example runs (its docstring's first
    line); a silent stretch of the run would add `... still running` lines (flower._progress.Heartbeat)."""
    summary = (EXAMPLES / name).read_text(encoding="utf-8").split('"""')[1].splitlines()[0]
    assert stderr.splitlines()[:1] == [f"{name}: {summary}"], stderr
