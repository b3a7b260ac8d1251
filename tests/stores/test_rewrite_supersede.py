"""Superseded reads: an older Read result goes when a later whole Read, or a Write, of the file follows."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import InMemorySessionStore

from flower.stores import Change, PrunePolicy, PruningSessionStore
from flower.stores._rewrite import READ_STUBS, supersede_reads
from flower.stores._rewrite._transcript import block_size
from flower.testing import ScriptedModel, bash, read, tool_use

from .transcripts import Transcript, around_the_body, results, text

FILE = "/projects/demo/src/app.py"
BODY = "".join(f"line {i} of the application, long enough to matter\n" for i in range(40))


def read_result(
    t: Transcript, ident: str, *, start: int = 1, lines: int = 40, total: int = 40, **call: Any
) -> None:
    """A Read call and its result, with the record the CLI keeps (`toolUseResult.file`)."""
    t.assistant(t.call("Read", {"file_path": FILE, **call}, ident))
    shown = "".join(
        f"{start + n:>6}\t{line}\n" for n, line in enumerate(BODY.splitlines()[start - 1 : start - 1 + lines])
    )
    entry = t.result(ident, shown)
    record = {"filePath": FILE, "content": BODY, "numLines": lines, "startLine": start, "totalLines": total}
    entry["toolUseResult"] = {"type": "text", "file": record}


def superseded(t: Transcript) -> set[str]:
    return {c.tool_use_id or "" for c in supersede_reads(t.entries).changes}


def test_a_later_whole_read_or_write_supersedes_an_older_read() -> None:
    t = Transcript()
    t.prompt("look")
    read_result(t, "r1")
    read_result(t, "r2", offset=10, limit=5, start=10, lines=5)  # a window: it supersedes nothing
    read_result(t, "r3")
    out = supersede_reads(t.entries)
    assert {c.tool_use_id for c in out.changes} == {"r1", "r2"}
    found = results(out.entries)
    assert text(found["r1"]) == PrunePolicy().superseded_note.format(path=FILE, by="Read")
    assert text(found["r3"]).startswith("     1\tline 0"), "the newest copy stays whole"
    assert out.entries[2]["toolUseResult"] == t.entries[2]["toolUseResult"], "the CLI's record stays whole"
    assert [c.chars_saved > 0 for c in out.changes] == [True, True]

    t.assistant(t.call("Write", {"file_path": FILE, "content": BODY}, "w1"))
    t.result("w1", f"The file {FILE} has been updated.")
    assert superseded(t) == {"r1", "r2", "r3"}, "a Write holds the whole file in its input"


def test_what_does_not_supersede() -> None:
    t = Transcript()
    t.prompt("look")
    read_result(t, "r1")
    t.assistant(t.call("Edit", {"file_path": FILE, "old_string": "line 1", "new_string": "line one"}, "e1"))
    t.result("e1", "The file has been updated. Here's a snippet: ...")
    read_result(t, "r2", start=1, lines=30, total=40)  # cut at a limit: not the whole file
    t.assistant(t.call("Read", {"file_path": FILE}, "r3"))
    t.result("r3", "File does not exist.", is_error=True)
    t.assistant(t.call("Write", {"file_path": "/elsewhere.py", "content": "x"}, "w1"))
    t.result("w1", "File created successfully at: /elsewhere.py")
    assert superseded(t) == set()
    for stub in READ_STUBS:  # CLI 2.1.332's answer to a re-read: the older result is the only copy
        stubbed = Transcript()
        stubbed.prompt("look")
        read_result(stubbed, "r1")
        read_result(stubbed, "r2")
        stubbed.entries[-1]["message"]["content"][0]["content"] = stub + " Refer to that earlier tool_result."
        assert superseded(stubbed) == set(), stub


def test_a_short_read_keeps_its_body_and_the_policy_can_turn_it_off() -> None:
    t = Transcript()
    t.prompt("look")
    t.assistant(t.call("Read", {"file_path": "/a"}, "r1"))
    t.result("r1", "     1\tx")["toolUseResult"] = {
        "type": "text",
        "file": {"content": "x", "numLines": 1, "startLine": 1, "totalLines": 1},
    }
    t.assistant(t.call("Read", {"file_path": "/a"}, "r2"))
    t.result("r2", "     1\tx")["toolUseResult"] = {
        "type": "text",
        "file": {"content": "x", "numLines": 1, "startLine": 1, "totalLines": 1},
    }
    assert superseded(t) == set(), "never longer: the note would not be shorter"
    assert PrunePolicy().supersede_reads and not PrunePolicy(supersede_reads=False).supersede_reads


@pytest.mark.cli
async def test_a_resume_with_a_superseded_read_accepts_an_edit(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    """The real CLI reads a file twice; resumed cold through flower, the model sees the older copy as a
    note and the newer whole; an Edit of the file then works (the CLI knows the file was read)."""
    target = workspace / "app.py"
    target.write_text(BODY, encoding="utf-8")
    raw = InMemorySessionStore()
    scripted_model.script("main", [read(str(target)), bash("echo between"), read(str(target)), "Read."])
    first = await scripted_model.run("Read app.py.", cwd=workspace, session_store=raw)
    assert first.session_id
    store = PruningSessionStore(raw)
    store.clock = lambda: time.time() + 600  # the cache has expired: the load decides
    edit = tool_use("Edit", file_path=str(target), old_string="line 3 of", new_string="line three of")
    scripted_model.script("main", [edit, "Edited."])

    run = await scripted_model.run(
        "Rename line 3.", cwd=workspace, session_store=store, resume=first.session_id
    )

    assert run.error is None and run.text == "Edited."
    resumed, after = scripted_model.requests("main")[-2:]
    reads = [r for r in resumed.tool_results if r.tool_name == "Read"]
    assert [r.text.startswith("[older read of") for r in reads] == [True, False]
    assert store.last_report is not None and len(store.last_report.of_kind("superseded")) == 1
    edited = after.tool_results[-1]
    assert not edited.is_error and "line three of" in target.read_text(encoding="utf-8")


WHOLE = {"filePath": FILE, "content": BODY, "numLines": 40, "startLine": 1, "totalLines": 40}


@pytest.mark.parametrize(
    ("record", "shown"),
    [
        ("Read it.", None),  # a record the CLI did not write as a file's
        ({"type": "text"}, None),
        ({"type": "text", "file": "not a mapping"}, None),
        ({"type": "text", "file": {**WHOLE, "content": None}}, None),
        ({"type": "text", "file": {**WHOLE, "startLine": 5}}, None),  # from line 5, whatever its counts
        ({"type": "text", "file": WHOLE}, "\n  File unchanged since last read."),  # a stub, after blanks
    ],
)
def test_a_later_read_that_is_not_whole_supersedes_nothing(record: Any, shown: str | None) -> None:
    t = Transcript()
    t.prompt("look")
    read_result(t, "r1")
    read_result(t, "r2")
    later = t.entries[-1]
    later["toolUseResult"] = record
    if shown is not None:
        later["message"]["content"][0]["content"] = shown
    assert superseded(t) == set()


def test_the_change_names_the_entry_the_call_the_file_and_what_the_note_saves() -> None:
    t = Transcript()
    t.prompt("look")
    read_result(t, "r1")
    older = t.entries[-1]
    t.assistant(t.call("Write", {"file_path": FILE, "content": BODY}, "w1"))
    t.result("w1", f"The file {FILE} has been updated.")

    out = supersede_reads(t.entries)

    note = PrunePolicy().superseded_note.format(path=FILE, by="Write")
    old, new = older["message"]["content"][0], results(out.entries)["r1"]
    assert text(new) == note
    saved = block_size(old) - block_size(new)
    assert saved > 0
    assert out.changes == (
        Change(kind="superseded", uuid=older["uuid"], tool_use_id="r1", chars_saved=saved, detail=FILE),
    )


BYTES = len(FILE) + len("Read")  # what `{path}` and `{by}` add to a note


@pytest.mark.parametrize(("body", "text", "superseded"), around_the_body(BYTES))
def test_a_read_is_superseded_only_when_the_note_is_shorter_as_text_and_in_json(
    body: str, text: str, superseded: bool
) -> None:
    t = Transcript()
    t.prompt("look")
    read_result(t, "r1")
    t.entries[-1]["message"]["content"][0]["content"] = body
    read_result(t, "r2")
    policy = PrunePolicy(superseded_note=text + "{path}{by}")
    out = supersede_reads(t.entries, policy)
    assert [c.tool_use_id for c in out.changes] == (["r1"] if superseded else [])


def test_one_read_left_alone_does_not_stop_the_others() -> None:
    """A read of another file, one too short for the note, one already a note: each is passed over."""
    t = Transcript()
    t.prompt("look")
    t.assistant(t.call("Read", {"file_path": "/projects/demo/other.py"}, "o1"))
    t.result("o1", "     1\tother")
    read_result(t, "short")
    t.entries[-1]["message"]["content"][0]["content"] = "x"
    read_result(t, "noted")
    t.entries[-1]["message"]["content"][0]["content"] = PrunePolicy().superseded_note.format(
        path=FILE, by="Read"
    )
    read_result(t, "r1")
    read_result(t, "r2")
    assert superseded(t) == {"r1"}


def test_the_branch_given_is_the_one_read() -> None:
    t = Transcript()
    t.prompt("look")
    read_result(t, "r1")
    read_result(t, "r2")
    assert [c.tool_use_id for c in supersede_reads(t.entries, branch=frozenset()).changes] == []
    every = frozenset(e["uuid"] for e in t.entries if "uuid" in e)
    assert [c.tool_use_id for c in supersede_reads(t.entries, branch=every).changes] == ["r1"]


def test_what_is_no_newer_copy() -> None:
    t = Transcript()
    t.prompt("look")
    read_result(t, "r1")
    t.assistant(t.call("Write", {"file_path": FILE, "content": BODY}, "w1"))
    t.result("w1", "Permission denied.", is_error=True)  # the file was not written
    t.assistant(t.call("Read", {"path": FILE}, "np"))  # no file_path
    t.result("np", "     1\tline")
    t.assistant(t.call("Write", {"content": BODY}, "nw"))
    t.result("nw", "written")
    t.assistant(t.call("Read", {"file_path": ""}, "e1"))
    t.result("e1", BODY)  # long enough for a note: a Read naming no file is never superseded
    t.assistant(t.call("Write", {"file_path": "", "content": BODY}, "e2"))
    t.result("e2", "written")
    t.assistant(t.call("Read", "not a mapping", "odd"))
    t.result("odd", "     1\tline")
    read_result(t, "r2")
    results_entry = t.entries[-1]
    results_entry["message"]["content"][:0] = [
        {"type": "tool_result", "tool_use_id": "nobody", "content": "a result of no call"},
        {"type": "tool_result", "tool_use_id": ["not", "an", "id"], "content": "x"},
    ]
    assert superseded(t) == {"r1"}, "only the last whole read, past the odd results before it in its entry"


def test_a_write_that_failed_supersedes_nothing() -> None:
    t = Transcript()
    t.prompt("look")
    read_result(t, "r1")
    t.assistant(t.call("Write", {"file_path": FILE, "content": BODY}, "w1"))
    t.result("w1", "Permission denied.", is_error=True)
    t.assistant(t.call("Read", {"path": FILE}, "np"))  # no file_path: the next Write cannot name it
    t.result("np", BODY)  # a body a note would shorten: what keeps it is that neither call names a file
    t.assistant(t.call("Write", {"content": BODY}, "nw"))
    t.result("nw", "written")
    assert superseded(t) == set()
