"""spill's parts, each output written out in full: the previews, the copy of Bash's saved file, which
Reads pass through, which app matchers the chain waits for."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import resource
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest
from claude_agent_sdk import HookMatcher

from flower._errors import SpecError
from flower._spill import SpillPolicy, spill_guard, spill_hooks
from flower._spill._chain import chain_spill, may_match
from flower._spill._files import (
    CHUNK_CHARS,
    Spilled,
    append_manifest,
    copy_file,
    label_of,
    quoted,
    write_text,
)
from flower._spill._preview import lines_preview, read_preview, read_start, text_preview
from flower._spill._shape import Candidate, find_candidates, get_at, replace_at
from flower._workbench import Workbench
from tests import shapes

SPILLED = Spilled(Path("/s/f.txt"), "0" * 64, 1_234, 1_234, "", True)
POINTER = "[spilled] {tool} {field}: {chars} chars moved out of the conversation to {path} (Read it)."


def policy(head: int, tail: int) -> SpillPolicy:
    return SpillPolicy(threshold=1_000, head=head, tail=tail, pointer=POINTER)


# previews


def test_a_list_preview_shows_whole_items_from_each_end_and_counts_the_rest() -> None:
    items = ["aaaa", "bb", "c" * 50, "x", "yy", "zzz"]
    candidate = Candidate(("filenames",), "lines", 75)
    pointer = "[spilled] Glob filenames: 1,234 chars moved out of the conversation to `/s/f.txt` (Read it)."
    # head 8: "aaaa\n" and "bb\n" fit exactly (8 chars); tail 7: "zzz\n" and "yy\n" (7), not "x\n"
    assert lines_preview(items, SPILLED, "Glob", candidate, policy(8, 7)) == [
        pointer,
        "aaaa",
        "bb",
        "[... 53 chars not shown ...]",  # "c" * 50 and "x", a newline after each
        "yy",
        "zzz",
    ]
    assert lines_preview(items, SPILLED, "Glob", candidate, policy(7, 6))[1:] == [
        "aaaa",
        "[... 59 chars not shown ...]",
        "zzz",
    ]
    assert lines_preview(items, SPILLED, "Glob", candidate, policy(8, 0))[1:] == [
        "aaaa",
        "bb",
        "[... 60 chars not shown ...]",
    ]
    everything = lines_preview(["ab", "cd", "ef"], SPILLED, "Glob", candidate, policy(6, 3))
    assert everything[1:] == ["ab", "cd", "ef"]  # all of it fits: no omission line


def test_a_read_preview_keeps_the_files_line_numbers() -> None:
    candidate = Candidate(("file", "content"), "text", 1_234)
    content = "one\ntwo\nthree\nfour"
    preview = read_preview(content, SPILLED, "Read", candidate, policy(8, 0), 2)
    assert preview == (
        "[spilled] Read file.content: 1,234 chars moved out of the conversation to `/s/f.txt` (Read it). "
        "Lines 2-3 of the file follow. Line 1 of that file is line 2 of this one.\none\ntwo"
    )
    first = read_preview(content, SPILLED, "Read", candidate, policy(3, 0), 1)
    assert first.endswith("(Read it).") and "\n" not in first  # nothing fits, and line 1 is line 1


# the copy of a file Bash saved


def saved(tmp_path: Path, data: bytes) -> str:
    path = tmp_path / "saved.txt"
    path.write_bytes(data)
    return str(path)


@pytest.fixture
def into(tmp_path: Path) -> Path:
    directory = tmp_path / "spill"
    directory.mkdir()
    return directory


def test_a_copy_counts_characters_and_bytes_over_every_chunk(tmp_path: Path, into: Path) -> None:
    data = ("é" * CHUNK_CHARS + "the end 😀").encode() + b"\xc3"  # two chunks; a cut character at the end
    source = saved(tmp_path, data)
    copied = copy_file(into, source, "bash", expected_size=len(data), starts_with="éé", tail=3)
    assert (copied.chars, copied.size) == (CHUNK_CHARS + 9 + 1, len(data))  # the cut byte reads as one char
    assert copied.sha256 == hashlib.sha256(data).hexdigest() and copied.created
    assert copied.path == into / f"{copied.sha256[:16]}-bash.txt" and copied.path.read_bytes() == data
    assert copied.tail == "d 😀"  # the last three characters that decode whole
    again = copy_file(into, source, "bash", expected_size=None, starts_with="é", tail=0)
    assert (again.path, again.created, again.tail) == (copied.path, False, "")  # the same content is kept


def test_a_copys_tail_is_its_last_characters_whatever_their_width(tmp_path: Path, into: Path) -> None:
    wide = "a" + "😀" * 10  # four bytes each: the window must hold 4 bytes per character asked for
    source = saved(tmp_path, wide.encode())
    assert copy_file(into, source, "x", expected_size=None, starts_with="a", tail=3).tail == "😀" * 3
    odd = "a" + "é" * 100  # the window starts inside a character: that part is dropped, not an error
    source = saved(tmp_path, odd.encode())
    assert copy_file(into, source, "x", expected_size=None, starts_with="a", tail=3).tail == "ééé"
    short = saved(tmp_path, b"abc")
    assert copy_file(into, short, "x", expected_size=3, starts_with="a", tail=5).tail == "abc"
    assert copy_file(into, short, "x", expected_size=3, starts_with="a", tail=1).tail == "c"


def test_a_copy_is_refused_unless_the_file_is_this_output(tmp_path: Path, into: Path) -> None:
    source = saved(tmp_path, b"abcdef")
    with pytest.raises(ValueError, match=r"holds 6 bytes, the output said 7"):
        copy_file(into, source, "x", expected_size=7, starts_with="abc")
    with pytest.raises(ValueError, match=r"does not hold this output"):
        copy_file(into, source, "x", expected_size=6, starts_with="bcd")
    lone = saved(tmp_path, "a\ud800b".encode("utf-8", errors="surrogatepass"))  # the CLI's own bytes
    assert copy_file(into, lone, "x", expected_size=None, starts_with="a\ud800").chars == 5
    assert list(into.glob(".spill-*")) == []


def test_a_copy_that_cannot_be_written_leaves_no_temp_file(tmp_path: Path, into: Path) -> None:
    source = saved(tmp_path, b"x" * 10_000)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    old_limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1_000, old_limit[1]))
    try:
        with pytest.raises(OSError):
            copy_file(into, source, "x", expected_size=None, starts_with="x")
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old_limit)
        signal.signal(signal.SIGXFSZ, old_handler)
    assert os.listdir(into) == []


# which Reads pass through


async def spilled_read(wb: Workbench, **changes: Any) -> bool:
    data = shapes.post_tool_use(
        "Read", shapes.read("v" * 5_000), {"file_path": "notes.txt"}, cwd=str(wb.root)
    )
    data.update(changes)
    result = await spill_guard(wb)(data, "toolu_1", {"signal": None})
    return bool(result)


async def test_a_read_passes_only_when_its_path_resolves_inside_the_workbench(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wb = Workbench(tmp_path)
    assert not await spilled_read(wb)  # notes.txt of the workbench's root: passes
    assert await spilled_read(wb, tool_input={"file_path": "notes\x00.txt"})
    assert await spilled_read(wb, tool_input={"file_path": 5})
    assert await spilled_read(wb, tool_input={"file_path": ""})
    assert await spilled_read(wb, tool_input=None)
    outside = tmp_path.parent
    monkeypatch.chdir(outside)
    assert await spilled_read(wb, cwd=None)  # a relative path from the process's directory: outside
    assert await spilled_read(wb, cwd=5)
    monkeypatch.chdir(wb.root)
    assert not await spilled_read(wb, cwd="")


# the chain with an app's hooks


def test_which_app_matchers_may_call_their_hooks_for_a_tool() -> None:
    assert may_match(None, "Bash") and may_match("", "Bash") and may_match("*", "Bash")
    assert may_match("Ba.*", "Bash") and may_match("Read | Bash", "Bash")  # regexes: maybe
    assert may_match("Read|Bash", "Bash") and not may_match("Read|Grep", "Bash")
    assert not may_match("Bashful", "Bash")


async def both(spill: Any, app: Any, data: dict[str, Any], argument: str | None) -> dict[str, Any]:
    """The two callbacks of one call run at once, as the CLI runs them."""
    results: dict[str, Any] = {}

    async def run(name: str, hook: Any) -> None:
        results[name] = await hook(data, argument, {"signal": None})

    async with anyio.create_task_group() as group:
        group.start_soon(run, "spill", spill)
        group.start_soon(run, "app", app)
    return results


async def test_the_chain_finds_a_call_by_either_id(tmp_path: Path) -> None:
    """The spill steps aside for the app's rewrite whether the call's id is in the hook input or only
    the callback's argument; an event or a tool the spill does not act on goes straight to the spill."""
    chosen = SpillPolicy(threshold=100, head=10, tail=0)

    async def rewrite(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        output = {**data["tool_response"], "stdout": "r" * 500}
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": output}}

    ours, theirs = chain_spill(
        spill_hooks(tmp_path, chosen), {"PostToolUse": [HookMatcher(matcher="Bash", hooks=[rewrite])]}, chosen
    )
    spill, app = ours["PostToolUse"][0].hooks[0], theirs["PostToolUse"][0].hooks[0]
    for in_input, argument in (("toolu_1", None), (None, "toolu_2")):
        data = shapes.post_tool_use("Bash", shapes.bash("S" * 500))
        data.pop("tool_use_id", None)
        if in_input:
            data["tool_use_id"] = in_input
        results = await both(spill, app, data, argument)
        assert results["spill"] == {}, (in_input, argument)
        assert results["app"]["hookSpecificOutput"]["updatedToolOutput"]["stdout"].startswith("[spilled]")
    other = shapes.post_tool_use("Grep", {"content": "g" * 500, "mode": "content"}, tool_use_id="toolu_3")
    assert (await spill(other, "toolu_3", {"signal": None}))["hookSpecificOutput"]["updatedToolOutput"]


# the policy's checks


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"threshold": -1}, r"threshold must be None or an int >= 0, got -1"),
        ({"threshold": True}, r"threshold must be"),
        ({"head": -1}, r"SpillPolicy\.head must be an int >= 0, got -1"),
        ({"tail": -2}, r"SpillPolicy\.tail must be an int >= 0, got -2"),
        (
            {"head": 3_000, "tail": 1_000},
            r"head \+ tail \(3000 \+ 1000\) must stay below the threshold \(4000\)",
        ),
        ({"threshold": 1, "head": 0, "tail": 0}, None),
        ({"tools": ("Bash", "")}, r"^SpillPolicy\.tools must be a tuple of tool names$"),
    ],
)
def test_a_bad_policy_is_refused_naming_the_field(fields: dict[str, Any], message: str | None) -> None:
    if message is None:
        assert SpillPolicy(**fields).threshold == fields["threshold"]  # head + tail 0 stays below 1
        return
    with pytest.raises(SpecError, match=message):
        SpillPolicy(**fields)


