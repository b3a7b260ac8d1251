"""spill_guard on plain hook inputs: every tool's shape, the pointer and preview, the files, the refusals."""

from __future__ import annotations

import copy
import dataclasses
import logging
import os
import stat
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from flower._errors import SpecError
from flower._spill import SPILL_TOOLS, SpillPolicy, spill_guard, spill_hooks
from flower._workbench import Workbench
from tests import shapes
from tests.spill.calls import BIG, NAMES, call, manifest, spill_path, updated


@pytest.fixture
def wb(tmp_path: Path) -> Workbench:
    ws = tmp_path / "ws"
    ws.mkdir()
    return Workbench(ws)


# -- every tool's shape -------------------------------------------------------------------------------

CASES = [
    ("Bash", shapes.bash(BIG), ("stdout",)),
    ("Bash", shapes.bash("ok", stderr=BIG), ("stderr",)),
    ("Read", shapes.read(BIG), ("file", "content")),
    ("Grep", shapes.grep_content(BIG), ("content",)),
    ("WebFetch", shapes.web_fetch(BIG), ("result",)),
]


@pytest.mark.parametrize(("tool", "response", "path"), CASES, ids=[f"{c[0]}-{'.'.join(c[2])}" for c in CASES])
async def test_a_long_string_field_is_replaced_in_the_same_shape(
    wb: Workbench, tool: str, response: dict[str, Any], path: tuple[str, ...]
) -> None:
    original = copy.deepcopy(response)
    out = updated(await call(spill_guard(wb), shapes.post_tool_use(tool, response)))

    assert shapes.same_shape(response, out)
    assert response == original, "the hook input must not be mutated"
    text = out
    for key in path:
        text = text[key]
    pointer, preview = text.split("\n", 1)
    assert pointer.startswith(f"[spilled] {tool} {'.'.join(path)}: 10,200 chars moved out")
    if tool == "Read":  # whole lines from the top only, numbered as in the file: the pointer is line 0
        assert pointer.endswith(" Lines 1-5 of the file follow.") and out["file"]["startLine"] == 0
        assert preview == BIG[: 5 * 51 - 1]  # five 51-char rows fit in the 300-char head
        return
    assert preview == f"{BIG[:300]}\n[... 9,800 chars not shown ...]\n{BIG[-100:]}"  # the default: 300 + 100
    assert spill_path(text).read_text() == BIG
    for key, value in response.items():
        if key != path[0]:
            assert out[key] == value
    (entry,) = manifest(wb)
    assert entry["tool"] == tool and entry["field"] == ".".join(path) and entry["chars"] == 10_200
    assert entry["tool_use_id"] == "toolu_01" and entry["agent_id"] is None


@pytest.mark.parametrize(
    ("tool", "response"),
    [("Glob", shapes.glob(NAMES)), ("Grep", shapes.grep_files(NAMES)), ("WebSearch", shapes.web_search(BIG))],
)
async def test_lists_are_never_touched_by_default(wb: Workbench, tool: str, response: dict[str, Any]) -> None:
    assert await call(spill_guard(wb), shapes.post_tool_use(tool, response)) == {}
    assert not wb.spill.exists()


@pytest.mark.parametrize(
    ("tool", "response"), [("Glob", shapes.glob(NAMES)), ("Grep", shapes.grep_files(NAMES))]
)
async def test_string_lists_are_spilled_as_lines_when_asked(
    wb: Workbench, tool: str, response: dict[str, Any]
) -> None:
    policy = SpillPolicy(lists="strings", head=200, tail=100)
    out = updated(await call(spill_guard(wb, policy), shapes.post_tool_use(tool, response)))

    assert shapes.same_shape(response, out)
    names = out["filenames"]
    assert names[0].startswith(f"[spilled] {tool} filenames:")
    assert names[1:3] == NAMES[:2] and names[-1] == NAMES[-1]
    assert any(n.startswith("[... ") for n in names)
    assert sum(map(len, names)) < 700
    assert out["numFiles"] == 120
    assert spill_path(names[0]).read_text() == "\n".join(NAMES)


