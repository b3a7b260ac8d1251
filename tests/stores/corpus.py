"""A corpus of Claude Code transcripts: where it is, how to read it, where a resume could start.

The corpus tests run on any directory of transcripts. Which one, first found:

1. `pytest --corpus DIR`, else the environment's `FLOWER_CORPUS` (or its older name
   `FLOWER_REAL_TRANSCRIPTS`);
2. the real transcripts kept beside the repository (`shared/real-transcripts` next to its root, or next
   to the directory that holds it, for a git worktree): they belong to their publishers and are not in it;
3. the sample shipped with the tests (`tests/stores/data/corpus`, synthetic sessions built from the
   shapes of real ones: `sample_corpus.py`), so that the corpus tests run wherever the tests do.

The benchmarks read real transcripts only (`real_dir`). In a directory, every `*.jsonl` file below it
whose first line is an entry (a JSON object with a `type`) is a transcript; another tool's JSONL file
(a prompt history, a log of another CLI) is passed over. A subagent's transcript sits where the CLI
puts it (`<session>/subagents/agent-<id>.jsonl` beside `<session>.jsonl`) or beside the main one as
`<session>--agent-<id>.jsonl` (how the SDK's `subagents/agent-<id>` subpath flattens); any other file
is a main transcript. Nothing else of a file's name, and no count of files, is assumed.
"""

from __future__ import annotations

import functools
import json
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from claude_agent_sdk import SessionKey, SessionStore

from flower.stores._local import read_jsonl
from flower.stores._rewrite import LoadPoint, load_points

ROOT = Path(__file__).resolve().parents[2]
ENV = "FLOWER_CORPUS"
OLD_ENV = "FLOWER_REAL_TRANSCRIPTS"
SAMPLE = Path(__file__).resolve().parent / "data" / "corpus"
"""The shipped sample: synthetic sessions shaped like real ones (`tests/stores/sample_corpus.py`)."""
_AGENT = "--agent-"

_chosen: Path | None = None  # set by `pytest --corpus DIR` (tests/conftest.py)


def choose(directory: str | os.PathLike[str] | None) -> None:
    """Use `directory` as the corpus (the `--corpus` option); None: the default order."""
    global _chosen
    _chosen = Path(directory).expanduser().resolve() if directory else None


def named_dir() -> Path | None:
    """The directory the option or the environment names, if any."""
    if _chosen is not None:
        return _chosen
    configured = os.environ.get(ENV) or os.environ.get(OLD_ENV)
    return Path(configured).expanduser() if configured else None


def real_dir() -> Path:
    """The real transcripts: the named directory, else the shared corpus beside the repository (it may
    not exist: see `missing_reason`)."""
    named = named_dir()
    if named is not None:
        return named
    candidates = [base / "shared" / "real-transcripts" for base in (ROOT.parent, ROOT.parent.parent)]
    return next((path for path in candidates if path.is_dir()), candidates[0])


def corpus_dir() -> Path:
    """The corpus the tests read: the named directory, else the real transcripts when present, else the
    shipped sample."""
    named = named_dir()
    if named is not None:
        return named
    real = real_dir()
    return real if _holds_transcripts(real) else SAMPLE


def _holds_transcripts(directory: Path) -> bool:
    return directory.is_dir() and any(is_transcript(path) for path in directory.rglob("*.jsonl"))


@functools.cache
def is_transcript(path: Path) -> bool:
    """Whether the file's first line is a transcript entry (a JSON object with a `type`); a first line
    too long to read whole is taken for one."""
    with path.open("rb") as handle:
        line = handle.readline(1 << 22)
    if not line.endswith(b"\n") and len(line) == 1 << 22:
        return True
    try:
        entry = json.loads(line)
    except ValueError:
        return False
    return isinstance(entry, dict) and isinstance(entry.get("type"), str)


def missing_reason(directory: Path | None = None) -> str | None:
    """Why the corpus (or `directory`) cannot be read, or None when it can."""
    directory = directory if directory is not None else corpus_dir()
    if not _holds_transcripts(directory):
        return f"no transcripts (*.jsonl) under {directory} (set --corpus DIR or {ENV})"
    return None


def _main_of(path: Path, root: Path) -> Path | None:
    """The main transcript a subagent transcript belongs to, or None for a main transcript."""
    if _AGENT in path.stem:
        return path.with_name(path.stem.split(_AGENT, 1)[0] + ".jsonl")
    if path.parent.name == "subagents" and path.stem.startswith("agent-") and path.parent.parent != root:
        return path.parent.parent.with_suffix(".jsonl")
    return None


