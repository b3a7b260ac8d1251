"""apply_steps fails open, step by step, and says what it skipped: a step that raises, a trim without a
writer, a history that is not one; and a step gets the load's time and branch."""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest

from flower.stores.rewrite import Spill, spill_name
from flower.stores.rewrite._transcript import Rewritten
from flower.stores.rewrite.pipeline import apply_steps

from .transcripts import Transcript


def history() -> list[dict[str, Any]]:
    t = Transcript()
    t.prompt("build")
    t.run("ls", "a b", "toolu_ls")
    return t.entries


def test_a_failing_step_is_skipped_named_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[tuple[Any, Any]] = []

    def broken(entries: list[Any], moment: Any, branch: Any) -> Rewritten:
        raise ValueError("no good")

    def spilling(entries: list[Any], moment: Any, branch: Any) -> Rewritten:
        return Rewritten(entries[:1], spills=(Spill(spill_name("body"), "body"),))

    def probe(entries: list[Any], moment: Any, branch: Any) -> Rewritten:
        seen.append((moment, branch))
        return Rewritten(entries[:1])

    entries = history()
    before = time.perf_counter()
    with caplog.at_level(logging.ERROR, logger="flower.stores"):
        applied = apply_steps(entries, [("broken", broken), ("trim", spilling), ("probe", probe)], now=1e9)
    assert applied.errors == (
        "broken: ValueError: no good",
        "trim: SpecError: trim moved bodies to files but no writer was given",
    )
    assert applied.entries == entries[:1]  # the probe's result, after the two skipped
    assert 0 <= applied.seconds <= time.perf_counter() - before
    assert [r.getMessage() for r in caplog.records] == [
        "flower.stores: the broken rewrite failed; the history is kept without it",
        "flower.stores: the trim rewrite failed; the history is kept without it",
    ]
    ((moment, branch),) = seen
    assert moment is not None and branch is not None


def test_a_history_that_is_not_one_comes_back_as_it_is(caplog: pytest.LogCaptureFixture) -> None:
    odd: list[Any] = [{"type": "user"}, "not an entry"]
    before = time.perf_counter()
    with caplog.at_level(logging.ERROR, logger="flower.stores"):
        applied = apply_steps(odd, [])
    assert applied.entries == odd and applied.changes == () and len(applied.errors) == 1
    assert applied.errors[0].startswith("history: ") and 0 <= applied.seconds <= time.perf_counter() - before
    (record,) = caplog.records
    assert (
        record.getMessage() == f"flower.stores: the history is returned unrewritten: {applied.errors[0][9:]}"
    )