async def test_web_search_commentary_is_replaced_in_place_and_hits_stay(wb: Workbench) -> None:
    response = shapes.web_search(BIG)
    out = updated(
        await call(spill_guard(wb, SpillPolicy(lists="strings")), shapes.post_tool_use("WebSearch", response))
    )

    assert shapes.same_shape(response, out)
    assert out["results"][0] is response["results"][0], "the hits (dicts) are shared, not touched"
    assert out["results"][1].startswith("[spilled] WebSearch results.1: 10,200 chars")


async def test_a_string_output_is_replaced_by_a_string(wb: Workbench) -> None:
    out = updated(await call(spill_guard(wb), shapes.post_tool_use("Bash", BIG)))
    assert isinstance(out, str) and out.startswith("[spilled] Bash output:")


# -- what is never spilled ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "response"),
    [
        ("Bash", shapes.bash("short output")),
        ("Read", shapes.read_image()),
        ("Read", shapes.read_pdf()),
        ("Bash", {**shapes.bash("data:image/png;base64," + "A" * 9000), "isImage": True}),
        (
            "Write",
            {
                "type": "create",
                "filePath": "/ws/x",
                "content": BIG,
                "structuredPatch": [],
                "originalFile": None,
            },
        ),
    ],
    ids=["small", "read-image", "read-pdf", "bash-image", "write-not-in-tools"],
)
async def test_left_alone(wb: Workbench, tool: str, response: Any) -> None:
    assert await call(spill_guard(wb), shapes.post_tool_use(tool, response)) == {}


async def test_a_base64_field_is_never_spilled(wb: Workbench) -> None:
    response = {"stdout": "x", "stderr": "", "data": {"base64": "Q" * 9000}}
    assert await call(spill_guard(wb), shapes.post_tool_use("Bash", response)) == {}


async def test_threshold_is_inclusive(wb: Workbench) -> None:
    guard = spill_guard(wb, threshold=1000, head=10)
    assert await call(guard, shapes.post_tool_use("Bash", shapes.bash("a" * 999))) == {}
    assert updated(await call(guard, shapes.post_tool_use("Bash", shapes.bash("a" * 1000))))


async def test_other_events_pass(wb: Workbench) -> None:
    data = {**shapes.post_tool_use("Bash", shapes.bash(BIG)), "hook_event_name": "PreToolUse"}
    assert await call(spill_guard(wb), data) == {}


async def test_main_only_leaves_subagent_outputs(wb: Workbench) -> None:
    guard = spill_guard(wb, main_only=True)
    sub = shapes.post_tool_use("Bash", shapes.bash(BIG), agent_id="a31a64f8406d6d467", agent_type="analyst")
    assert await call(guard, sub) == {}
    assert updated(await call(guard, shapes.post_tool_use("Bash", shapes.bash(BIG))))
    updated(await call(spill_guard(wb), sub))
    assert manifest(wb)[-1]["agent_id"] == "a31a64f8406d6d467"


# -- reading spilled files --------------------------------------------------------------------------


async def test_reading_a_spilled_file_passes_through(wb: Workbench) -> None:
    guard = spill_guard(wb)
    first = updated(await call(guard, shapes.post_tool_use("Bash", shapes.bash(BIG))))
    path = spill_path(first["stdout"])
    again = shapes.post_tool_use("Read", shapes.read(BIG, str(path)), {"file_path": str(path)})
    assert await call(guard, again) == {}
    relative = os.path.relpath(path, wb.workspace)
    by_relative = shapes.post_tool_use(
        "Read", shapes.read(BIG), {"file_path": relative}, cwd=str(wb.workspace)
    )
    assert await call(guard, by_relative) == {}


async def test_read_through_covers_the_workbench_or_only_spill(wb: Workbench) -> None:
    wb.ensure()
    note = wb.notes / "handoff.md"
    data = shapes.post_tool_use("Read", shapes.read(BIG, str(note)), {"file_path": str(note)})
    assert await call(spill_guard(wb), data) == {}
    assert updated(await call(spill_guard(wb, SpillPolicy(read_through="spill")), data))


async def test_a_sibling_with_the_same_prefix_is_not_inside(wb: Workbench) -> None:
    other = wb.workspace / ".flower-old" / "spill" / "x.txt"
    data = shapes.post_tool_use("Read", shapes.read(BIG, str(other)), {"file_path": str(other)})
    assert updated(await call(spill_guard(wb), data))