@dataclass(frozen=True)
class Transcript:
    """One file of the corpus: a main transcript, or one of its subagents'."""

    path: Path
    name: str
    """The path below the corpus directory, without `.jsonl` (unique in the corpus)."""
    subpath: str | None = None
    """`subagents/agent-<id>` for a subagent's transcript, as the SDK keys it; None for a main one."""
    agents: tuple[Transcript, ...] = field(default=(), compare=False)
    """A main transcript's subagents."""

    @cached_property
    def entries(self) -> list[dict[str, Any]]:
        """Every entry, read as the stores read a CLI transcript (`read_jsonl`)."""
        return read_jsonl(self.path)

    @property
    def subagent(self) -> bool:
        """A subagent's transcript."""
        return self.subpath is not None

    @property
    def size(self) -> int:
        """Bytes on disk."""
        return self.path.stat().st_size

    @property
    def session_id(self) -> str:
        """The session id its entries carry (the file's name when none does)."""
        return next((str(e["sessionId"]) for e in self.entries if e.get("sessionId")), self.name)

    def resume_points(self) -> list[LoadPoint]:
        """The prompts a user could have resumed the session with (every one, as if each were a new
        process; the CLI's own slash-command and shell lines left out: nobody resumes a session with one)."""
        return [point for point in load_points(self.entries) if not point.command]


def transcripts(directory: Path | None = None) -> list[Transcript]:
    """Every transcript of the corpus, main ones with their subagents attached, subagents after them."""
    root = directory if directory is not None else corpus_dir()
    paths = sorted(path for path in root.rglob("*.jsonl") if is_transcript(path))
    agents: dict[Path, list[Transcript]] = {}
    for path in paths:
        main = _main_of(path, root)
        if main is not None:
            agent = path.stem.split(_AGENT, 1)[1] if _AGENT in path.stem else path.stem.removeprefix("agent-")
            name = str(path.relative_to(root).with_suffix(""))
            agents.setdefault(main, []).append(Transcript(path, name, f"subagents/agent-{agent}"))
    mains = [
        Transcript(path, str(path.relative_to(root).with_suffix("")), None, tuple(agents.pop(path, ())))
        for path in paths
        if _main_of(path, root) is None
    ]
    alone = [agent for orphans in agents.values() for agent in orphans]  # their main file is missing
    return mains + [agent for main in mains for agent in main.agents] + alone


def names(*, subagents: bool = True) -> list[str]:
    """The names of the corpus's transcripts (for parametrising)."""
    return [t.name for t in transcripts() if subagents or not t.subagent]


def load(name: str) -> Transcript:
    """One transcript of the corpus, by name."""
    return next(t for t in transcripts() if t.name == name)


def sessions(*, subagents: bool = True, directory: Path | None = None) -> Iterator[Transcript]:
    """Every transcript, read one at a time (a large corpus does not fit in memory at once)."""
    for transcript in transcripts(directory):
        if subagents or not transcript.subagent:
            yield Transcript(transcript.path, transcript.name, transcript.subpath, transcript.agents)


def unique_ids() -> dict[str, str]:
    """Main transcript name -> a session id to key it by in one store: its own, unless another file of
    the corpus has the same one (copies of one session taken at different times), then suffixed."""
    mains = [t for t in transcripts() if not t.subagent]
    seen: Counter[str] = Counter()
    ids: dict[str, str] = {}
    for main in mains:
        sid = main.session_id
        seen[sid] += 1
        ids[main.name] = sid if seen[sid] == 1 else f"{sid}~{seen[sid]}"
    return ids


async def into_store(
    main: Transcript, store: SessionStore, project_key: str, session_id: str | None = None
) -> SessionKey:
    """The main transcript and its subagents' in `store`, keyed as the SDK keys them."""
    key: SessionKey = {"project_key": project_key, "session_id": session_id or main.session_id}
    await store.append(key, main.entries)  # type: ignore[arg-type]
    for agent in main.agents:
        await store.append({**key, "subpath": agent.subpath or ""}, agent.entries)  # type: ignore[arg-type]
    return key


def marked_as_resumes(
    entries: list[dict[str, Any]], prompts: Iterable[int]
) -> tuple[list[dict[str, Any]], dict[int, int]]:
    """The history with each of these prompts marked as the start of a resumed process, the way a CLI
    with a SessionStart hook marks one (a `SessionStart:resume` hook entry before it), and where each
    old index went: what a history would hold had each of them been a resume (taking an unmarked prompt
    for one, in a history whose CLI marks resumes, would contradict the history)."""
    out: list[dict[str, Any]] = []
    moved: dict[int, int] = {}
    wanted = set(prompts)
    hook = {"hookEvent": "SessionStart", "hookName": "SessionStart:resume", "command": "setup.sh"}
    for index, entry in enumerate(entries):
        if index in wanted:
            out.append({"type": "attachment", "attachment": {"type": "hook_success", **hook}})
        moved[index] = len(out)
        out.append(entry)
    moved[len(entries)] = len(out)
    return out, moved
