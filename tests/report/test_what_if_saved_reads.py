"""A Read of a file the CLI saved an output to, in the what-if: under flower that file is the spilled one.

The CLI saves a long Bash output to a file and shows a `<persisted-output>` preview; flower's pointer
replaces that preview, so a later Read of the file reads flower's spill file, which `spill_guard` lets
through whole. Pure functions over small transcripts built as the CLI writes them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flower._spill import SpillPolicy
from flower.report._what_if.delegation import tool_loops
from flower.report._what_if.replay import thread_of
from flower.report._what_if.saved import settle
from flower.report._what_if.spill import kept, saved_files, saved_path, spill_hits
from tests.stores.transcripts import Transcript

CWD = "/home/me/app"
SAVED = "/tmp/cli-config/projects/-home-me-app/s1/tool-results/b1.txt"
PREVIEW = (
    f"<persisted-output>\nOutput too large (58.6KB). Full output saved to: {SAVED}\n\n"
    "Preview (first 2KB):\n" + "0" * 2_000 + "\n...\n</persisted-output>"
)


def _saved_output(t: Transcript, call_id: str) -> None:
    """A Bash output of 60,000 chars the CLI saved to `SAVED`, shown as its preview."""
    t.assistant(t.bash("python3 gen.py", call_id))
    entry = t.result(call_id, PREVIEW)
    entry["toolUseResult"] = {  # the CLI keeps the first 30,000 chars in stdout
        "stdout": "0" * 30_000,
        "stderr": "",
        "persistedOutputPath": SAVED,
        "persistedOutputSize": 60_000,
    }


def _read(t: Transcript, path: str, call_id: str, chars: int) -> None:
    t.assistant(t.call("Read", {"file_path": path}, call_id))
    entry = t.result(call_id, "1\t" + "x" * chars)
    entry["toolUseResult"] = {
        "type": "text",
        "file": {"filePath": path, "content": "x" * chars, "numLines": 1, "startLine": 1, "totalLines": 1},
    }


def _history() -> Transcript:
    t = Transcript()
    t.prompt("Go.")
    _saved_output(t, "b1")
    _read(t, SAVED, "r1", 62_000)  # the read-back of the saved output
    _read(t, f"{CWD}/big.log", "r2", 9_000)  # an ordinary Read of a long file
    t.assistant({"type": "text", "text": "Done."})
    for entry in t.entries:
        entry["cwd"] = CWD
    return t


def test_the_path_of_an_output_the_cli_saved() -> None:
    assert saved_path({"persistedOutputPath": SAVED}, "") == SAVED
    assert saved_path("a string output", PREVIEW) == SAVED
    assert saved_path({"stdout": "short"}, "short") is None
    assert saved_files(thread_of("main", _history().entries)) == {SAVED}


def test_a_read_of_the_file_the_cli_saved_an_output_to_is_not_spilled_again() -> None:
    hits = spill_hits(thread_of("main", _history().entries), SpillPolicy())
    # the saved Bash output (flower's pointer replaces the CLI's) and the ordinary Read are spilled; the
    # Read of the saved file is not: under flower it reads the spill file, which the guard passes whole
    assert [(h.tool_use_id, h.cli_saved, h.saved_read) for h in hits] == [
        ("b1", True, False),
        ("r1", False, True),
        ("r2", False, False),
    ]
    assert [h.tool_use_id for h in kept(hits)] == ["b1", "r2"]


def _looked_up(line: int) -> tuple[Transcript, str]:
    """A saved output of 60,000 chars with `T02=PASS` on `line` (of 1,000), read back, then copied."""
    lines = [f"{n:06d} INFO " + "x" * 53 for n in range(1_000)]
    lines[line] = "== result T02=PASS: 0 failed, 120 passed =="
    t = Transcript()
    t.prompt("Go.")
    _saved_output(t, "b1")
    _read(t, SAVED, "r1", 62_000)
    t.assistant({"type": "text", "text": "Noted T02=PASS."})
    for entry in t.entries:
        entry["cwd"] = CWD
    return t, "\n".join(lines)


def test_a_read_back_is_needless_where_flowers_preview_shows_what_was_taken_from_it(tmp_path: Path) -> None:
    home = tmp_path / "tool-results"
    home.mkdir()
    for line, needed in ((999, False), (500, True)):  # the tail flower's preview shows; the middle
        t, whole = _looked_up(line)
        (home / "b1.txt").write_text(whole)  # the CLI's file, beside the transcript (SAVED is gone)
        thread = thread_of("main", t.entries)
        settled = settle(thread, spill_hits(thread, SpillPolicy()), home, SpillPolicy())
        assert [(h.tool_use_id, h.needed) for h in settled if h.saved_read] == [("r1", needed)]
        assert [h.tool_use_id for h in kept(settled)] == (["b1", "r1"] if not needed else ["b1"])
    thread = thread_of("main", _looked_up(999)[0].entries)
    unread = settle(thread, spill_hits(thread, SpillPolicy()), tmp_path / "nowhere", SpillPolicy())
    assert [h.needed for h in unread if h.saved_read] == [True]  # the output cannot be read: kept


def _step(t: Transcript, command: str, call_id: str) -> None:
    t.assistant(t.bash(command, call_id))
    t.result(call_id, "ok")


def _loop_with_read_back(looked: dict[str, Any]) -> list[tuple[int, int, int]]:
    t = Transcript()
    t.prompt("Go.")
    _step(t, "make a", "a")  # 0
    _saved_output(t, "b1")  # 1: the stretch's last delegable call
    t.assistant(t.call(looked["name"], looked["input"], "look"))  # 2: the look into the saved file
    t.result("look", "found it")
    _step(t, "make b", "b")  # 3
    _step(t, "make c", "c")  # 4
    t.assistant({"type": "text", "text": "Done."})  # 5
    for entry in t.entries:
        entry["cwd"] = CWD
    return tool_loops(thread_of("main", t.entries))


def test_a_read_back_of_a_saved_output_goes_with_the_stretch_that_made_it() -> None:
    # the worker that was shown the preview reads the file back (the coordinator never saw it): the
    # stretch ends at the request after the read-back, and the next stretch starts there
    assert _loop_with_read_back({"name": "Read", "input": {"file_path": SAVED}}) == [(0, 3, 3), (3, 5, 2)]
    grep = {"name": "Bash", "input": {"command": f"grep -n RESULT {SAVED} | head -n 20"}}
    assert _loop_with_read_back(grep) == [(0, 3, 3), (3, 5, 2)]
    # a Read of any other file is the coordinator's own: it ends the stretch and stays
    other = {"name": "Read", "input": {"file_path": f"{CWD}/notes.md"}}
    assert _loop_with_read_back(other) == [(0, 2, 2), (3, 5, 2)]
