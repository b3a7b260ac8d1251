"""Handoff pieces that need no CLI: the policy's lines, parsing the document, the degraded one, saving."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from flower import Handoff, HandoffPolicy, SpecError, WorkbenchError, parse_handoff
from flower._handoff.document import degraded_handoff, save_handoff


def test_the_threshold_sits_below_the_cli_lines() -> None:
    policy = HandoffPolicy()
    assert policy.threshold(200_000) == 147_000 and policy.warn_at(200_000) == 127_000
    assert policy.threshold(1_000_000) == 947_000
    for window in (60_000, 200_000, 1_000_000):
        assert policy.threshold(window) < window - 33_000 or policy.threshold(window) == window // 4
    assert HandoffPolicy(reserve=0).threshold(200_000) == 167_000


@pytest.mark.parametrize(
    "kwargs",
    [{"reserve": -1}, {"window": 10_000}, {"max_generations": 0}, {"prompt": "{nope}"}, {"takeover": "{x}"}],
)
def test_bad_policies(kwargs: dict) -> None:
    with pytest.raises(SpecError):
        HandoffPolicy(**kwargs)


def test_parse_markdown_and_bold_headings_with_aliases() -> None:
    text = """Here it is.
## Doing now
Porting the parser.
### Decisions
- keep the old API (users depend on it)
**Dead ends:**
- regex approach: too slow
## Next steps
Run `make test`.
## Files
- src/parser.py
"""
    handoff = parse_handoff(text)
    assert handoff is not None
    assert handoff.doing == "Porting the parser." and handoff.next == "Run `make test`."
    assert "keep the old API" in handoff.decided and "regex" in handoff.dead_ends
    assert "src/parser.py" in handoff.where
    assert handoff.render().startswith("## Doing now\nPorting the parser.")


def test_headings_inside_code_fences_do_not_count() -> None:
    text = "## Doing now\nx\n```\n## Next step\nfake\n```\n"
    assert parse_handoff(text) is None
    assert parse_handoff("## Doing now\nonly this") is None
    assert parse_handoff(None) is None  # type: ignore[arg-type]


def test_a_degraded_handoff_points_to_the_disk() -> None:
    handoff = degraded_handoff(
        why="the CLI refused a prompt too long",
        task="T" * 3000,
        texts=["first", "second", "", "last words"],
        calls=[f"Bash echo {i}" for i in range(20)],
        reason="overflow",
    )
    assert handoff.degraded and handoff.reason == "overflow"
    assert "T" * 1500 + " [...]" in handoff.doing and "T" * 1501 not in handoff.doing
    assert "last words" in handoff.decided and "Look before acting" in handoff.next
    assert "Bash echo 19" in handoff.where and "Bash echo 7" not in handoff.where


def test_a_degraded_handoff_carries_the_workers_reports_each_cut_at_4000_characters() -> None:
    reports = ["analyst a1 ('count'):\nREPORT: 42 files", "analyst a2 ('scan'):\n" + "R" * 5000]
    handoff = degraded_handoff(why="w", task="t", texts=[], calls=[], reason="overflow", reports=reports)
    assert "The reports of its background workers" in handoff.decided
    assert "REPORT: 42 files" in handoff.decided and "R" * 3900 + " [... cut]" in handoff.decided
    assert "R" * 4001 not in handoff.decided
    plain = degraded_handoff(why="w", task="t", texts=[], calls=[], reason="overflow")
    assert "background workers" not in plain.decided


def test_save_archives_the_previous_document(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    first = save_handoff(notes, Handoff(doing="a", next="b").render(), generation=2)
    second = save_handoff(notes, Handoff(doing="c", next="d").render(), generation=3)
    assert first == second == notes / "handoff.md"
    assert "## Doing now\nc" in second.read_text() and "generation 3" in second.read_text()
    (archived,) = (notes / "archive").iterdir()
    assert "## Doing now\na" in archived.read_text() and archived.name.endswith("-gen2.md")
    assert stat.S_IMODE(os.stat(second).st_mode) == 0o600


def test_save_refuses_a_symlink(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "handoff.md").symlink_to(tmp_path / "elsewhere.md")
    with pytest.raises(WorkbenchError, match="not a regular file"):
        save_handoff(notes, "doc", generation=2)
    assert not (tmp_path / "elsewhere.md").exists()
