"""spill_guard rule by rule: the manifest's row written out, a call without an id, what a failure logs,
which Bash output a saved file stands in for, and the small parts' edges (labels, a list output)."""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import HookMatcher

from flower._errors import SpecError
from flower._spill import SpillPolicy, spill_guard, spill_hooks
from flower._spill._chain import chain_spill
from flower._spill._files import copy_file, label_of, manifest_row, spilled_as, write_text
from flower._spill._shape import replace_at
from flower._workbench import Workbench
from tests import shapes
from tests.spill.calls import BIG, NAMES, manifest, spill_path, updated

CONTEXT: Any = {"signal": None}


@pytest.fixture
def wb(tmp_path: Path) -> Workbench:
    ws = tmp_path / "ws"
    ws.mkdir()
    return Workbench(ws)


def _without_time(row: dict[str, Any]) -> dict[str, Any]:
    assert isinstance(row.pop("time"), str)
    return row


async def test_a_manifest_row_holds_the_file_its_digest_size_source_and_who_called(wb: Workbench) -> None:
    data = shapes.post_tool_use(
        "Glob", shapes.glob(NAMES), agent_id="a31a64f8406d6d467", agent_type="analyst"
    )
    del data["tool_use_id"]  # the id the hook is called with stands in
    hook = spill_guard(wb, SpillPolicy(lists="strings", head=200, tail=100))
    out = updated(await hook(data, "toolu_arg", CONTEXT))
    path = spill_path(out["filenames"][0])
    body = path.read_bytes()
    assert path.name.endswith("-glob.txt") and body == "\n".join(NAMES).encode()
    assert [_without_time(row) for row in manifest(wb)] == [
        {
            "file": path.name,
            "sha256": hashlib.sha256(body).hexdigest(),
            "chars": len(body),
            "bytes": len(body),
            "tool": "Glob",
            "field": "filenames",
            "source": "output",
            "tool_use_id": "toolu_arg",
            "session_id": "be5a0000-0000-4000-8000-000000000000",
            "agent_id": "a31a64f8406d6d467",
            "agent_type": "analyst",
        }
    ]


async def test_a_spill_makes_the_whole_workbench_it_writes_into(wb: Workbench) -> None:
    assert not wb.root.exists()
    updated(await spill_guard(wb)(shapes.post_tool_use("Bash", shapes.bash(BIG)), "toolu_01", CONTEXT))
    assert all(d.is_dir() for d in (wb.scripts, wb.artifacts, wb.notes, wb.spill))


async def test_an_input_that_is_not_a_mapping_is_kept_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    hook = spill_guard(Path("unused"))
    with caplog.at_level(logging.WARNING, logger="flower.spill"):
        assert await hook(5, None, CONTEXT) == {}  # type: ignore[arg-type]
    (record,) = caplog.records
    assert (
        record.getMessage() == "spill_guard kept the original ? output: 'int' object has no attribute 'get'"
    )


async def test_a_bash_output_already_spilling_its_stdout_is_recorded_once(
    wb: Workbench, tmp_path: Path
) -> None:
    whole = "x" * 40_000 + "\nTAIL-END\n"
    saved = tmp_path / "b5we759e8.txt"
    saved.write_text(whole)
    response = {
        **shapes.bash(whole[:30_000]),
        "persistedOutputPath": str(saved),
        "persistedOutputSize": 40_010,
    }
    updated(await spill_guard(wb)(shapes.post_tool_use("Bash", response), "toolu_01", CONTEXT))
    assert [(row["field"], row["source"], row["chars"]) for row in manifest(wb)] == [
        ("stdout", "persisted", 40_010)
    ]


