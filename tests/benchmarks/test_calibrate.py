"""The realistic player's constants are what benchmarks/calibrate.py measures on the real transcripts.

The constants were measured on one corpus of real transcripts (`CALIBRATED_ON`: the digest of its files'
contents), which is not part of the repository. The tests that compare them run where that corpus is
the one `tests/stores/corpus.py` finds (`--corpus DIR`, `FLOWER_CORPUS`, or beside the repository);
on any other corpus (the shipped sample included) the calibration tool is checked against a count of
its own.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.calibrate import Calibration, measure, measure_file
from benchmarks.suite import realistic
from tests.stores import corpus

CALIBRATED_ON = "07a25846c4193bb60b6cb382e58ddd6db9b43b508d4255149cdc06f04dd01889"
"""SHA-256 over the sorted SHA-256 digests of the calibration corpus's files (18 real transcripts)."""


def digest(directory: Path) -> str:
    files = sorted(hashlib.sha256(p.read_bytes()).hexdigest() for p in directory.rglob("*.jsonl"))
    return hashlib.sha256("\n".join(files).encode()).hexdigest()


CORPUS = corpus.corpus_dir()
calibration_corpus = pytest.mark.skipif(
    digest(CORPUS) != CALIBRATED_ON,
    reason=f"the player was calibrated on another corpus than {CORPUS} (CALIBRATED_ON)",
)


def test_the_tool_counts_the_calls_of_any_corpus() -> None:
    """On whatever corpus the tests read: the Bash and Read calls the tool counts are the transcripts'."""
    paths = [t.path for t in corpus.transcripts()]
    found = measure(paths)
    bash = reads = 0
    for path in paths:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            message = entry.get("message") if isinstance(entry, dict) else None
            if not isinstance(message, dict) or entry.get("type") != "assistant":
                continue
            for block in message.get("content") if isinstance(message.get("content"), list) else ():
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    bash += block.get("name") == "Bash"
                    reads += block.get("name") == "Read"
    assert (found.files, found.bash, found.reads) == (len(paths), bash, reads)
    assert all(0.0 <= value <= 1.0 for key, value in found.figures().items() if key.endswith("_share"))


@calibration_corpus
def test_the_players_figures_are_the_corpus_figures() -> None:
    figures = measure(CORPUS.glob("*.jsonl")).figures()
    assert figures["bash_piped_share"] == pytest.approx(realistic.PIPE_SHARE, abs=0.001)
    shares = dict(realistic.PIPES)
    for kind in ("tail", "head", "grep"):
        assert figures[f"pipe_{kind}_share"] == pytest.approx(shares[kind], abs=0.001)
    assert figures["read_whole_share"] == pytest.approx(realistic.WHOLE_READ_SHARE, abs=0.001)
    assert figures["lookup_read_share"] == pytest.approx(realistic.LOOKUP_READ_SHARE, abs=0.001)
    calls = dict(realistic.RETRIEVAL_CALLS)
    assert figures["retrieval_one_call_share"] == pytest.approx(calls[1], abs=0.001)
    assert figures["retrieval_two_calls_share"] == pytest.approx(calls[2], abs=0.001)
    assert figures["retrieval_three_plus_share"] == pytest.approx(calls[3], abs=0.001)
    assert figures["thinking_present_share"] == pytest.approx(realistic.THINKING[0], abs=0.001)
    assert (figures["thinking_chars_median"], figures["thinking_chars_p90"]) == pytest.approx(
        realistic.THINKING[1:], abs=1
    )
    assert figures["text_present_share"] == pytest.approx(realistic.TEXT[0], abs=0.001)
    assert (figures["text_chars_median"], figures["text_chars_p90"]) == pytest.approx(
        realistic.TEXT[1:], abs=1
    )
    assert figures["refused_retried_share"] == 0.0