def test_a_policy_takes_its_texts_with_format_specs_and_any_threshold_off() -> None:
    specs = "{tool:>4} {field:>4} {chars:>4} {path:>4} {head:>4} {tail:>4}"
    assert SpillPolicy(pointer=specs).pointer == specs
    assert SpillPolicy(omission="[{omitted:>6}]", read_lines="{first:>3}-{last:>3}", read_offset="{first:>3}")
    assert not SpillPolicy(threshold=0, head=0, tail=0).enabled  # off: no head + tail check
    assert not SpillPolicy(threshold=None).enabled and SpillPolicy(threshold=1, head=0, tail=0).enabled


# the rest of the pure parts


def test_write_text_records_its_bytes_digest_and_tail(into: Path) -> None:
    text = "é" * (CHUNK_CHARS + 3) + "a\ud800z"  # two chunks, a lone surrogate kept as the CLI wrote it
    written = write_text(into, text, "bash", tail=2)
    data = text.encode("utf-8", errors="surrogatepass")
    assert (written.chars, written.size, written.tail) == (len(text), len(data), "\ud800z")
    assert written.sha256 == hashlib.sha256(data).hexdigest() and written.created
    assert written.path.read_bytes() == data and written.path.name.endswith("-bash.txt")
    again = write_text(into, text, "bash")
    assert (again.path, again.created, again.tail) == (written.path, False, "")
    assert write_text(into, "abc", "x", tail=1).tail == "c"