async def test_a_saved_file_stands_in_for_stdout_only(wb: Workbench, tmp_path: Path) -> None:
    whole = "e" * 40_000
    saved = tmp_path / "b5we759e8.txt"
    saved.write_text(whole)
    response = {
        **shapes.bash("ok", stderr=whole[:30_000]),
        "persistedOutputPath": str(saved),  # no size: the saved file adds no stdout candidate
    }
    out = updated(await spill_guard(wb)(shapes.post_tool_use("Bash", response), "toolu_01", CONTEXT))
    assert spill_path(out["stderr"]).read_text() == whole[:30_000]
    assert out["persistedOutputPath"] == str(saved)  # not used, so not dropped
    assert [(row["field"], row["source"]) for row in manifest(wb)] == [("stderr", "output")]


async def test_a_saved_path_that_is_not_a_string_is_passed_over(wb: Workbench) -> None:
    response = {**shapes.bash("x" * 30_000), "persistedOutputPath": 5, "persistedOutputSize": 45_000}
    out = updated(await spill_guard(wb)(shapes.post_tool_use("Bash", response), "toolu_01", CONTEXT))
    assert spill_path(out["stdout"]).read_text() == "x" * 30_000
    assert manifest(wb)[0]["source"] == "output"


@pytest.mark.parametrize(("differs_at", "source"), [(4_096, "persisted"), (4_095, "output")])
async def test_a_saved_file_must_start_with_the_first_4096_chars_bash_kept(
    wb: Workbench, tmp_path: Path, differs_at: int, source: str
) -> None:
    kept = "k" * 30_000
    whole = kept[:differs_at] + "D" + "k" * (40_000 - differs_at - 1)
    saved = tmp_path / "b5we759e8.txt"
    saved.write_text(whole)
    response = {**shapes.bash(kept), "persistedOutputPath": str(saved), "persistedOutputSize": 40_000}
    updated(await spill_guard(wb)(shapes.post_tool_use("Bash", response), "toolu_01", CONTEXT))
    assert manifest(wb)[0]["source"] == source


