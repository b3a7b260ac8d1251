"""report_cut and report_guard on plain hook inputs: a long report is saved, then cut or sent back once."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from flower._errors import SpecError
from flower._wall import REPORT_LIMIT, report_cut, report_guard, report_hooks
from flower._wall.report_cut import cut_head
from flower._workbench import Workbench
from tests.wall.report_calls import call, done, stop


@pytest.fixture
def wb(tmp_path: Path) -> Workbench:
    ws = tmp_path / "ws"
    ws.mkdir()
    return Workbench(ws).ensure()


async def test_a_long_report_is_saved_whole_and_sent_back_with_its_path(wb: Workbench) -> None:
    report = "FINDINGS: 3 failures\n" + "log line\n" * 1000
    decision = await call(report_guard(wb), stop(report))

    assert decision["decision"] == "block"
    (saved,) = (wb.artifacts / "reports").iterdir()
    assert str(saved) in decision["reason"] and f"{len(report):,} chars" in decision["reason"]
    assert saved.read_text().endswith(report), "the whole report is on disk"
    assert stat.S_IMODE(os.stat(saved).st_mode) == 0o600
    assert "full report of worker analyst" in wb.index_path.read_text(), "the index lists it at once"


@pytest.mark.parametrize(
    "data",
    [
        stop("short"),
        stop("x" * (REPORT_LIMIT - 1)),
        stop(None),
        stop("x" * 50_000, again=True),  # the second answer passes: a worker never loops
        {"hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": "x" * 50_000},
    ],
    ids=["short", "just-under", "no-message", "second-answer", "main-thread-stop"],
)
async def test_everything_else_passes_untouched(wb: Workbench, data: dict[str, Any]) -> None:
    assert await call(report_guard(wb), data) == {}
    assert not (wb.artifacts / "reports").exists()


async def test_a_plain_directory_target_and_a_unicode_agent_name(tmp_path: Path) -> None:
    target = tmp_path / "reports"
    hook = report_guard(target, limit=10)
    decision = await call(hook, stop("a report of some length", agent="分析员/../x"))
    names = sorted(p.name for p in target.iterdir())
    assert names[0] == ".gitignore" and len(names) == 2, "a directory flower creates is kept out of git"
    saved = target / names[1]
    assert saved.parent == target and decision["decision"] == "block"
    assert saved.read_text().startswith("# desc: full report of worker 分析员/../x (23 chars)")


async def test_it_fails_open_when_the_report_cannot_be_saved(
    wb: Workbench, caplog: pytest.LogCaptureFixture
) -> None:
    (wb.artifacts / "reports").write_text("a file where the directory should be")
    with caplog.at_level(logging.WARNING, logger="flower.report_guard"):
        assert await call(report_guard(wb), stop("x" * 10_000)) == {}
    assert "let a long report through" in caplog.text


async def test_a_long_foreground_report_is_cut_to_its_head_and_saved_whole(wb: Workbench) -> None:
    report = "FINDINGS: 3 failures\n" + "".join(f"log line {i}\n" for i in range(1000))
    result = await call(report_cut(wb, preview=100), done(report))

    output = result["hookSpecificOutput"]["updatedToolOutput"]
    assert {k: v for k, v in output.items() if k != "content"} == {
        "status": "completed",
        "agentId": "a1b2c3",
        "agentType": "analyst",
    }, "the output keeps its shape"
    (text,) = [block["text"] for block in output["content"]]
    head, note = text.split("\n\n")
    assert (
        head.startswith("FINDINGS: 3 failures")
        and len(head) <= 100
        and head.endswith("\n".join(head.splitlines()[-1:]))
        and report[len(head)] == "\n"
    ), "cut at a line end"
    (saved,) = (wb.artifacts / "reports").iterdir()
    assert note == f"[flower: report cut at {len(head)} of {len(report):,} chars; the whole report: {saved}]"
    assert saved.read_text().endswith(report), "the whole report is on disk"
    assert stat.S_IMODE(os.stat(saved).st_mode) == 0o600
    assert "full report of worker analyst" in wb.index_path.read_text()


@pytest.mark.parametrize(
    "data",
    [
        done("short"),
        done("x" * (REPORT_LIMIT - 1)),
        done("x" * 50_000, status="async_launched"),
        done([{"type": "text", "text": "x" * 50_000}, {"type": "image", "source": {}}]),
        done("x" * 50_000, tool="Bash"),
        {**done("x" * 50_000), "hook_event_name": "PreToolUse"},
    ],
    ids=["short", "just-under", "background-launch", "image-block", "other-tool", "other-event"],
)
async def test_the_cut_leaves_everything_else_untouched(wb: Workbench, data: dict[str, Any]) -> None:
    assert await call(report_cut(wb), data) == {}
    assert not (wb.artifacts / "reports").exists()


@pytest.mark.parametrize(
    ("report", "preview", "head"),
    [
        ("abc", 10, "abc"),
        ("line one\nline two\nline three", 20, "line one\nline two"),
        ("x" * 30 + "\n" + "y" * 30, 20, "x" * 20),  # no line end in the second half: a plain cut
        ("abcdefgh\nij", 11, "abcdefgh\nij"),  # as long as the preview: whole, not cut at its line end
        ("  indented  ", 20, "  indented"),  # only the end is stripped
        ("abcde\nfghijklmnop", 10, "abcde"),  # a line end at exactly half the preview still counts
        ("abcde\nfghijklmnop", 11, "abcde"),  # half of 11 is 5, in whole chars
        ("abcde\nfghijklmnop", 12, "abcde\nfghijk"),  # before half of 12: a plain cut
    ],
)
def test_cut_head(report: str, preview: int, head: str) -> None:
    assert cut_head(report, preview) == head


async def test_with_only_background_a_foreground_worker_passes_and_a_background_one_is_sent_back(
    wb: Workbench,
) -> None:
    guard = report_guard(wb, only_background=True)
    long = "x" * 10_000
    assert await call(guard, stop(long, background=[])) == {}, "foreground: report_cut's work"
    other = [{"id": "someone-else", "type": "subagent", "status": "running"}]
    assert await call(guard, stop(long, background=other)) == {}
    mine = [{"id": "a1b2c3", "type": "subagent", "status": "running"}]
    assert (await call(guard, stop(long, background=mine)))["decision"] == "block"
    assert (await call(guard, stop(long)))["decision"] == "block", "not said to be foreground: sent back"
    by_default = report_guard(wb)  # every worker's report, a foreground one too
    assert (await call(by_default, stop(long, background=[])))["decision"] == "block"


def test_report_hooks_installs_the_cut_and_the_background_guard_or_nothing(wb: Workbench) -> None:
    hooks = report_hooks(wb)
    (cut,) = hooks["PostToolUse"]
    (stop_matcher,) = hooks["SubagentStop"]
    assert cut.matcher == "Agent|Task" and len(cut.hooks) == 1
    assert stop_matcher.matcher is None and len(stop_matcher.hooks) == 1
    assert report_hooks(wb, limit=None) == {} and report_hooks(wb, limit=0) == {}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"limit": 0}, "limit must be a positive int"),
        ({"limit": True}, "limit must be an int"),
        ({"limit": "4000"}, "limit must be an int"),
        ({"reason": "{nope}"}, "unknown placeholder"),
    ],
)
def test_bad_arguments_are_refused(wb: Workbench, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError, match=message):
        report_guard(wb, **kwargs)


def test_a_bad_target_is_refused() -> None:
    with pytest.raises(SpecError, match="target needs a Workbench or a directory"):
        report_guard("")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"limit": 0}, "limit must be a positive int"), ({"preview": -1}, "preview must be a positive int")],
)
def test_bad_cut_arguments_are_refused(wb: Workbench, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError, match=message):
        report_cut(wb, **kwargs)


async def test_report_hooks_hands_its_limit_preview_and_reason_to_both_hooks(wb: Workbench) -> None:
    hooks = report_hooks(wb, limit=200, preview=50, reason="SHORTER please: {chars} chars, see {path}")
    cut = hooks["PostToolUse"][0].hooks[0]
    guard = hooks["SubagentStop"][0].hooks[0]
    report = "".join(f"line {i}\n" for i in range(40))  # 310 chars: over 200, far under the default
    (block,) = (await call(cut, done(report)))["hookSpecificOutput"]["updatedToolOutput"]["content"]
    head = block["text"].split("\n\n")[0]
    assert 25 <= len(head) <= 50 and report.startswith(head)
    decision = await call(guard, stop(report, background=[{"id": "a1b2c3"}]))
    assert decision["decision"] == "block" and decision["reason"].startswith("SHORTER please: 310 chars")
    assert await call(guard, stop(report, background=[])) == {}, "a foreground worker: the cut's work"
    assert await call(guard, stop("x" * 199, background=[{"id": "a1b2c3"}])) == {}
