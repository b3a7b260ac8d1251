"""A run through the real CLI, explained by `build_report` and by `flower report`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

from flower import Runtime, coordinator, worker
from flower._cli import main
from flower._demo.pause import pass_time
from flower.report import build_report
from flower.testing import ScriptedModel, agent, bash, http_error, reply, tool_use

pytestmark = pytest.mark.cli

GLANCES = [bash(f"ls -la && echo LOOK-{i}") for i in range(6)]


async def test_a_scripted_run_explained_by_the_api_and_the_command(
    scripted_model: ScriptedModel,
    workspace: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (workspace / "big.txt").write_text("z\n" * 4_000)
    script = workspace.resolve() / ".flower" / "scripts" / "count.sh"
    scripted_model.script(
        "main",
        [
            *GLANCES,
            bash("cat big.txt"),  # a seventh glance, and a big one: spilled on the main thread
            bash("rm -rf big.txt"),  # denied by the delegation wall
            agent("writer", "Write scripts/count.sh: it counts lines."),
            reply(agent("analyst", "Run scripts/count.sh on big.txt."), agent("analyst", "Print 6000 y.")),
            http_error(500),  # the CLI retries this request
            "done",
        ],
    )
    scripted_model.script("writer", [tool_use("Write", file_path=str(script), content='wc -l "$1"\n'), "ok"])
    scripted_model.script(
        "analyst",
        lambda request: (
            ("Done." if request.turn else bash(f"sh {script} big.txt"))
            if "count.sh" in request
            else ("Printed." if request.turn else bash("python3 -c \"print('y' * 6000)\""))
        ),
    )
    workers = {
        "writer": worker("Writes files.", "You write.", tools=["Write", "Read"]),
        "analyst": worker("Runs commands.", "You run commands.", tools=["Bash", "Read"]),
    }
    # the planning tools: with them the CLI's `mode` entry (the mark of a resumed process, written at the
    # end of its turn) reached the store before the Runtime closed the CLI; without them it did not
    planning = ("Agent", "Read", "TaskCreate", "TaskUpdate", "TaskList", "TaskGet")
    five = {"env": {"CLAUDE_CODE_PROMPT_CACHE_TTL": "5m"}}  # a cold resume ten minutes later, within an hour
    lead = coordinator("lead", "Goal: count.", workers, tools=planning, options=five, own_steps=0)
    rt = Runtime(workspace, configure=scripted_model.attach)
    first = await rt.run(lead, "Go.")
    pass_time(workspace / ".flower" / "sessions.db", 600)  # resumed ten minutes later: the cache is cold
    scripted_model.script("main", ["resumed"])
    second = await rt.run(lead, "Go on.", resume=first.session_id)
    assert first.ok and second.ok, (first.error, second.error)

    report = await build_report(workspace)

    (session,) = report.sessions
    assert (session.prompts, session.resumes, session.subagent_runs, report.handoffs) == (2, 1, 3, 0)
    assert (report.turns.main, report.tool_calls.main, report.tool_calls.subagents) == (12, 11, 3)
    assert report.mandates.count == 3 and report.denials.main == 1 and report.api_errors >= 1
    assert (report.scripts.written, report.scripts.runs) == (1, 1)
    assert (report.spills.count, report.spills.main, report.spills.subagents) == (2, 1, 1)
    assert report.spills.chars == 7_999 + 6_000 and 0 < report.spills.kept_out < report.spills.chars
    (resume,) = report.resumes
    assert (resume.expired, resume.denials, resume.warm) == (1, 0, False)  # 7 glances keep 6; 1 denial stays
    assert report.context.peak == max(first.peak_context, second.peak_context)
    assert report.context.window == 1_000_000
    assert report.context.window_from == "model claude-opus-5-5, as the CLI reports it"
    assert report.cost.usd == pytest.approx(first.cost_usd + second.cost_usd, rel=1e-6)  # one cost model

    plots = tmp_path / "plots"
    assert await anyio.to_thread.run_sync(main, ["report", str(workspace), "--plots", str(plots)]) == 0
    text = capsys.readouterr().out
    assert "flower economy report" in text and "2 (1 main, 1 subagents)" in text and "plot:" in text
    for name in ("context.png", "split.png"):
        assert (plots / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert await anyio.to_thread.run_sync(main, ["report", str(workspace / ".flower"), "--json"]) == 0
    by_command = json.loads(capsys.readouterr().out)
    assert by_command.pop("source").endswith(".flower")
    assert by_command == {k: v for k, v in json.loads(report.to_json()).items() if k != "source"}
    assert await anyio.to_thread.run_sync(main, ["report", str(tmp_path / "nothing")]) == 1
    assert "does not exist" in capsys.readouterr().err

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the plots extra were not installed
    for argv in (["report", str(workspace)], ["demo"]):
        assert await anyio.to_thread.run_sync(main, [*argv, "--plots", str(tmp_path / "no-plots")]) == 1
        failed = capsys.readouterr()
        assert failed.out == "" and 'pip install "flower-context[plots]"' in failed.err  # before any work