async def test_an_unusable_saved_file_is_logged_with_its_cause(
    wb: Workbench, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    missing = tmp_path / "gone.txt"
    response = {
        **shapes.bash("x" * 30_000),
        "persistedOutputPath": str(missing),
        "persistedOutputSize": 45_000,
    }
    with caplog.at_level(logging.INFO, logger="flower.spill"):
        updated(await spill_guard(wb)(shapes.post_tool_use("Bash", response), "toolu_01", CONTEXT))
    (record,) = [r for r in caplog.records if "saved output" in r.getMessage()]
    assert record.getMessage().startswith("spill_guard: Bash's saved output unusable ([Errno 2] ")
    assert record.getMessage().endswith("; spilling the head it kept")


@pytest.mark.parametrize("call_id", [None, ""])
async def test_a_chained_call_without_an_id_is_still_spilled(wb: Workbench, call_id: str | None) -> None:
    async def observe(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        return {}

    policy = SpillPolicy(threshold=100, head=10, tail=0)
    ours, _ = chain_spill(
        spill_hooks(wb, policy), {"PostToolUse": [HookMatcher(matcher="Bash", hooks=[observe])]}, policy
    )
    spill = ours["PostToolUse"][0].hooks[0]
    data = shapes.post_tool_use("Bash", shapes.bash("S" * 500))
    del data["tool_use_id"]
    out = updated(await spill(data, call_id, CONTEXT))  # type: ignore[arg-type]
    assert spill_path(out["stdout"]).read_text() == "S" * 500
    assert manifest(wb)[0]["tool_use_id"] == call_id


def test_a_label_is_cut_to_24_chars_after_its_edges_are_trimmed() -> None:
    assert label_of("_" + "a" * 30) == "a" * 24
    assert label_of("mcp__srv__x") == "mcp-srv-x" and label_of("__") == "tool"


def test_a_list_output_is_rebuilt_without_a_drop() -> None:
    assert replace_at(["a" * 10, "b"], {(0,): "x"}) == ["x", "b"]
    assert replace_at({"a": "1", "p": "2"}, {("a",): "x"}, drop=("p",)) == {"a": "x"}


def test_a_policy_text_with_an_unknown_placeholder_is_refused_by_name() -> None:
    with pytest.raises(SpecError, match=r"^SpillPolicy text has an unknown placeholder: 'nope'$"):
        SpillPolicy(pointer="{nope}")


@pytest.mark.parametrize(("tail", "end"), [(None, ""), (0, ""), (1, "d"), (3, "end")])
def test_spilled_as_names_what_write_text_would_write_without_writing(
    tmp_path: Path, tail: int | None, end: str
) -> None:
    text = "né 😀 " * 1_000 + "\ud800 end"  # wide characters and a lone surrogate, as a tool may return
    asked = {} if tail is None else {"tail": tail}
    guessed = spilled_as(tmp_path, text, "bash", **asked)
    assert list(tmp_path.iterdir()) == []
    written = write_text(tmp_path, text, "bash", **asked)
    assert dataclasses.replace(guessed, created=True) == written and guessed.created is False
    assert guessed.tail == end and guessed.size == len(text.encode("utf-8", "surrogatepass"))


def test_a_manifest_line_is_read_when_it_is_a_json_object() -> None:
    assert manifest_row('{"file": "a.txt", "chars": 3}') == {"file": "a.txt", "chars": 3}
    assert [manifest_row(line) for line in ("[1]", "5", "not json", "")] == [None] * 4


def test_a_copy_keeps_no_tail_unless_asked(tmp_path: Path) -> None:
    source = tmp_path / "saved.txt"
    source.write_text("abcdefgh")
    into = tmp_path / "spill"
    into.mkdir()
    assert copy_file(into, str(source), "x", expected_size=8, starts_with="ab").tail == ""
    assert copy_file(into, str(source), "x", expected_size=8, starts_with="ab", tail=0).tail == ""
    assert copy_file(into, str(source), "x", expected_size=8, starts_with="ab", tail=2).tail == "gh"


def test_the_same_text_written_twice_keeps_one_file(tmp_path: Path) -> None:
    first = write_text(tmp_path, "same", "x")
    again = write_text(tmp_path, "same", "x")
    assert (again.path, first.created, again.created) == (first.path, True, False)
    assert [p.name for p in tmp_path.iterdir()] == [first.path.name]  # the second temp file is gone


async def test_an_app_answer_that_is_not_a_mapping_is_handed_back(wb: Workbench) -> None:
    async def odd(data: Any, tool_use_id: str | None, context: Any) -> Any:
        return None

    policy = SpillPolicy(threshold=100, head=10, tail=0)
    _, theirs = chain_spill(
        spill_hooks(wb, policy), {"PostToolUse": [HookMatcher(matcher="Bash", hooks=[odd])]}, policy
    )
    app = theirs["PostToolUse"][0].hooks[0]
    assert await app(shapes.post_tool_use("Bash", shapes.bash("S" * 500)), "toolu_01", CONTEXT) is None


async def test_a_chained_call_keyed_by_the_hooks_id_records_that_id(wb: Workbench) -> None:
    async def observe(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        return {}

    policy = SpillPolicy(threshold=100, head=10, tail=0)
    ours, _ = chain_spill(
        spill_hooks(wb, policy), {"PostToolUse": [HookMatcher(matcher="Read", hooks=[observe])]}, policy
    )
    data = shapes.post_tool_use("Bash", shapes.bash("S" * 500))
    del data["tool_use_id"]
    updated(await ours["PostToolUse"][0].hooks[0](data, "toolu_arg", CONTEXT))
    assert manifest(wb)[0]["tool_use_id"] == "toolu_arg"


async def test_the_manifest_records_the_inputs_own_call_id_first(wb: Workbench) -> None:
    data = shapes.post_tool_use("Bash", shapes.bash(BIG), tool_use_id="toolu_data")
    updated(await spill_guard(wb)(data, "toolu_arg", CONTEXT))
    assert manifest(wb)[0]["tool_use_id"] == "toolu_data"