def test_one_transcript_adds_its_calls(tmp_path: Path) -> None:
    line = (
        '{"type": "assistant", "message": {"id": "m1", "usage": {"output_tokens": 40}, "content": ['
        '{"type": "thinking", "thinking": "hmm"}, {"type": "tool_use", "id": "t1", "name": "Bash", '
        '"input": {"command": "pytest | tail -n 5"}}, {"type": "tool_use", "id": "t2", "name": "Read", '
        '"input": {"file_path": "/a"}}]}}\n'
    )
    path = tmp_path / "one.jsonl"
    path.write_text(line)
    found = Calibration()
    measure_file(path, found)
    assert (found.bash, found.bash_piped, found.reads, found.reads_whole) == (1, 1, 1, 1)
    assert found.output_tokens == [40] and found.thinking == [3] and found.retrievals == [1]


@calibration_corpus
def test_the_clocks_tables_are_the_corpus_timings() -> None:
    from benchmarks import calibrate_time
    from benchmarks.suite import timing

    found = calibrate_time.measure(CORPUS)
    assert calibrate_time.clock_tables(found) == timing.TABLES
    shapes = calibrate_time.figures(found)
    assert shapes["request_duration"]["main"]["median"] == pytest.approx(5.5, abs=0.1)
    assert shapes["report_chars"]["median"] == pytest.approx(9_002)
    assert shapes["subagent_runs"]["n"] == 11 and shapes["subagent_runs"]["max"] == pytest.approx(99.3)


@calibration_corpus
def test_the_clock_draws_tool_times_only_from_calls_no_person_approved() -> None:
    from benchmarks import calibrate_time

    found = calibrate_time.measure(CORPUS)
    # two sessions in bypassPermissions, one run headless by a test harness, and every subagent's calls
    assert set(found.sources) == {"sp-fa812bfe.jsonl", "sp-short.jsonl", "drm-rust-port.jsonl", "(subagents)"}
    tables = calibrate_time.figures(found)["tool_tables"]
    everyone, unattended = tables["all sessions"], tables["unattended (prices the suite)"]
    assert unattended["Bash"]["n"] < everyone["Bash"]["n"]
    assert unattended["Bash"]["p95"] < everyone["Bash"]["p95"] / 2  # a person's approvals are the tail
    assert unattended["Bash"]["over_5_min"] == 0 < everyone["Bash"]["over_5_min"]


def prompt_and_call(mode: str, ident: str, prompt: str, called: str, answered: str) -> list[dict[str, Any]]:
    """A prompt in permission `mode`, then one Bash call and its result (times of one day)."""
    day = prompt.split("T")[0]
    use = {"type": "tool_use", "id": ident, "name": "Bash", "input": {"command": "chmod +x a"}}
    result = {"type": "tool_result", "tool_use_id": ident, "content": "ok"}
    return [
        {"type": "user", "permissionMode": mode, "timestamp": f"{prompt}Z", "message": {"content": "go"}},
        {"type": "assistant", "timestamp": f"{day}T{called}Z", "message": {"id": ident, "content": [use]}},
        {"type": "user", "timestamp": f"{day}T{answered}Z", "message": {"content": [result]}},
    ]


def test_a_session_names_its_permission_mode_or_runs_headless(tmp_path: Path) -> None:
    from benchmarks import calibrate_time

    interactive = [{"type": "file-history-snapshot"}, {"type": "user", "message": {"content": "go"}}]
    assert not calibrate_time.headless(interactive)
    assert calibrate_time.headless([{"type": "queue-operation"}, {"type": "user"}])
    assert not calibrate_time.headless([{"type": "user", "permissionMode": "default"}])
    lines = [
        *prompt_and_call("default", "t1", "2026-01-01T00:00:00", "00:00:05", "00:02:05"),
        *prompt_and_call("bypassPermissions", "t2", "2026-01-01T00:03:00", "00:03:04", "00:03:05"),
    ]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    found = calibrate_time.measure(tmp_path)
    assert found.tools["Bash"] == [120.0, 1.0]  # the first call waited on a person's approval
    assert found.unattended["Bash"] == [1.0] and dict(found.sources) == {"s.jsonl": 1}
