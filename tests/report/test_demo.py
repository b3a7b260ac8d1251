"""`flower demo`: the main job end to end (the slow test of this package), and `--live` without a key."""

from __future__ import annotations

import json
import os
import re
import signal
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import anyio
import pytest

from flower import _cli as cli
from flower._cli import main
from flower._progress import Heartbeat
from flower.report import build_report_sync
from flower.report._sources import load_source
from flower.testing._otlp import OtlpReceiver
from flower.tracing import export_sessions
from tests.e2e.processes import cli_processes


@pytest.mark.cli
@pytest.mark.slow
def test_the_demo_runs_the_main_job_and_compares(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kept, plots = tmp_path / "kept", tmp_path / "plots"
    status = main(["demo", "--keep", str(kept), "--plots", str(plots), "--json"])

    captured = capsys.readouterr()
    out, result = captured.err, json.loads(captured.out)  # --json: progress on stderr, JSON on stdout
    assert status == 0, out
    assert out.startswith("flower demo: starting the main job, offline"), out  # at once, before any work
    delegations = re.findall(r"^  \[(\d\d)\]", out, flags=re.MULTILINE)
    assert len(delegations) >= 12 and delegations[-1] == f"{len(delegations):02d}"
    for line in (
        "flower, step 1: the survey",
        "denied   Write",
        "denied   Bash",
        "api      HTTP 500 from the scripted model (a failure the scenario plays); the CLI retries",
        "[1] tokens per main-thread turn, least squares, restarting where a handoff",  # the table's notes
        "generation 2 starts from notes/handoff.md",
        "plain SDK, step 2, 65 minutes later: resume the session",
        "== side by side",
        "demo finished in",
    ):
        assert line in out, f"missing {line!r} in:\n{out}"
    assert re.search(r"layer 4  resume rewrote the history: [1-9]\d* expired, 1 pruned", out), out
    assert "Most errors: service-06: 63 errors" in out  # the answer, read from real command outputs
    flower_part = out.split("plain SDK, step 1")[0]
    written = re.findall(r"writer   Wrote (\S+)\.$", flower_part, flags=re.MULTILINE)
    assert ".flower/notes/log-audit.md" in written and len(written) == 3
    for path in written:  # a worker's "Wrote" is a file on disk, never a refused Write
        assert (kept / "flower" / path).is_file(), path
    assert not re.search(r"^  refused ", out, flags=re.MULTILINE)

    report = build_report_sync(kept / "flower")
    assert report.handoffs == 1 and report.mandates.count >= 12 and report.denials.main == 2
    assert report.delegation.workers >= 12 and report.delegation.start_cache_read > 0
    assert report.spills.count >= 12 and report.scripts.runs >= 12 and report.scripts.written == 1
    assert report.resumes[0].expired >= 1 and report.api_errors >= 1 and report.refusals.total == 0
    plain = build_report_sync(kept / "plain")
    assert plain.spills.count == 0 and plain.context.peak > 1.5 * max(s.context[-1] for s in report.sessions)
    compared = re.search(r"handoffs / compactions\s+(\d+) / (\d+)\s+(\d+) / (\d+)", out)
    assert compared is not None and compared.groups()[:3] == ("1", "0", "0")
    assert int(compared.group(4)) >= 1  # the plain session compacts where flower hands off
    assert sorted(p.name for p in plots.iterdir()) == ["context.png", "split.png"]

    verdict = result["verdict"]  # what flower bought, what it cost, where the crossover lies
    assert result["ok"] and result["flower"]["cost"]["usd"] == verdict["flower_cost"] > 0
    assert verdict["flower_peak"] == report.context.peak < verdict["plain_peak"] == plain.context.peak
    assert verdict["flower_cost"] == pytest.approx(report.cost.usd) and verdict["kept_out"] > 0
    said = " ".join(out.split("== verdict")[1].split())  # printed wrapped
    assert "flower bought a main thread" in said and "estimated with flower's cost model" in said
    assert "Crossover:" in said and all(line in said for line in verdict["lines"])

    # traced, the handoff's interrupt of an Agent call is an interrupted call, not an error span
    loaded = anyio.run(load_source, kept / "flower")
    with OtlpReceiver() as receiver:
        sent = export_sessions(loaded.sessions, endpoint=receiver.endpoint, spills=loaded.spills)
    assert sent.failed is None and sent.spans == len(receiver.spans) > 0
    assert [s.name for s in receiver.spans if s.status_code == 2] == []
    interrupted = [s for s in receiver.spans if s.attributes.get("flower.tool.interrupted") is True]
    assert [s.name for s in interrupted] == ["execute_tool Agent"]
    assert "error.type" not in interrupted[0].attributes


@pytest.mark.cli
def test_a_demo_whose_cli_is_interrupted_prints_no_verdict(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # SIGINT reaches the CLI alone, as in a background job of a non-interactive shell or some CI runners:
    # the CLI ends its run, Python goes on
    interrupted: list[int] = []
    printer = cli._printer

    def interrupting(beat: Heartbeat, stream: TextIO) -> Callable[[str], None]:
        out = printer(beat, stream)

        def watch(line: str) -> None:
            out(line)
            if line.startswith("  [01]") and not interrupted:
                interrupted.extend(cli_processes())
                for pid in interrupted:
                    os.kill(pid, signal.SIGINT)

        return watch

    monkeypatch.setattr(cli, "_printer", interrupting)

    status = main(["demo"])

    captured = capsys.readouterr()
    assert status == 1 and interrupted, captured.out
    assert "flower, step 1: the survey" in captured.out and "  result   did not finish: " in captured.out
    for absent in (
        "flower, step 2",
        "plain SDK",
        "== the flower run",
        "== side by side",
        "== verdict",
        "demo ",
    ):
        assert absent not in captured.out, f"{absent!r} printed for a run cut short:\n{captured.out}"
    assert "flower demo: error: the flower run's step 1 did not finish" in captured.err
    assert "no report, table or verdict" in captured.err


def test_live_needs_credentials_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    for name in ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))

    assert main(["demo", "--live"]) == 1
    assert "needs credentials: set ANTHROPIC_API_KEY" in capsys.readouterr().err

    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file").write_text("x")
    assert main(["demo", "--keep", str(tmp_path / "busy")]) == 1
    assert "new or empty directory" in capsys.readouterr().err
    assert main(["nonsense"]) == 2
