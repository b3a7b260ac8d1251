"""Reconciliation's file side: which local files a session has, a subagent's sidecar, where a run's
transcript is (its config directory, or the newest of the SDK's resumed copies), and removing those."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

from flower.stores._outbox.reconcile import (
    as_entries,
    find_transcript,
    local_entries,
    metadata,
    remove_resume_dirs,
    transcript_files,
)

KEY = {"project_key": "p", "session_id": "S"}


def lines(path: Path, *entries: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


def test_a_sessions_files_are_its_transcript_then_each_subagents(tmp_path: Path) -> None:
    main = lines(tmp_path / "S.jsonl", {"type": "user", "uuid": "m1"}, {"type": "user", "uuid": "m2"})
    b = lines(tmp_path / "S" / "subagents" / "agent-b.jsonl", {"type": "user", "uuid": "b1"})
    a = lines(tmp_path / "S" / "subagents" / "deep" / "agent-a.jsonl", {"type": "user", "uuid": "a1"})
    assert list(transcript_files(main, KEY)) == [  # type: ignore[arg-type]
        (main, KEY),
        (b, {**KEY, "subpath": "subagents/agent-b"}),
        (a, {**KEY, "subpath": "subagents/deep/agent-a"}),
    ]
    found = local_entries(main, KEY, {"": 1, "subagents/agent-b": 1})  # type: ignore[arg-type]
    assert [(key.get("subpath"), [e["uuid"] for e in entries]) for key, _, entries in found] == [
        (None, ["m2"]),
        ("subagents/agent-b", []),
        ("subagents/deep/agent-a", ["a1"]),
    ]
    alone = lines(tmp_path / "T.jsonl", {"type": "user", "uuid": "t"})
    assert list(transcript_files(alone, KEY)) == [(alone, KEY)]  # type: ignore[arg-type]
    entries = [{"type": "user"}]
    assert as_entries(entries) is entries  # type: ignore[arg-type]


def test_a_subagents_sidecar_is_added_when_the_store_lacks_it(tmp_path: Path) -> None:
    path = lines(tmp_path / "agent-a.jsonl", {"type": "user"})
    assert metadata(path, []) is None  # no sidecar
    sidecar = tmp_path / "agent-a.meta.json"
    sidecar.write_text(json.dumps({"agentType": "writer"}))
    wanted = {"agentType": "writer", "type": "agent_metadata"}
    assert metadata(path, []) == wanted
    assert metadata(path, [{"type": "user"}, wanted]) is None
    assert metadata(path, [wanted, {"type": "agent_metadata", "agentType": "old"}]) == wanted  # the last
    sidecar.write_text("[1, 2]")
    assert metadata(path, []) is None
    sidecar.write_text("{not json")
    assert metadata(path, []) is None


@pytest.fixture
def temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "tmp"
    directory.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    return directory


def test_a_runs_transcript_is_found_in_its_config_or_the_newest_resumed_copy(
    tmp_path: Path, temp: Path
) -> None:
    config = tmp_path / "config"
    mine = lines(config / "projects" / "-ws" / "S.jsonl", {"type": "user"})
    lines(config / "projects" / "-ws" / "other.jsonl", {"type": "user"})
    assert find_transcript("S", str(config), False) == mine
    assert find_transcript("X", str(config), False) is None
    older = lines(temp / "claude-resume-1" / "projects" / "-ws" / "S.jsonl", {"type": "user"})
    newer = lines(temp / "claude-resume-2" / "projects" / "-ws" / "S.jsonl", {"type": "user"})
    lines(temp / "claude-resume-3" / "projects" / "-ws" / "other.jsonl", {"type": "user"})
    lines(temp / "not-a-resume" / "projects" / "-ws" / "S.jsonl", {"type": "user"})
    (temp / "claude-resume-file").write_text("a file, not a directory")
    os.utime(temp / "claude-resume-1", (1_000, 1_000))
    os.utime(temp / "claude-resume-2", (2_000, 2_000))
    assert find_transcript("S", str(config), True) == newer
    assert sorted(remove_resume_dirs("S")) == sorted(
        [str(temp / "claude-resume-1"), str(temp / "claude-resume-2")]
    )
    assert not older.exists() and not newer.exists() and (temp / "claude-resume-3").exists()
    assert (temp / "not-a-resume").exists() and find_transcript("S", str(config), True) is None


def test_resumed_copies_are_found_among_any_number_of_other_names(temp: Path) -> None:
    for n in range(100):  # before and after it: whatever order the directory lists them in
        (temp / f"other-{n:03d}").write_text("")
    copy = lines(temp / "claude-resume-9" / "projects" / "-ws" / "S.jsonl", {"type": "user"})
    for n in range(100, 200):
        (temp / f"other-{n:03d}").write_text("")
    assert find_transcript("S", "/nowhere", True) == copy


@pytest.mark.skipif(os.getuid() != 0, reason="handing a directory to another user takes root")
def test_a_resumed_copy_of_another_user_is_left_alone(temp: Path) -> None:
    theirs = lines(temp / "claude-resume-1" / "projects" / "-ws" / "S.jsonl", {"type": "user"})
    for path in (temp / "claude-resume-1", *(temp / "claude-resume-1").rglob("*")):
        os.chown(path, 65534, 65534)
    assert find_transcript("S", "/nowhere", True) is None and remove_resume_dirs("S") == []
    assert theirs.exists()