def test_a_reads_first_line_number_is_taken_only_from_a_text_read() -> None:
    content = Candidate(("file", "content"), "text", 10)
    output = {"type": "text", "file": {"content": "x", "startLine": 7}}
    assert read_start("Read", output, content) == 7
    assert read_start("Grep", output, content) is None
    assert read_start("Read", output, Candidate(("file", "other"), "text", 10)) is None
    assert read_start("Read", "not a mapping", content) is None
    assert read_start("Read", {"file": "not a mapping"}, content) is None
    for bad in (0, -3, True, "7", None):
        assert read_start("Read", {"file": {"startLine": bad}}, content) is None, bad


def test_a_text_preview_counts_what_it_leaves_out() -> None:
    candidate = Candidate(("stdout",), "text", 30)
    value = "h" * 20 + "t" * 10
    tailed = Spilled(Path("/s/f.txt"), "0" * 64, 30, 30, "t" * 10, True)
    assert text_preview(value, tailed, "Bash", candidate, policy(20, 10)).splitlines()[1:] == [
        "h" * 20,
        "[... 0 chars not shown ...]",
        "t" * 10,
    ]
    untailed = Spilled(Path("/s/f.txt"), "0" * 64, 30, 30, "", True)
    assert text_preview(value, untailed, "Bash", candidate, policy(20, 10)).splitlines()[1:] == ["h" * 20]