# -- files on disk ----------------------------------------------------------------------------------


async def test_files_are_content_addressed_private_and_recorded(wb: Workbench) -> None:
    guard = spill_guard(wb)
    a = updated(await call(guard, shapes.post_tool_use("Bash", shapes.bash(BIG))))
    b = updated(await call(guard, shapes.post_tool_use("Bash", shapes.bash(BIG))))
    path = spill_path(a["stdout"])
    assert path == spill_path(b["stdout"]) and path.parent == wb.spill
    assert path.name.endswith("-bash.txt") and len(path.name.split("-")[0]) == 16
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(wb.spill.stat().st_mode) == 0o700
    assert stat.S_IMODE((wb.spill / "INDEX.jsonl").stat().st_mode) == 0o600
    assert [e["file"] for e in manifest(wb)] == [path.name, path.name]
    assert not [p for p in wb.spill.iterdir() if p.name.endswith(".tmp")]


async def test_a_plain_directory_target(tmp_path: Path) -> None:
    out = updated(
        await call(spill_guard(tmp_path / "spilled"), shapes.post_tool_use("Bash", shapes.bash(BIG)))
    )
    assert spill_path(out["stdout"]).parent == tmp_path / "spilled"


async def test_a_tool_name_cannot_steer_the_file_name(wb: Workbench) -> None:
    tool = "mcp__../../../evil/x"
    guard = spill_guard(wb, SpillPolicy(tools=(tool,)))
    out = updated(await call(guard, shapes.post_tool_use(tool, {"text": BIG})))
    path = spill_path(out["text"])
    assert path.parent == wb.spill and path.name.endswith("-mcp-evil-x.txt")


async def test_head_and_tail_preview(wb: Workbench) -> None:
    out = updated(await call(spill_guard(wb, tail=50), shapes.post_tool_use("Bash", shapes.bash(BIG))))
    lines = out["stdout"].split("\n")
    assert out["stdout"].endswith(BIG[-50:])
    assert "[... 9,850 chars not shown ...]" in lines


async def test_texts_are_overridable(wb: Workbench) -> None:
    policy = SpillPolicy(pointer="OUT {tool}/{field} {chars} @ {path}", head=0, tail=0)
    out = updated(await call(spill_guard(wb, policy), shapes.post_tool_use("Bash", shapes.bash(BIG))))
    assert out["stdout"].startswith("OUT Bash/stdout 10,200 @ ") and "\n" not in out["stdout"]


# -- Bash's own saved output ------------------------------------------------------------------------


async def test_a_bash_output_the_cli_saved_is_copied_whole(wb: Workbench, tmp_path: Path) -> None:
    whole = "x" * 40_000 + "\n" + "E" * 5_000 + "\nTAIL-END\n"
    saved = tmp_path / "tool-results" / "b5we759e8.txt"
    saved.parent.mkdir()
    saved.write_text(whole)
    response = {
        **shapes.bash(whole[:30_000]),
        "persistedOutputPath": str(saved),
        "persistedOutputSize": len(whole),
    }

    out = updated(await call(spill_guard(wb, tail=20), shapes.post_tool_use("Bash", response)))

    assert "persistedOutputPath" not in out and "persistedOutputSize" not in out
    assert out["stdout"].startswith("[spilled] Bash stdout: 45,011 chars") and out["stdout"].endswith(
        "TAIL-END\n"
    )
    assert spill_path(out["stdout"]).read_bytes() == whole.encode()
    assert manifest(wb)[0]["source"] == "persisted"


@pytest.mark.parametrize("threshold", [45_011, 45_012])
async def test_a_saved_output_of_exactly_the_threshold_is_spilled(
    wb: Workbench, tmp_path: Path, threshold: int
) -> None:
    """The CLI kept 30,000 chars in `stdout` and saved all 45,011: a threshold of 45,011 spills it (at or
    over the threshold, as for any field), one of 45,012 leaves the output as the CLI made it."""
    whole = "x" * 45_001 + "\nTAIL-END\n"
    saved = tmp_path / "tool-results" / "b5we759e8.txt"
    saved.parent.mkdir()
    saved.write_text(whole)
    response = {
        **shapes.bash(whole[:30_000]),
        "persistedOutputPath": str(saved),
        "persistedOutputSize": len(whole),
    }

    result = await call(spill_guard(wb, threshold=threshold), shapes.post_tool_use("Bash", response))

    if threshold > len(whole):
        assert result == {} and manifest(wb) == []
        return
    out = updated(result)
    assert out["stdout"].startswith("[spilled] Bash stdout: 45,011 chars")
    assert spill_path(out["stdout"]).read_text() == whole
    assert [row["chars"] for row in manifest(wb)] == [45_011]


