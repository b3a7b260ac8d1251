"""`flower doctor` through the real CLI, and the version warning of a first run."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import pytest

import flower._doctor as doctor
import flower._doctor._selfcheck as selfcheck
import flower._progress as progress
import flower._versions as versions
from flower import Runtime, worker
from flower._cli import main
from flower._glance.jail import ENVIRONMENT
from flower.events import Event, VersionWarning
from flower.testing import ScriptedModel

pytestmark = pytest.mark.cli


def test_doctor_prints_versions_path_credentials_and_every_fact_passing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret-value-never-printed")
    monkeypatch.setattr(progress, "EVERY", 0.2)  # a silent stretch of 0.2 s gets its progress line

    status = main(["doctor"])

    out, err = capsys.readouterr()
    assert status == 0, out
    # what starts, on stderr, before any work; then the step under way while the runs are silent
    assert err.startswith("flower doctor: checking the installation, then an offline self-check"), err
    assert "  ... self-check run 1 of 4: still running, " in err, err
    assert "claude-agent-sdk  " in out and f"(tested: {versions.TESTED_SDK})" in out
    assert "Claude Code CLI   2.1." in out and "_bundled/claude" in out
    assert "ANTHROPIC_API_KEY is set" in out and "sk-secret" not in out
    passed = [line for line in out.splitlines() if line.startswith("  PASS  ")]
    assert len(passed) == len(selfcheck.FACTS) and "FAIL" not in out
    assert f"{len(passed)} of {len(passed)} facts hold" in out


def test_doctor_fails_with_the_fact_that_moved(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    moved = [*selfcheck.FACTS, ("a fact that moved", lambda seen: "the CLI did something else")]
    monkeypatch.setattr(selfcheck, "FACTS", moved)
    monkeypatch.setattr(versions, "_sdk_version", "0.2.150")
    monkeypatch.setattr(doctor.claude_agent_sdk, "__version__", "0.2.150")

    status = main(["doctor"])

    out = capsys.readouterr().out
    assert status == 1
    assert "  FAIL  a fact that moved\n        the CLI did something else" in out
    assert f"0.2.150  (OUTSIDE the tested {versions.TESTED_SDK}" in out


def test_doctor_without_a_cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor, "cli_path", lambda: None)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)

    diagnosis = anyio.run(doctor.diagnose)

    assert not diagnosis.ok and diagnosis.cli is None and diagnosis.checks == ()
    assert "Claude Code CLI   not found" in diagnosis.render_text()
    assert diagnosis.glance_environment == ENVIRONMENT
    env_line = (
        "  glance env        " + " ".join(ENVIRONMENT) + " (and git's read-only settings; nothing else)"
    )
    assert env_line in diagnosis.render_text().splitlines()
    assert main(["doctor", "--no-self-check"]) == 1


async def test_a_first_run_outside_the_tested_range_warns_once(
    scripted_model: ScriptedModel,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(versions, "_warned", set())
    monkeypatch.setattr(versions, "_sdk_version", "0.2.150")
    caplog.set_level(logging.WARNING, logger="flower.versions")
    rt = Runtime(workspace, configure=scripted_model.attach)
    helper = worker("Helps.", "You help.", tools=["Bash"])
    scripted_model.script("main", ["one", "two"])
    first: list[Event] = []
    second: list[Event] = []

    assert (await rt.run(helper, "One.", on_event=first.append)).ok
    assert (await rt.run(helper, "Two.", on_event=second.append)).ok

    (warning,) = [e for e in first if isinstance(e, VersionWarning)]
    assert warning.component == "claude-agent-sdk" and warning.version == "0.2.150"
    assert not any(isinstance(e, VersionWarning) for e in second)
    assert [r.getMessage() for r in caplog.records if r.name == "flower.versions"] == [warning.message]