def test_replacing_a_path_rebuilds_only_its_way_down_and_a_wrong_path_is_named() -> None:
    output = {"a": {"b": "x", "c": ["y", "z"]}, "d": {"e": "f"}}
    replaced = replace_at(output, {("a", "c", 1): "Z"})
    assert replaced == {"a": {"b": "x", "c": ["y", "Z"]}, "d": {"e": "f"}}
    assert replaced["d"] is output["d"] and output["a"]["c"] == ["y", "z"]  # shared, never mutated
    assert replace_at(output, {("a",): "A"}) == {"a": "A", "d": {"e": "f"}}
    with pytest.raises(TypeError, match=r"not a list at 0"):
        get_at(output, ("a", 0))
    with pytest.raises(TypeError, match=r"not a mapping at 'b'"):
        get_at(output, ("a", "c", "b"))


async def test_bashs_saved_file_is_checked_against_the_size_the_cli_gave(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "ws").mkdir()
    wb = Workbench(tmp_path / "ws")
    saved_file = tmp_path / "b1.txt"
    whole = "".join(f"{i:06d}\n" for i in range(5_000))  # 35,000 chars, every line its own
    saved_file.write_text(whole)
    response = {**shapes.bash(whole[:30_000]), "persistedOutputPath": str(saved_file)}
    hook = spill_guard(wb, tail=10)
    for size, source in ((len(whole), "persisted"), (len(whole) + 1, "output"), ("35000", "persisted")):
        data = shapes.post_tool_use("Bash", {**response, "persistedOutputSize": size})
        with caplog.at_level("INFO", logger="flower.spill"):
            result = await hook(data, "toolu_1", {"signal": None})
        out = result["hookSpecificOutput"]["updatedToolOutput"]
        path = Path(out["stdout"].splitlines()[0].split("`")[1])
        assert path.name.endswith("-bash.txt")
        assert path.read_text() == (whole if source == "persisted" else whole[:30_000]), size
    assert "Bash's saved output unusable" in caplog.text and f"holds {len(whole)} bytes" in caplog.text
    not_bash_stdout = {"stdout": "s", "file": "x" * 5_000, "persistedOutputPath": str(saved_file)}
    data = shapes.post_tool_use("Bash", not_bash_stdout)
    out = (await hook(data, "toolu_2", {"signal": None}))["hookSpecificOutput"]["updatedToolOutput"]
    assert "persistedOutputPath" in out, "only a stdout comes from the saved file"
    empty = {**response, "persistedOutputPath": "", "persistedOutputSize": len(whole)}
    data = shapes.post_tool_use("Bash", empty)
    out = (await hook(data, "toolu_3", {"signal": None}))["hookSpecificOutput"]["updatedToolOutput"]
    assert Path(out["stdout"].splitlines()[0].split("`")[1]).read_text() == whole[:30_000]


