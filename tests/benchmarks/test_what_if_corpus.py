"""benchmarks/what_if_corpus.py lays a corpus of public transcripts out as the CLI keeps its history.

On transcripts written here: a checkpoint's copy of a session (its entries all in a larger file of the
same session) is left out, parts of one session that hold different entries are each kept, a subagent
beside its session (`<session>--agent-<id>.jsonl`) or below it goes under `<session>/subagents/`, and
`flower report --what-if` then counts each session once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks.what_if_corpus import Layout, lay_out
from flower.report._what_if import build_what_if_sync
from tests.stores.transcripts import Transcript


def _write(path: Path, entries: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))


def _session(prompt: str, session_id: str) -> Transcript:
    t = Transcript(session_id=session_id)
    t.prompt(prompt)
    t.assistant(t.bash("ls", f"{prompt}-1"))
    t.result(f"{prompt}-1", "a\nb\n")
    return t


def test_a_checkpoint_copy_is_left_out_and_subagents_go_below_their_session(tmp_path: Path) -> None:
    whole = _session("whole", "s-whole")
    early = list(whole.entries[:2])  # the same session as far as it had gone at a checkpoint
    whole.assistant({"type": "text", "text": "done"})
    # another part of the same session, with entries of its own
    part = [
        json.loads(json.dumps(e).replace("00000000-", "11111111-"))
        for e in _session("part", "s-whole").entries
    ]
    agent = _session("agent", "s-agent")
    corpus = tmp_path / "corpus"
    _write(corpus / "repo-a" / "0a-whole.jsonl", whole.entries)
    _write(corpus / "repo-a" / "0b-early.jsonl", early)
    _write(corpus / "repo-a" / "0c-part.jsonl", part)
    _write(corpus / "repo-b" / "s1.jsonl", _session("other", "s-other").entries)
    _write(corpus / "repo-b" / "s1--agent-x1.jsonl", agent.entries)
    _write(corpus / "repo-c" / "s1.jsonl", _session("same name", "s-same").entries)
    _write(corpus / "repo-c" / "s1" / "subagents" / "agent-y2.jsonl", agent.entries)

    laid = lay_out(corpus, tmp_path / "projects")

    assert laid == Layout(sessions=4, subagents=2, copies=1)
    project = tmp_path / "projects" / "-corpus"
    assert sorted(p.name for p in project.glob("*.jsonl")) == [
        "0a-whole.jsonl",
        "0c-part.jsonl",
        "repo-b__s1.jsonl",
        "repo-c__s1.jsonl",
    ]
    assert (project / "repo-b__s1" / "subagents" / "agent-x1.jsonl").resolve() == (
        corpus / "repo-b" / "s1--agent-x1.jsonl"
    ).resolve()
    assert (project / "repo-c__s1" / "subagents" / "agent-y2.jsonl").is_symlink()
    report = build_what_if_sync(tmp_path / "projects")
    assert len(report.sessions) == 4
    assert report.total.as_recorded.subagents == 2