async def test_a_saved_output_that_does_not_match_is_not_used(wb: Workbench, tmp_path: Path) -> None:
    saved = tmp_path / "other.txt"
    saved.write_text("y" * 45_011)
    response = {**shapes.bash("x" * 30_000), "persistedOutputPath": str(saved), "persistedOutputSize": 45_011}

    out = updated(await call(spill_guard(wb), shapes.post_tool_use("Bash", response)))

    assert out["persistedOutputPath"] == str(saved), "the CLI's own pointer stays as a fallback"
    assert spill_path(out["stdout"]).read_text() == "x" * 30_000
    assert manifest(wb)[0]["source"] == "output"


# -- failing open and staying inside ----------------------------------------------------------------


async def test_a_symlinked_spill_directory_is_refused(
    wb: Workbench, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    wb.root.mkdir()
    wb.spill.symlink_to(outside, target_is_directory=True)
    with caplog.at_level(logging.WARNING, logger="flower.spill"):
        assert await call(spill_guard(wb), shapes.post_tool_use("Bash", shapes.bash(BIG))) == {}
    assert list(outside.iterdir()) == []
    assert "kept the original Bash output" in caplog.text


async def test_an_unwritable_spill_place_keeps_the_original(wb: Workbench) -> None:
    wb.root.mkdir()
    wb.spill.write_text("a file where the directory should be")
    assert await call(spill_guard(wb), shapes.post_tool_use("Bash", shapes.bash(BIG))) == {}


async def test_fifty_megabytes_spill_without_copies(wb: Workbench) -> None:
    huge = "0123456789abcdef" * (50 * 1024 * 1024 // 16)
    data = shapes.post_tool_use("Bash", shapes.bash(huge))
    guard = spill_guard(wb)
    tracemalloc.start()
    try:
        out = updated(await call(guard, data))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024, f"peak {peak / 1e6:.1f} MB while spilling 50 MB"
    path = spill_path(out["stdout"])
    assert path.stat().st_size == len(huge)


# -- policy and installation ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [
        {"threshold": -1},
        {"threshold": True},
        {"head": -1},
        {"tail": -5},
        {"threshold": 500, "head": 400, "tail": 100},
        {"lists": "all"},
        {"read_through": "anywhere"},
        {"tools": "Bash"},
        {"pointer": "{unknown}"},
        {"omission": "{nope}"},
    ],
)
def test_bad_policies_are_refused(fields: dict[str, Any]) -> None:
    with pytest.raises(SpecError):
        SpillPolicy(**fields)


def test_spill_hooks_installs_nothing_when_turned_off(wb: Workbench) -> None:
    assert spill_hooks(wb, threshold=None) == {}
    assert spill_hooks(wb, threshold=0) == {}
    assert spill_hooks(wb, SpillPolicy(threshold=0)) == {}
    (matcher,) = spill_hooks(wb)["PostToolUse"]
    assert matcher.matcher == "|".join(SPILL_TOOLS) == "Bash|Read|Grep|Glob|WebFetch|WebSearch"
    assert len(matcher.hooks) == 1


async def test_a_turned_off_guard_does_nothing(wb: Workbench) -> None:
    assert await call(spill_guard(wb, threshold=0), shapes.post_tool_use("Bash", shapes.bash(BIG))) == {}


def test_bad_targets_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SpecError):
        spill_guard("")
    with pytest.raises(SpecError):
        spill_guard(42)  # type: ignore[arg-type]
    with pytest.raises(SpecError):
        spill_guard(tmp_path, policy={"threshold": 5})  # type: ignore[arg-type]


def test_keywords_override_the_policy(tmp_path: Path) -> None:
    base = SpillPolicy(head=100)
    assert dataclasses.replace(base, tail=10).tail == 10
    with pytest.raises(SpecError):
        spill_guard(tmp_path, base, head=-1)
