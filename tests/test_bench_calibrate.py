"""The realistic player's constants are what benchmarks/calibrate.py measures on the real transcripts.

The transcripts are not part of the repository: set FLOWER_REAL_TRANSCRIPTS to their directory, or keep
them in a `shared/real-transcripts/` directory next to (or above) the checkout; the test skips otherwise.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks.calibrate import Calibration, measure, measure_file
from benchmarks.suite import realistic


def _corpus() -> Path | None:
    named = os.environ.get("FLOWER_REAL_TRANSCRIPTS")
    if named:
        return Path(named)
    here = Path(__file__).resolve().parent
    for parent in here.parents:
        candidate = parent / "shared" / "real-transcripts"
        if candidate.is_dir():
            return candidate
    return None


CORPUS = _corpus()
pytestmark = pytest.mark.skipif(
    CORPUS is None or not any(CORPUS.glob("*.jsonl")),
    reason="no real transcripts (set FLOWER_REAL_TRANSCRIPTS to a directory of CLI transcripts)",
)


def test_the_players_figures_are_the_corpus_figures() -> None:
    assert CORPUS is not None
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


def test_the_clocks_tables_are_the_corpus_timings() -> None:
    from benchmarks import calibrate_time
    from benchmarks.suite import timing

    assert CORPUS is not None
    found = calibrate_time.measure(CORPUS)
    assert calibrate_time.clock_tables(found) == timing.TABLES
    shapes = calibrate_time.figures(found)
    assert shapes["request_duration"]["main"]["median"] == pytest.approx(5.5, abs=0.1)
    assert shapes["report_chars"]["median"] == pytest.approx(9_002)
    assert shapes["subagent_runs"]["n"] == 11 and shapes["subagent_runs"]["max"] == pytest.approx(99.3)
