"""What `flower report --what-if` reads: files that are not transcripts, and sessions named by a prefix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from flower._cli import main
from flower.report._sources import not_a_transcript
from tests.report import what_if_history as h

COPILOT: list[
    dict[str, Any]
] = [  # the shape of another agent CLI's session log: dotted event types, no Claude entry
    {"type": "session.start", "id": "e1", "timestamp": "2026-11-29T10:00:00Z", "data": {"version": 1}},
    {"type": "user.message", "id": "e2", "parentId": "e1", "data": {"content": "hello"}},
    {"type": "assistant.message", "id": "e3", "parentId": "e2", "data": {"content": "hi"}},
]
RANDOM: list[dict[str, Any]] = [{"a": 1, "b": [1, 2]}, {"type": 3}, {"name": "x", "value": "y"}]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["report", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_what_a_transcript_is() -> None:
    assert not_a_transcript([]) is None, "an empty file is an empty session, as before"
    assert not_a_transcript([{"type": "user", "sessionId": "s", "message": {"content": "hi"}}]) is None
    assert not_a_transcript([{"type": "mode", "mode": "normal", "sessionId": "s"}]) is None
    why = not_a_transcript(COPILOT)
    assert why is not None and "3 line(s)" in why and "'session.start'" in why
    assert not_a_transcript(RANDOM) is not None
    assert not_a_transcript([{"type": "user", "message": {"content": "no session, no uuid"}}]) is not None


def test_files_that_are_not_transcripts_are_skipped_with_why_and_counted_apart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    projects = h.history(tmp_path, damaged=False)
    copilot = _write(projects / "-home-me-alpha" / "copilot-session.jsonl", COPILOT)
    noise = _write(projects / "-home-me-beta" / "events.jsonl", RANDOM)
    status, out, _ = _run(capsys, "--what-if", str(projects), "--json")
    assert status == 0
    report = json.loads(out)
    assert {s["session_id"] for s in report["sessions"]} == {h.S1, h.S2, h.S3}
    assert report["total"]["sessions"] == 3 and report["summary"].startswith("3 Claude Code session(s)")
    apart = report["not_transcripts"]
    assert len(apart) == 2 and all("not a Claude Code transcript" in why for why in apart)
    assert any(why.startswith(str(copilot)) for why in apart) and any(
        why.startswith(str(noise)) for why in apart
    )
    _, text, _ = _run(capsys, "--what-if", str(projects))
    assert "2 file(s) skipped, not Claude Code transcripts:" in text and str(copilot) in text


def test_a_directory_of_other_files_reports_no_session_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    projects = tmp_path / "projects"
    _write(projects / "-home-me-alpha" / "copilot-session.jsonl", COPILOT)
    _write(projects / "-home-me-alpha" / "events.jsonl", RANDOM)
    status, out, _ = _run(capsys, "--what-if", str(projects))
    assert status == 1
    assert "No Claude Code session was found" in out and "$0.00" not in out
    assert "2 file(s) skipped, not Claude Code transcripts:" in out
    status, out, _ = _run(capsys, "--what-if", str(projects / "-home-me-alpha" / "events.jsonl"), "--json")
    assert status == 1 and json.loads(out)["total"]["sessions"] == 0


def test_a_session_is_found_by_the_prefix_the_table_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    projects = h.history(tmp_path, damaged=False)
    status, out, _ = _run(capsys, "--what-if", str(projects), "--json", "--session", h.S2[:8])
    assert status == 0 and [s["session_id"] for s in json.loads(out)["sessions"]] == [h.S2]
    status, out, _ = _run(capsys, "--what-if", str(projects), "--json", "--session", h.S2)
    assert status == 0 and [s["session_id"] for s in json.loads(out)["sessions"]] == [h.S2]


def test_an_ambiguous_or_unknown_prefix_is_an_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    projects = h.history(tmp_path, damaged=False)
    twin = h.S2[:8] + "-9999-4999-8999-999999999999"
    shutil.copy(projects / "-home-me-alpha" / f"{h.S2}.jsonl", projects / "-home-me-alpha" / f"{twin}.jsonl")
    status, out, err = _run(capsys, "--what-if", str(projects), "--session", h.S2[:8])
    assert status == 1 and out == ""
    assert f"session '{h.S2[:8]}' is ambiguous" in err and h.S2 in err and twin in err
    status, out, _ = _run(capsys, "--what-if", str(projects), "--json", "--session", h.S2[:10])
    assert status == 0 and [s["session_id"] for s in json.loads(out)["sessions"]] == [h.S2], "one more char"
    status, out, err = _run(capsys, "--what-if", str(projects), "--session", "deadbeef")
    assert status == 1 and "no session id is or starts with 'deadbeef'" in err
    status, _, err = _run(capsys, str(projects), "--session", "deadbeef")
    assert status == 1 and "no session id is or starts with 'deadbeef'" in err, "the plain report too"


def test_inline_until_shapes_the_delegation_estimate_and_is_named_when_misplaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    projects = h.history(tmp_path, damaged=False)
    status, out, _ = _run(capsys, "--what-if", str(projects), "--inline-until", "40000")
    assert status == 0 and "(inline_until=40,000)" in " ".join(out.split())
    status, out, _ = _run(capsys, "--what-if", str(projects))
    assert status == 0 and "strict, as flower's coordinator() is by default" in " ".join(out.split())
    status, _, err = _run(capsys, "--what-if", str(projects), "--inline-until", "0")
    assert status == 1 and "--inline-until must be a positive number of tokens, got 0" in err
    status, _, err = _run(capsys, str(projects), "--inline-until", "40000")
    assert status == 1 and "--inline-until shapes the delegation estimate of --what-if" in err
