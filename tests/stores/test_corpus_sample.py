"""The corpus sample shipped with the tests: what `sample_corpus.py` writes, holding every structure the
corpus tests look for, so that none of them runs on nothing where the sample is the corpus (CI)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flower.stores._rewrite import (
    CLI_ORPHAN_NOTE,
    OLD_INTERRUPTS,
    heal_orphans,
    is_command,
    load_points,
    replayed,
    session_start,
)

from . import corpus, sample_corpus
from .oracle import blocks, calls, on_branch, refusals, replies


def test_the_shipped_sample_is_what_the_generator_writes(tmp_path: Path) -> None:
    written = sample_corpus.write(tmp_path)
    shipped = sorted(corpus.SAMPLE.rglob("*.jsonl"))
    assert [p.relative_to(tmp_path) for p in written] == [p.relative_to(corpus.SAMPLE) for p in shipped]
    for new, old in zip(written, shipped, strict=True):
        assert new.read_bytes() == old.read_bytes(), f"{old.name}: run `python -m tests.stores.sample_corpus`"
    assert sum(p.stat().st_size for p in shipped) < 400_000, "a sample, not a corpus"


def _texts(entries: list[dict[str, Any]]) -> list[str]:
    return [str(b.get("content")) for e in entries for b in blocks(e) if b.get("type") == "tool_result"]


def test_the_sample_holds_every_structure_the_corpus_tests_look_for() -> None:
    mains = [t for t in corpus.transcripts(corpus.SAMPLE) if not t.subagent]
    agents = [a for t in mains for a in t.agents]
    every = [e for t in mains for e in t.entries]
    found = {
        "a compaction": any(e.get("subtype") == "compact_boundary" for e in every),
        "the compaction worker": any(
            (a.subpath or "").startswith("subagents/agent-acompact") for a in agents
        ),
        "a subagent in the CLI's layout": any("/subagents/" in a.name for a in agents),
        "a subagent beside its session": any("--agent-" in a.name for a in agents),
        "two entries on one line": any(
            line.count('"sessionId"') > 1
            for p in corpus.SAMPLE.rglob("*.jsonl")
            for line in p.read_text(encoding="utf-8").splitlines()
        ),
        "startup hooks": any(session_start(e) == "startup" for e in every),
        "a resume marked by its hook": any(session_start(e) == "resume" for e in every),
        "a hook attachment": any(e.get("type") == "attachment" and session_start(e) for e in every),
        "a mode line (no mark)": any(e.get("type") == "mode" for e in every),
        "a warm resume the CLI marked": any(
            p.marked and not p.cold for t in mains for p in load_points(t.entries)
        ),
        "a cold resume the CLI marked": any(
            p.marked and p.cold for t in mains for p in load_points(t.entries)
        ),
        "an idle day in one process": any(
            (p.idle or 0) > 40_000 and not p.marked and p.marking
            for t in mains
            for p in load_points(t.entries)
        ),
        "an API error": any(e.get("isApiErrorMessage") for e in every),
        "an orphan call": any(heal_orphans(t.entries).changes for t in mains),
        "a /clear": any(session_start(e) == "clear" for e in every),
        "a slash command and a ! line": sum(is_command(e) for e in every if e.get("type") == "user") >= 3,
        "a rewind": any(
            len(on_branch(t.entries)) < len([e for e in t.entries if e.get("uuid")]) for t in mains
        ),
        "mid-stream output counts": any(not r.stopped for t in mains for r in replies(t.entries)),
        "the 1-hour cache": any(r.written_1h for t in mains for r in replies(t.entries)),
        "both old interrupt sentences": all(
            any(s in _texts(t.entries) for t in mains) for s in OLD_INTERRUPTS
        ),
        "a refused permission prompt": any(
            "permissionDecision" in e and e.get("toolDenialKind") == "user-rejected" for e in every
        ),
        "old and new rule refusals": {
            "toolDenialKind" in e
            for t in mains
            for e in t.entries
            if e.get("type") == "user" and refusals([e], calls(t.entries))["refused"]
        }
        == {True, False},
        "a file read again": any(
            sum(1 for b in calls(t.entries).values() if b.get("name") == "Read") >= 2 for t in mains
        ),
        "a Task whose worker left no transcript": any("5e1f0a2" in json.dumps(t.entries) for t in mains),
    }
    assert [name for name, present in found.items() if not present] == []
    assert CLI_ORPHAN_NOTE not in json.dumps([t.entries for t in mains]), "made up here, never copied"
    assert all(replayed(t.entries) for t in mains)


def test_without_a_real_corpus_the_tests_read_the_sample(tmp_path: Path, monkeypatch: Any) -> None:
    """Nothing named and no real transcripts beside the checkout (a CI clone): the sample. A directory
    named on the command line or in the environment wins; a JSONL file of another tool is passed over."""
    monkeypatch.setattr(corpus, "_chosen", None)
    monkeypatch.delenv(corpus.ENV, raising=False)
    monkeypatch.delenv(corpus.OLD_ENV, raising=False)
    monkeypatch.setattr(corpus, "ROOT", tmp_path / "work" / "checkout")
    assert corpus.corpus_dir() == corpus.SAMPLE and corpus.missing_reason() is None
    mine = tmp_path / "mine"
    (mine / "s" / "subagents").mkdir(parents=True)
    (mine / "s.jsonl").write_text('{"type": "user", "sessionId": "s1"}\n')
    (mine / "s" / "subagents" / "agent-a1.jsonl").write_text('{"type": "user", "isSidechain": true}\n')
    (mine / "history.jsonl").write_text('{"display": "hi", "project": "/p"}\n')
    monkeypatch.setenv(corpus.ENV, str(mine))
    assert corpus.corpus_dir() == mine
    (main,) = [t for t in corpus.transcripts() if not t.subagent]
    assert (main.name, main.session_id, [a.subpath for a in main.agents]) == (
        "s",
        "s1",
        ["subagents/agent-a1"],
    )
    assert [t.name for t in corpus.transcripts()] == ["s", "s/subagents/agent-a1"]