async def test_the_chain_hands_the_call_id_on_and_logs_the_rewrite(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The app's callback gets the call's id and context as the CLI gave them, the spill of its rewrite
    records the id, and the rewrite is logged naming the tool."""
    chosen = SpillPolicy(threshold=100, head=10, tail=0)
    seen: list[tuple[str | None, Any]] = []

    async def rewrite(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen.append((tool_use_id, context))
        output = {**data["tool_response"], "stdout": "r" * 500}
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": output}}

    ours, theirs = chain_spill(
        spill_hooks(tmp_path, chosen), {"PostToolUse": [HookMatcher(matcher="Bash", hooks=[rewrite])]}, chosen
    )
    spill, app = ours["PostToolUse"][0].hooks[0], theirs["PostToolUse"][0].hooks[0]
    data = shapes.post_tool_use("Bash", shapes.bash("S" * 500))
    data.pop("tool_use_id", None)
    context = {"signal": None}
    with caplog.at_level(logging.INFO, logger="flower.spill"):
        results: dict[str, Any] = {}

        async def run(name: str, hook: Any) -> None:
            results[name] = await hook(data, "toolu_9", context)

        async with anyio.create_task_group() as group:
            group.start_soon(run, "spill", spill)
            group.start_soon(run, "app", app)
    assert seen == [("toolu_9", context)]
    assert "an app hook rewrote a Bash output; flower spilled the rewritten one" in caplog.messages
    rows = [json.loads(line) for line in (tmp_path / "INDEX.jsonl").read_text().splitlines()]
    assert [row["tool_use_id"] for row in rows] == ["toolu_9"]
    other = {**shapes.post_tool_use("Write", shapes.bash("S" * 500)), "tool_use_id": None}
    alone = await app(other, "toolu_10", context)  # a tool the spill does not act on: the app's answer
    assert alone["hookSpecificOutput"]["updatedToolOutput"]["stdout"] == "r" * 500
    assert seen[-1] == ("toolu_10", context)


# the hook's keywords, targets and failures


async def test_the_hooks_keywords_override_the_policy(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "ws").mkdir()
    wb = Workbench(tmp_path / "ws")
    hook = spill_guard(wb, SpillPolicy(pointer="{head}/{tail}"), head=5, tail=3, main_only=True)
    data = shapes.post_tool_use("Bash", shapes.bash("a" * 4_000 + "xyz"))
    out = (await hook(data, "toolu_1", {"signal": None}))["hookSpecificOutput"]["updatedToolOutput"]
    assert out["stdout"] == "5/3\naaaaa\n[... 3,995 chars not shown ...]\nxyz"
    sub = {**data, "agent_id": "a1"}
    assert await hook(sub, "toolu_2", {"signal": None}) == {}  # main_only
    (matcher,) = spill_hooks(wb, threshold=10, head=2, tail=0, main_only=True)["PostToolUse"]
    short = shapes.post_tool_use("Bash", shapes.bash("b" * 20))
    out = (await matcher.hooks[0](short, "toolu_3", {"signal": None}))["hookSpecificOutput"][
        "updatedToolOutput"
    ]
    assert (
        out["stdout"].endswith("\nbb") and await matcher.hooks[0]({**short, "agent_id": "a"}, "t", {}) == {}
    )
    assert spill_hooks(wb, threshold=None) == {} and spill_hooks(wb, threshold=0) == {}
    with pytest.raises(SpecError, match=r"^spill_guard: target needs a Workbench or a directory, got ''$"):
        spill_guard("")
    for other in ({**data, "hook_event_name": "PreToolUse"}, {**data, "tool_name": "Write"}):
        assert await hook({**other, "agent_id": None}, "toolu_4", {"signal": None}) == {}
    (tmp_path / "ws2").mkdir()
    blocked = Workbench(tmp_path / "ws2")
    blocked.spill.parent.mkdir(parents=True)
    blocked.spill.write_text("a file where the spill directory should be")
    with caplog.at_level(logging.WARNING, logger="flower.spill"):
        assert (
            await spill_guard(blocked)(shapes.post_tool_use("Bash", shapes.bash("d" * 5_000)), "t", {}) == {}
        )
    (record,) = [r for r in caplog.records if r.name == "flower.spill"]
    assert record.getMessage().startswith("spill_guard kept the original Bash output: ") and record.exc_info


async def test_a_directory_target_and_reads_through_the_spill_only(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    hook = spill_guard(str(plain), threshold=100, head=0, tail=0)
    data = shapes.post_tool_use("Bash", shapes.bash("e" * 500))
    data.pop("tool_use_id", None)
    out = (await hook(data, "toolu_arg", {"signal": None}))["hookSpecificOutput"]["updatedToolOutput"]
    assert out["stdout"].startswith("[spilled] Bash stdout: 500 chars") and str(plain) in out["stdout"]
    rows = [json.loads(line) for line in (plain / "INDEX.jsonl").read_text().splitlines()]
    assert [row["tool_use_id"] for row in rows] == ["toolu_arg"]
    (tmp_path / "ws").mkdir()
    wb = Workbench(tmp_path / "ws")
    narrow = spill_guard(wb, SpillPolicy(read_through="spill"))
    read = shapes.post_tool_use(
        "Read", shapes.read("v" * 5_000), {"file_path": "notes.txt"}, cwd=str(wb.root)
    )
    assert await narrow(read, "t", {"signal": None}), "a workbench file outside spill/ is spilled"
    inside = {**read, "tool_input": {"file_path": str(wb.spill / "x.txt")}}
    assert await narrow(inside, "t", {"signal": None}) == {}


# which parts are candidates


def test_candidates_in_document_order_with_their_kind_and_size() -> None:
    nested: Any = "n" * 10
    for _ in range(31):
        nested = {"k": nested}
    assert find_candidates("Grep", {"deep": nested}, threshold=10) == [
        Candidate(("deep",) + ("k",) * 31, "text", 10)
    ]
    assert find_candidates("Grep", {"deeper": {"k": nested}}, threshold=10) == []  # past 32 levels: not read
    assert find_candidates("Glob", {"files": ["abc", "de"]}, threshold=6, lists="strings") == [
        Candidate(("files",), "lines", 6)  # 5 chars and a newline between the two
    ]
    assert find_candidates("Glob", {"files": ["abc", "de"]}, threshold=7, lists="strings") == []
    mixed = {"results": [{"a": 1}, "x" * 10, "y" * 9]}
    assert find_candidates("WebSearch", mixed, threshold=10, lists="strings") == [
        Candidate(("results", 1), "text", 10)
    ]
    assert find_candidates("WebSearch", mixed, threshold=10) == []  # lists kept by default
    assert find_candidates("Grep", {"a": "b"}, threshold=1) == [Candidate(("a",), "text", 1)]
    assert find_candidates("Grep", {"a": "b"}, threshold=0) == []
    assert find_candidates("Read", {"type": "image", "file": {"content": "x" * 10}}, threshold=5) == []
    persisted = {"stdout": "s", "stderr": "e" * 10, "persistedOutputSize": 50, "persistedOutputPath": "/p"}
    assert find_candidates("Bash", persisted, threshold=10) == [
        Candidate(("stdout",), "text", 1),
        Candidate(("stderr",), "text", 10),
    ]


def test_labels_and_quoted_paths() -> None:
    assert label_of("mcp__srv__x") == "mcp-srv-x" and label_of("--Bash--") == "bash"
    assert label_of("a" * 23 + "_b") == "a" * 23 and label_of("___") == "tool" and label_of("") == "tool"
    assert quoted("a b") == "`a b`" and quoted("a`b é") == '"a`b é"'


def test_the_manifest_keeps_text_as_written_and_says_when_it_cannot(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    assert append_manifest(tmp_path, {"file": "f.txt", "agent": "分析员", "odd": "\ud800"})
    line = (tmp_path / "INDEX.jsonl").read_text(encoding="utf-8", errors="strict")
    row = json.loads(line)
    assert row["agent"] == "分析员" and "分析员" in line and "\\ud800" in line
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4}", row["time"])
    blocked = tmp_path / "blocked"
    (blocked / "INDEX.jsonl").mkdir(parents=True)
    with caplog.at_level(logging.WARNING, logger="flower.spill"):
        assert append_manifest(blocked, {"file": "g.txt"}) is False
    (record,) = caplog.records
    assert record.getMessage().startswith(f"spill: g.txt not recorded in {blocked / 'INDEX.jsonl'}: ")


def test_a_file_of_the_same_name_but_another_size_is_replaced(into: Path) -> None:
    first = write_text(into, "hello", "x")
    first.path.write_text("truncated")  # not what its name says
    again = write_text(into, "hello", "x")
    assert again.created and again.path.read_text() == "hello"
