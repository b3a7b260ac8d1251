"""The docs name the SDK and CLI versions flower is tested with as `flower._versions` says them.

A page that names a tested range ("`claude-agent-sdk` 0.2.184 to 0.2.190", "CLI 2.1.327 to 2.1.337")
must name the range the code checks against: a release bump that moves `TESTED_SDK` or `TESTED_CLI`
fails here until every page says the same. A single version ("measured with CLI 2.1.332") or another range
(the CLI versions of real sessions) is a record of where a fact was measured, and is left alone.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from flower._versions import TESTED_CLI, TESTED_SDK, VersionRange

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("**/*.md")])

_RANGE = re.compile(r"\b(\d+\.\d+\.\d+) to (\d+\.\d+\.\d+)\b")


def ranges(text: str) -> list[tuple[str, str]]:
    """Every "A to B" of two version numbers in `text`, with B's major.minor the same as A's."""
    return [(a, b) for a, b in _RANGE.findall(text) if a.split(".")[:2] == b.split(".")[:2]]


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def wrong(text: str, tested: VersionRange) -> list[str]:
    """The ranges that claim to be `tested`'s but are not: one that starts at its oldest version and
    ends elsewhere, or one that reaches past its newest. (Other ranges of the same series, such as the
    CLI versions of real transcripts, are records, not claims.)"""
    oldest, newest = _key(tested.oldest), _key(tested.newest)
    return [
        f"{a} to {b}"
        for a, b in ranges(text)
        if len(_key(a)) == len(oldest)
        and _key(a)[:2] == oldest[:2]
        and ((_key(a) == oldest and _key(b) != newest) or _key(b) > newest)
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_tested_range_a_page_names_is_the_codes(page: Path) -> None:
    text = " ".join(page.read_text(encoding="utf-8").split())  # a range may wrap across lines
    for tested in (TESTED_SDK, TESTED_CLI):
        assert wrong(text, tested) == [], (
            f"{page.relative_to(ROOT)} names a {tested.component} range other than the tested "
            f"{tested.oldest} to {tested.newest} (flower/_versions.py)"
        )


def test_the_check_catches_a_stale_range() -> None:
    sdk = VersionRange(component="claude-agent-sdk", oldest="0.2.184", newest="0.2.190")
    assert wrong("Tested with `claude-agent-sdk` 0.2.184 to 0.2.189;", sdk) == ["0.2.184 to 0.2.189"]
    assert wrong("with 0.2.184 to 0.2.190 and CLI 2.1.327 to 2.1.337", sdk) == []
    assert wrong("Python 3.11 to 3.14, measured with CLI 2.1.332", sdk) == []
    assert wrong("real sessions of CLI 0.2.44 to 0.2.52", sdk) == []  # a record, not a claim
    assert wrong("tested up to 0.2.185 to 0.2.191", sdk) == ["0.2.185 to 0.2.191"]
