"""report_cut, report_guard and mandate_guard rule by rule: each refusal's wording, each boundary, each
answer written out, and what they log when they let a report or a mandate through."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from flower import MANDATE_LINE, SpecError, mandate_guard
from flower._wall import report_cut, report_guard
from flower._wall.mandate import check_mandate_line
from flower._workbench import Workbench
from tests.wall.report_calls import call, done, stop


@pytest.fixture
def wb(tmp_path: Path) -> Workbench:
    (tmp_path / "ws").mkdir()
    return Workbench(tmp_path / "ws").ensure()


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda wb: report_cut(wb, limit=0), r"^report_cut: limit must be a positive int, got 0$"),
        (lambda wb: report_cut(wb, preview=0), r"^report_cut: preview must be a positive int, got 0$"),
        (lambda wb: report_cut(""), r"^report_cut: target needs a Workbench or a directory, got ''$"),
        (lambda wb: report_guard(wb, limit=-1), r"^report_guard: limit must be a positive int, got -1$"),
        (lambda wb: report_guard(""), r"^report_guard: target needs a Workbench or a directory, got ''$"),
        (lambda wb: mandate_guard(None), r"^mandate_guard: line must be a string \(leave the hook out"),
        (lambda wb: mandate_guard("short"), r"^mandate_guard: line must be one line of at least 21"),
        (
            lambda wb: check_mandate_line("x" * 20, "app"),
            r"^app: mandate_line must be one line of at least 21",
        ),
    ],
)
def test_each_refusal_names_its_hook_and_argument(wb: Workbench, build: Any, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        build(wb)


def test_a_limit_of_one_is_positive(wb: Workbench) -> None:
    assert report_cut(wb, limit=1, preview=1) and report_guard(wb, limit=1)


def test_a_mandate_line_of_exactly_the_fingerprints_length_is_enough() -> None:
    assert check_mandate_line("x" * 21, "app") == "x" * 21
    assert check_mandate_line(None, "app") is None


async def test_a_reason_may_format_its_fields_as_it_likes(wb: Workbench) -> None:
    guard = report_guard(wb, limit=100, reason="{chars:>6} of {limit:>4} at {path:>2}")
    decision = await call(guard, stop("r" * 1_000))
    (saved,) = (wb.artifacts / "reports").iterdir()
    assert decision == {"decision": "block", "reason": f" 1,000 of  100 at {saved}"}


async def test_a_report_of_exactly_the_limit_is_cut_and_sent_back(wb: Workbench) -> None:
    report = "y" * 99 + "\n"
    result = await call(report_cut(wb, limit=100, preview=10), done(report))
    assert result["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    (block,) = result["hookSpecificOutput"]["updatedToolOutput"]["content"]
    assert set(block) == {"type", "text"} and block["type"] == "text"
    assert block["text"].startswith("y" * 10 + "\n\n[flower: report cut at 10 of 100 chars")
    decision = await call(report_guard(wb, limit=100, reason="over {limit}: {chars}"), stop(report))
    assert decision == {"decision": "block", "reason": "over 100: 100"}
    assert await call(report_cut(wb, limit=101), done(report)) == {}


async def test_a_worker_without_a_type_is_saved_as_a_worker(wb: Workbench) -> None:
    unnamed = done("z" * 5_000)
    del unnamed["tool_response"]["agentType"]
    await call(report_cut(wb), unnamed)
    data = stop("w" * 5_000)
    del data["agent_type"]
    await call(report_guard(wb), data)
    saved = sorted((wb.artifacts / "reports").iterdir())
    assert [p.name.split("-", 1)[1] for p in saved] == ["report-worker.txt"] * 2
    assert all(p.read_text().startswith("# desc: full report of worker worker (5,000 chars)") for p in saved)


async def test_a_long_agent_name_is_cut_to_80_chars_in_the_description(wb: Workbench) -> None:
    await call(report_guard(wb), stop("w" * 5_000, agent="a  b " + "n" * 100))
    (saved,) = (wb.artifacts / "reports").iterdir()
    assert saved.read_text().splitlines()[0] == "# desc: full report of worker " + ("a b " + "n" * 100)[
        :80
    ] + (" (5,000 chars)")


async def test_the_text_blocks_of_a_report_are_joined_by_line_ends(wb: Workbench) -> None:
    blocks = [{"type": "text", "text": "a" * 3_000}, {"type": "text", "text": "b" * 3_000}]
    await call(report_cut(wb), done(blocks))
    (saved,) = (wb.artifacts / "reports").iterdir()
    assert saved.read_text().endswith("a" * 3_000 + "\n" + "b" * 3_000)


async def test_a_report_that_is_not_all_text_passes_without_a_word(
    wb: Workbench, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        assert await call(report_cut(wb), done([{"type": "text", "text": 5}] * 2)) == {}
        assert await call(report_cut(wb), done([])) == {}
    assert caplog.records == []


async def test_letting_a_report_through_is_logged_with_its_cause(
    wb: Workbench, caplog: pytest.LogCaptureFixture
) -> None:
    (wb.artifacts / "reports").write_text("a file where the directory should be")
    with caplog.at_level(logging.WARNING, logger="flower.report_guard"):
        assert await call(report_cut(wb), done("x" * 10_000)) == {}
        assert await call(report_guard(wb), stop("x" * 10_000)) == {}
    cut, guard = caplog.records
    for record, name in ((cut, "report_cut"), (guard, "report_guard")):
        assert record.getMessage().startswith(f"{name} let a long report through: ")
        assert record.getMessage().endswith("must be a real directory (not a file or a symlink)")
        assert record.exc_info  # the OSError itself


async def test_a_failed_mandate_rewrite_is_logged_and_the_call_goes_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, logger="flower.mandate"):
        assert await mandate_guard(MANDATE_LINE)(["not", "a", "mapping"], "toolu_1", None) == {}  # type: ignore[arg-type]
    (record,) = caplog.records
    assert record.getMessage() == "mandate_guard failed; the mandate goes out unchanged" and record.exc_info


async def test_start_guard_takes_up_to_30_seconds_and_never_fails_a_call(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from flower._wall.starts import start_guard

    assert start_guard(30)
    with pytest.raises(
        SpecError, match=r"^start_guard: hold must be a number of seconds in \(0, 30\], got 30\.5$"
    ):
        start_guard(30.5)
    guard = start_guard(1)
    with caplog.at_level(logging.ERROR, logger="flower.starts"):
        call = {"hook_event_name": "PreToolUse", "tool_name": "Agent"}
        assert await guard({**call, "tool_input": None}, "t1", None) == {}  # type: ignore[arg-type]
        assert await guard({**call, "tool_input": {"subagent_type": 3}}, "t2", None) == {}  # type: ignore[arg-type]
        assert await guard(["not", "a", "mapping"], "t3", None) == {}  # type: ignore[arg-type]
    assert caplog.records == []

    class Broken(dict):  # type: ignore[type-arg]
        def get(self, *args: Any) -> Any:
            raise RuntimeError("a hook input that cannot be read")

    with caplog.at_level(logging.ERROR, logger="flower.starts"):
        assert await guard(Broken(), "t4", None) == {}  # type: ignore[arg-type]
    (record,) = caplog.records
    assert record.getMessage() == "start_guard failed; the call goes through" and record.exc_info


async def test_a_saved_report_whose_index_cannot_be_refreshed_is_logged_and_sent_back(
    wb: Workbench, caplog: pytest.LogCaptureFixture
) -> None:
    (wb.root / "INDEX.md").unlink(missing_ok=True)
    (wb.root / "INDEX.md").mkdir()  # the index's rename onto it fails
    with caplog.at_level(logging.WARNING, logger="flower.report_guard"):
        decision = await call(report_guard(wb, limit=100, reason="at {path}"), stop("r" * 1_000))
    (saved,) = (wb.artifacts / "reports").iterdir()
    assert decision == {"decision": "block", "reason": f"at {saved}"}
    (record,) = caplog.records
    message = record.getMessage()
    assert message.startswith(f"report_guard saved {saved} but could not refresh the index: ")
    assert "INDEX.md" in message.removeprefix(f"report_guard saved {saved}")  # the error itself
