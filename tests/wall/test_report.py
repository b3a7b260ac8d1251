"""report_guard on plain SubagentStop inputs: a long report is saved and sent back once, nothing else is."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from flower._errors import SpecError
from flower.wall import REPORT_LIMIT, report_guard, report_hooks
from flower.workbench import Workbench


@pytest.fixture
def wb(tmp_path: Path) -> Workbench:
    ws = tmp_path / "ws"
    ws.mkdir()
    return Workbench(ws).ensure()


def stop(report: str | None, *, again: bool = False, agent: str = "analyst") -> dict[str, Any]:
    data: dict[str, Any] = {
        "hook_event_name": "SubagentStop",
        "session_id": "s1",
        "transcript_path": "/nonexistent/s1.jsonl",
        "cwd": "/ws",
        "stop_hook_active": again,
        "agent_id": "a1b2c3",
        "agent_type": agent,
        "agent_transcript_path": "/nonexistent/agent-a1b2c3.jsonl",
    }
    if report is not None:
        data["last_assistant_message"] = report
    return data


async def call(hook: Any, data: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = await hook(data, None, {"signal": None})
    return result


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


def test_report_hooks_installs_one_subagent_stop_hook_or_nothing(wb: Workbench) -> None:
    (matcher,) = report_hooks(wb)["SubagentStop"]
    assert matcher.matcher is None and len(matcher.hooks) == 1
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
