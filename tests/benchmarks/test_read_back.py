"""benchmarks/calibrate_read_back.py counts what the read-back figures of `flower.report._measured` rest on.

On transcripts written here (the shapes of the CLI's `<persisted-output>` results, a copy of one session
in a second file, a subagent inlined in progress entries), its counts are checked against what was
written. Where the calibration corpora are named (`FLOWER_READ_BACK_CORPORA`, directories separated by
the path separator; they are not part of the repository), the figures are checked against the constants.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from benchmarks.calibrate_read_back import figures, measure, wilson
from flower.report import _measured as measured
from tests.stores.transcripts import Transcript


def _persisted(path: str, chars: int) -> str:
    return (
        f"<persisted-output>\nOutput too large ({chars / 1024:.1f}KB). Full output saved to: {path}\n\n"
        "Preview (first 2KB):\n" + "x" * 2_000 + "\n...\n</persisted-output>"
    )


def _session() -> Transcript:
    t = Transcript()
    t.prompt("Look at the logs.")
    t.assistant(t.bash("cat big.log", "p1"))
    whole = "line\n" * 8_000  # 40,000 characters
    entry = t.result("p1", _persisted("/home/me/.claude/tool-results/p1.txt", len(whole)))
    entry["toolUseResult"] = {"stdout": whole, "stderr": ""}
    t.assistant(t.call("Read", {"file_path": "/home/me/.claude/tool-results/p1.txt"}, "r1"))
    t.result("r1", "x" * 44_000)
    t.assistant(t.bash("cat other.log", "p2"))
    entry = t.result("p2", _persisted("/home/me/.claude/tool-results/p2.txt", 30_000))
    entry["toolUseResult"] = {"stdout": "y" * 30_000, "stderr": ""}
    t.assistant(t.bash("cat small.log", "s1"))
    t.result("s1", "z" * 300 + "\nfound TOKEN-42ab\n" + "z" * 5_000)
    t.assistant({"type": "text", "text": "The log says TOKEN-42ab."})
    return t


def _progress(agent: str, message: dict[str, Any]) -> dict[str, Any]:
    return {"type": "progress", "data": {"type": "agent_progress", "agentId": agent, "message": message}}


def _write(path: Path, entries: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))


def test_the_tool_counts_each_persisted_output_once_and_what_followed_it(tmp_path: Path) -> None:
    main = _session().entries
    sub = Transcript()
    sub.prompt("Find the callers.")
    sub.assistant(sub.call("Grep", {"pattern": "call", "output_mode": "content"}, "g1"))
    sub.result("g1", _persisted("/home/me/.claude/tool-results/g1.txt", 150_000))
    window = {"file_path": "/home/me/.claude/tool-results/g1.txt", "offset": 100, "limit": 50}
    sub.assistant(sub.call("Read", window, "g2"))
    sub.result("g2", "w" * 1_500)
    _write(tmp_path / "a" / "one.jsonl", main + [_progress("sub1", e) for e in sub.entries])
    _write(tmp_path / "b" / "copy.jsonl", main)  # a checkpoint's copy of the same session
    found = figures(measure([tmp_path / "a", tmp_path / "b"]))
    assert (found["files"], found["persisted"], found["persisted_main"]) == (2, 3, 2)
    assert (found["read_back"], found["read_back_calls"], found["read_back_chars"]) == (
        2,
        [1, 1],
        [44_000, 1_500],
    )
    assert (found["whole_reads"], found["whole_reads_under_cap"]) == (1, "1 of 1")
    assert found["over_cap_read_backs"] == [(1, 1_500)]
    assert found["whole_read_chars_per_output_char"] == [1.1]
    assert found["read_back_interval"] == wilson(2, 3)
    assert (found["copied_known"], found["copied_read_back"], found["copied_not_read_back"]) == (2, 0, 0)
    # seen whole: the small log (a later reply copies its token) and the read-back itself (44,000 chars)
    assert (found["seen_whole"], found["seen_whole_quoted"], found["seen_whole_copied"]) == (2, 1, 1)


CORPORA = [Path(p) for p in os.environ.get("FLOWER_READ_BACK_CORPORA", "").split(os.pathsep) if p]


@pytest.mark.skipif(not CORPORA, reason="FLOWER_READ_BACK_CORPORA names no calibration corpus")
def test_the_constants_are_what_the_tool_measures_on_the_calibration_corpora() -> None:
    found = figures(measure(CORPORA))
    assert (found["read_back"], found["persisted"]) == measured.PREVIEW_READ_BACK
    assert found["read_back_interval"] == measured.PREVIEW_READ_BACK_INTERVAL
    assert found["over_cap_read_backs"] == [measured.PARTIAL_READ_BACK]
    ratios = sorted(found["whole_read_chars_per_output_char"])
    assert round((ratios[1] + ratios[2]) / 2, 2) == measured.WHOLE_READ_CHARS_PER_CHAR
