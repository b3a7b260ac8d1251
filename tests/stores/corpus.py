"""The corpus of real Claude Code transcripts: where it is, how to read it, where a resume could start.

The files are not in this repository (they belong to their publishers). They are read from the
directory `FLOWER_REAL_TRANSCRIPTS` names, else from `shared/real-transcripts` beside the repository's
root (`../shared/real-transcripts`), or beside the directory that holds it (a git worktree); tests skip
with that reason when it is absent. Used by the corpus tests and by `benchmarks/bench_corpus.py`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flower.stores._local import read_jsonl
from flower.stores.rewrite import LoadPoint, load_points

ROOT = Path(__file__).resolve().parents[2]
ENV = "FLOWER_REAL_TRANSCRIPTS"


def corpus_dir() -> Path:
    """The corpus directory (it may not exist)."""
    configured = os.environ.get(ENV)
    if configured:
        return Path(configured)
    candidates = [base / "shared" / "real-transcripts" for base in (ROOT.parent, ROOT.parent.parent)]
    return next((path for path in candidates if path.is_dir()), candidates[0])


def missing_reason() -> str | None:
    """Why the corpus cannot be read, or None when it can."""
    directory = corpus_dir()
    if not directory.is_dir() or not any(directory.glob("*.jsonl")):
        return f"the real-transcript corpus is not at {directory} (set {ENV} to its directory)"
    return None


@dataclass(frozen=True)
class Session:
    """One transcript file of the corpus."""

    name: str
    """The file name without `.jsonl`."""
    entries: list[dict[str, Any]]

    @property
    def subagent(self) -> bool:
        """A subagent's transcript (`X--agent-Y`)."""
        return "--agent-" in self.name

    @property
    def session_id(self) -> str:
        return next(str(e["sessionId"]) for e in self.entries if e.get("sessionId"))

    def resume_points(self) -> list[LoadPoint]:
        """The prompts a user could have resumed the session with (every one, as if each were a new
        process; the CLI's own slash-command and shell lines left out: nobody resumes a session with one)."""
        return [point for point in load_points(self.entries) if not point.command]


def load(name: str) -> Session:
    """One file of the corpus, by name (without `.jsonl`)."""
    return Session(name, read_jsonl(corpus_dir() / f"{name}.jsonl"))


def sessions() -> list[Session]:
    """Every file of the corpus, by name."""
    return [load(path.stem) for path in sorted(corpus_dir().glob("*.jsonl"))]
