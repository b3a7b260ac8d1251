"""The tested version ranges, and the once-per-process warning outside them."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

import flower._versions as versions
from flower._versions import (
    TESTED_CLI,
    TESTED_PARSER,
    TESTED_SDK,
    VersionRange,
    installed_version,
    version_warnings,
)
from flower.events import VersionWarning


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A process that has warned about nothing yet."""
    monkeypatch.setattr(versions, "_warned", set())
    yield


@pytest.mark.parametrize(
    ("version", "inside"),
    [
        ("0.2.184", True),
        ("0.2.190", True),
        ("0.2.186", True),
        ("0.2.183", False),
        ("0.2.191", False),
        ("0.3.0", False),
        ("0.2.150", False),
        ("0.2.189.post1", True),
        ("v0.2.185", True),
        ("not a version", False),
        ("", False),
    ],
)
def test_sdk_range(version: str, inside: bool) -> None:
    assert TESTED_SDK.contains(version) is inside


def test_versions_compare_by_number_not_by_text() -> None:
    assert str(TESTED_CLI) == "2.1.327 to 2.1.337"
    assert VersionRange(component="x", oldest="1.2", newest="1.10").contains("1.9")


def test_warns_once_per_component_and_logs(
    fresh: None, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(versions, "_sdk_version", "0.2.150")
    caplog.set_level(logging.WARNING, logger="flower.versions")

    first = version_warnings("2.1.400")
    again = version_warnings("2.1.401")

    assert [w.component for w in first] == ["claude-agent-sdk", "Claude Code CLI"] and again == []
    sdk, cli = first
    assert sdk == VersionWarning(
        component="claude-agent-sdk",
        version="0.2.150",
        tested="0.2.184 to 0.2.190",
        message=sdk.message,
    )
    assert "outside the range flower was tested with" in sdk.message and "flower doctor" in sdk.message
    assert cli.version == "2.1.400"
    assert [r.name for r in caplog.records] == ["flower.versions", "flower.versions"]


def test_a_bash_grammar_outside_the_range_is_warned_about(
    fresh: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(versions, "installed_version", lambda package: "0.26.0")
    (warning,) = version_warnings(None)
    assert warning.component == "tree-sitter-bash" and warning.version == "0.26.0"
    assert TESTED_PARSER.contains(versions.installed_version("tree-sitter-bash")) is False


def test_the_installed_bash_grammar_is_the_tested_one() -> None:
    assert TESTED_PARSER.contains(installed_version("tree-sitter-bash"))
    assert installed_version("no-such-distribution-here") == "not installed"


def test_no_warning_inside_the_range(fresh: None) -> None:
    assert version_warnings("2.1.337") == []
    assert version_warnings(None) == []
