"""Trim: large results move to content-addressed files the agent can Read; the writer stays in its dir."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from flower._errors import SpecError, StoreError
from flower.stores import TrimPolicy
from flower.stores._rewrite import Spill, spill_name, trim_results, write_spills
from flower.stores._rewrite._transcript import result_text, with_result_text, with_tool_use_result

from .transcripts import Transcript, around_the_body, results, text

POLICY = TrimPolicy(keep_recent=2, min_chars=100)


def big(i: int) -> str:
    return f"line {i}\n" + "x" * 400


def history(count: int) -> Transcript:
    t = Transcript()
    for i in range(count):
        t.run(f"cat log{i}", big(i), f"toolu_{i}")
        t.run("echo small", "small", f"toolu_small{i}")
    return t


def test_all_but_the_newest_large_results_become_pointers(tmp_path: Path) -> None:
    t = history(5)
    spill_dir = str(tmp_path / "spill")

    out = trim_results(t.entries, POLICY, spill_dir)

    found = results(out.entries)
    for i in range(3):
        path = os.path.join(spill_dir, spill_name(big(i)))
        assert (
            text(found[f"toolu_{i}"])
            == f"[tool result trimmed: {len(big(i))} chars moved to {path}; Read that file if you need it]"
        )
    assert [text(found[f"toolu_{i}"]) for i in (3, 4)] == [big(3), big(4)]
    assert all(text(found[f"toolu_small{i}"]) == "small" for i in range(5))
    assert [s.text for s in out.spills] == [big(0), big(1), big(2)]
    assert [c.detail for c in out.changes] == [os.path.join(spill_dir, s.name) for s in out.spills]
    assert not (tmp_path / "spill").exists(), "trim_results writes nothing"


def test_a_pointer_as_long_as_the_body_leaves_it(tmp_path: Path) -> None:
    """With a small `min_chars`, a pointer (about 150 chars plus the path) can outgrow the body."""
    t = Transcript()
    t.run("cat short", "y" * 120, "toolu_short")
    t.run("cat long", big(1), "toolu_long")
    out = trim_results(t.entries, TrimPolicy(keep_recent=0, min_chars=100), str(tmp_path / "spill"))
    assert [c.tool_use_id for c in out.changes] == ["toolu_long"] and len(out.spills) == 1
    assert text(results(out.entries)["toolu_short"]) == "y" * 120


def test_identical_bodies_share_one_file(tmp_path: Path) -> None:
    t = Transcript()
    for i in range(3):
        t.run("cat same", big(0), f"toolu_{i}")
    out = trim_results(t.entries, TrimPolicy(keep_recent=0, min_chars=100), str(tmp_path))
    assert len(out.changes) == 3 and len(out.spills) == 1


def test_written_bodies_read_back_exactly(tmp_path: Path) -> None:
    out = trim_results(
        history(3).entries, TrimPolicy(keep_recent=0, min_chars=100), str(tmp_path / "a" / "spill")
    )

    paths = write_spills(tmp_path / "a" / "spill", out.spills)

    assert [p.read_text(encoding="utf-8") for p in paths] == [big(0), big(1), big(2)]
    assert [str(p) for p in paths] == [c.detail for c in out.changes]
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "a" / "spill").stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in paths)
    assert write_spills(tmp_path / "a" / "spill", out.spills) == paths, "writing again is a no-op"
    assert sorted(os.listdir(tmp_path / "a" / "spill")) == sorted(p.name for p in paths), "no temporary left"


def test_the_writer_refuses_to_leave_its_directory(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("keep me")
    spill = tmp_path / "spill"
    spill.mkdir()
    body = "secret body"
    (spill / spill_name(body)).symlink_to(elsewhere)

    with pytest.raises(StoreError, match="not a regular file"):
        write_spills(spill, [Spill(spill_name(body), body)])
    assert elsewhere.read_text() == "keep me"
    for bad in ("../escape.txt", "a/b.txt", "notahash.txt", ".hidden.txt"):
        with pytest.raises(SpecError, match="content-addressed"):
            write_spills(spill, [Spill(bad, "x")])
    with pytest.raises(SpecError, match="absolute"):
        write_spills("relative/spill", [])
    (tmp_path / "file").write_text("")
    with pytest.raises(StoreError, match="not a directory"):
        write_spills(tmp_path / "file", [Spill(spill_name("x"), "x")])


def test_bad_arguments() -> None:
    with pytest.raises(SpecError, match="absolute"):
        trim_results([], POLICY, "relative")
    with pytest.raises(SpecError, match="TrimPolicy"):
        trim_results([], None, "/abs")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="min_chars"):
        TrimPolicy(min_chars=0)
    with pytest.raises(SpecError, match="keep_recent"):
        TrimPolicy(keep_recent=-3)
    with pytest.raises(SpecError, match="may only use"):
        TrimPolicy(pointer="see {file}")


PATH_CHARS = len("/s/") + len(spill_name(""))  # the pointer's path: the directory, 32 hex digits, .txt


@pytest.mark.parametrize(("body", "text", "trimmed"), around_the_body(PATH_CHARS))
def test_a_body_is_trimmed_only_when_the_pointer_is_shorter_as_text_and_in_json(
    body: str, text: str, trimmed: bool
) -> None:
    t = Transcript()
    t.run("cat log", body, "toolu_log")
    policy = TrimPolicy(keep_recent=0, min_chars=10, pointer=text + "{path}")
    out = trim_results(t.entries, policy, "/s")
    assert [c.tool_use_id for c in out.changes] == (["toolu_log"] if trimmed else [])
    if not trimmed:
        assert out.entries == t.entries and out.spills == ()


def test_a_body_of_exactly_min_chars_is_trimmed_and_the_branch_given_is_the_one_read() -> None:
    t = Transcript()
    t.run("cat log", "x" * 400, "toolu_log")
    policy = TrimPolicy(keep_recent=0, min_chars=400)
    assert [c.tool_use_id for c in trim_results(t.entries, policy, "/s").changes] == ["toolu_log"]
    assert trim_results(t.entries, policy, "/s", branch=frozenset()).changes == ()  # nothing is replayed


def test_a_result_without_a_string_id_is_trimmed_without_one() -> None:
    t = Transcript()
    t.run("cat log", "x" * 400, "toolu_log")
    t.entries[-1]["message"]["content"][0]["tool_use_id"] = 7
    (change,) = trim_results(t.entries, TrimPolicy(keep_recent=0, min_chars=100), "/s").changes
    assert change.tool_use_id is None and change.kind == "trimmed"


def test_the_file_name_is_32_hex_digits_of_the_bodys_sha256() -> None:
    assert spill_name("body") == "230d8358dc8e8890b4c58deeb62912ee.txt"


def test_a_policy_of_another_type_is_refused_by_its_type() -> None:
    with pytest.raises(SpecError, match=r"^trim_results needs a TrimPolicy, got dict$"):
        trim_results([], {}, "/s")  # type: ignore[arg-type]


def test_the_clis_copy_of_a_result_changes_only_where_it_holds_the_body() -> None:
    entry = {"type": "user", "toolUseResult": "Error: the body"}
    assert with_tool_use_result(entry, "the body", "a note") == {
        "type": "user",
        "toolUseResult": "Error: a note",
    }
    assert with_tool_use_result(entry, "", "a note") is entry  # no body: nothing to find
    assert with_tool_use_result(entry, "the body", "the body") is entry
    bare = {"type": "user"}
    assert with_tool_use_result(bare, "the body", "a note") is bare


@pytest.mark.parametrize(
    ("content", "found"),
    [
        ("a", "a"),
        ([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "a\nb"),
        ([], None),
        (5, None),
        ([{"type": "image", "text": "a"}], None),  # an image, whatever else it holds
        (["a"], None),
    ],
)
def test_a_results_text_is_its_string_or_its_text_blocks_only(content: Any, found: str | None) -> None:
    assert result_text({"type": "tool_result", "content": content}) == found


def test_the_new_text_keeps_the_shape_of_the_content() -> None:
    assert with_result_text({"content": "a", "is_error": True}, "b") == {"content": "b", "is_error": True}
    assert with_result_text({"content": [{"type": "text", "text": "a"}]}, "b") == {
        "content": [{"type": "text", "text": "b"}]
    }
