"""A directory of public transcripts laid out as the CLI keeps its history, for `flower report --what-if`.

A corpus of transcripts copied from public repositories is not a projects directory: its subagents may
sit beside their session (`<session>--agent-<id>.jsonl`) rather than below it, and a repository that
keeps checkpoints of its sessions holds the same session several times, each copy the session as far as
it had gone. `lay_out` links (never copies) every session into `<into>/-corpus/`, its subagents under
`<session>/subagents/`, and leaves out a **checkpoint copy**: a main transcript whose entries (by
`uuid`) are all in a larger transcript of the same session, which the report would otherwise count
twice. Transcripts of one session that hold different entries (parts kept apart) are each kept, as
sessions of their own.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from flower.stores._local import read_jsonl  # noqa: E402
from tests.stores import corpus  # noqa: E402


@dataclass(frozen=True, kw_only=True)
class Layout:
    """What `lay_out` linked and left out."""

    sessions: int
    """Main transcripts linked."""
    subagents: int
    """Subagent transcripts linked beside them."""
    copies: int
    """Main transcripts left out as checkpoint copies of a larger one."""


def _identity(path: Path) -> tuple[str, frozenset[str]]:
    """(the session id, the entries' uuids) of a transcript, read as the stores read one (and not kept:
    a corpus's entries do not all fit in memory)."""
    entries = read_jsonl(path)
    session = next((str(e["sessionId"]) for e in entries if e.get("sessionId")), path.stem)
    return session, frozenset(e["uuid"] for e in entries if isinstance(e.get("uuid"), str))


def lay_out(directory: Path, into: Path) -> Layout:
    """Link `directory`'s transcripts into `into/-corpus/` as the CLI keeps them (see the module)."""
    mains = [t for t in corpus.transcripts(directory) if not t.subagent]
    held: dict[str, list[tuple[corpus.Transcript, frozenset[str]]]] = defaultdict(list)
    for transcript in mains:
        session, uuids = _identity(transcript.path)
        held[session].append((transcript, uuids))
    project = into / "-corpus"
    project.mkdir(parents=True, exist_ok=True)
    stems = [t.path.stem for t in mains]
    sessions = subagents = copies = 0
    for copies_of_one in held.values():
        for transcript, uuids in copies_of_one:
            if any(
                other is not transcript
                and uuids <= more
                and (len(uuids) < len(more) or other.name < transcript.name)
                for other, more in copies_of_one
            ):
                copies += 1
                continue
            # the file's own name, which the report shows, unless another directory holds the same one
            stem = transcript.path.stem
            stem = stem if stems.count(stem) == 1 else transcript.name.replace("/", "__")
            (project / f"{stem}.jsonl").symlink_to(transcript.path.resolve())
            sessions += 1
            for agent in transcript.agents:
                target = project / stem / f"{agent.subpath}.jsonl"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.symlink_to(agent.path.resolve())
                subagents += 1
    return Layout(sessions=sessions, subagents=subagents, copies=copies)
