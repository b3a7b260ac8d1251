"""`RunLines` and `event_json` on plain events: the line each event a person cares about gets, the counts
of the economy line, and one JSON object per event."""

from __future__ import annotations

import json
from pathlib import Path

from flower import StepResult
from flower import events as ev
from flower._terminal import RunLines, event_json, first_words


def _lines(tmp_path: Path) -> tuple[RunLines, list[str]]:
    printed: list[str] = []
    return RunLines(printed.append, workbench=tmp_path / ".flower"), printed


def test_a_worker_line_names_it_with_its_mandates_first_words(tmp_path: Path) -> None:
    lines, printed = _lines(tmp_path)
    mandate = "Find where the config is parsed and list every option it reads, with the file and line. " * 2
    lines(ev.ToolCall(agent=None, name="Agent", tool_use_id="t1", input={"prompt": mandate}))
    lines(
        ev.SubagentStarted(agent="analyst", task_id="a1", tool_use_id="t1", description="d", background=False)
    )
    assert printed == [f"  worker   analyst: {first_words(mandate, 80)}"]
    assert printed[0].endswith("…") and lines.counts.delegations == 1


def test_a_glance_and_a_refusal_of_the_coordinator(tmp_path: Path) -> None:
    lines, printed = _lines(tmp_path)
    lines(ev.ToolCall(agent=None, name="Bash", tool_use_id="g", input={"command": "git status -s"}))
    lines(ev.ToolResult(agent=None, tool_use_id="g", text=" M x.py", is_error=False))
    lines(ev.ToolCall(agent=None, name="Bash", tool_use_id="r", input={"command": "rm -rf build"}))
    lines(
        ev.ToolResult(agent=None, tool_use_id="r", text="PreToolUse:Bash hook error: delegate", is_error=True)
    )
    assert printed == [
        "  glance   git status -s",
        "  refused  Bash 'rm -rf build': the coordinator delegates it",
    ]
    assert (lines.counts.glances, lines.counts.refused) == (1, 1)


def test_a_spill_is_read_from_the_manifest_by_its_row(tmp_path: Path) -> None:
    spill = tmp_path / ".flower" / "spill"
    spill.mkdir(parents=True)
    (spill / "INDEX.jsonl").write_text('{"file": "old.txt", "chars": 1}\n')  # before the run: not this run's
    lines, printed = _lines(tmp_path)
    row = {"file": "ab-bash.txt", "chars": 52340, "tool": "Bash", "agent_type": "analyst"}
    with (spill / "INDEX.jsonl").open("a") as file:
        file.write(json.dumps(row) + "\n" + '{"file": "half')  # a line still being written waits
    lines(ev.ToolResult(agent="analyst", tool_use_id="x", text="[spilled] ...", is_error=False))
    assert printed == ["  spill    analyst's Bash output, 52,340 chars -> spill/ab-bash.txt"]
    assert (lines.counts.spills, lines.counts.spilled_chars) == (1, 52340)


def test_cost_so_far_adds_up_across_a_handoff(tmp_path: Path) -> None:
    lines, printed = _lines(tmp_path)
    lines(ev.SessionStarted(session_id="s1", resumed=False))
    lines(ev.Result(session_id="s1", text="", is_error=False, cost_usd=0.5, num_turns=3))
    lines(ev.SessionStarted(session_id="s2", resumed=False))
    lines(ev.Result(session_id="s2", text="", is_error=False, cost_usd=0.25, num_turns=1))
    assert printed[-1] == "  cost     $0.7500 so far" and lines.counts.session_id == "s2"


def test_the_economy_line_says_what_each_layer_did(tmp_path: Path) -> None:
    lines, _ = _lines(tmp_path)
    (tmp_path / ".flower" / "scripts").mkdir(parents=True)
    (tmp_path / ".flower" / "scripts" / "count.sh").write_text("# desc: count\n")
    result = StepResult(session_id="s", ok=True, text="done", cost_usd=0.1234, peak_context=12345)
    line = lines.economy(result, tmp_path / ".flower")
    assert line.startswith("$0.1234 · main thread peak 12,345 tokens · wall: 0 delegations")
    assert "workbench: 1 script, 0 artifacts, 0 notes" in line and "handoff: 0" in line


def test_colour_only_when_asked() -> None:
    printed: list[str] = []
    RunLines(printed.append, workbench=None, colour=True).line("glance", "ls")
    assert printed == ["  \x1b[1mglance   \x1b[0mls"]


def test_event_json_is_one_object_per_event() -> None:
    event = ev.ToolCall(agent="分析员", name="Bash", tool_use_id="t", input={"command": "wc -l *"})
    line = event_json(event)
    assert "\n" not in line
    assert json.loads(line) == {
        "event": "ToolCall",
        "agent": "分析员",
        "name": "Bash",
        "tool_use_id": "t",
        "input": {"command": "wc -l *"},
    }


def test_a_handoff_and_an_api_error_get_a_line_each(tmp_path: Path) -> None:
    lines, printed = _lines(tmp_path)
    lines(ev.HandoffWarning(context=140_000, threshold=147_000, window=200_000))
    lines(
        ev.HandoffDone(
            generation=2,
            retired="s1",
            reason="threshold",
            degraded=False,
            context=147_100,
            path=str(tmp_path / ".flower" / "notes" / "handoff-1.md"),
            document="## Doing now\n...",
        )
    )
    lines(ev.ApiError(agent=None, message="HTTP 529 overloaded_error", status=529, retrying=True))
    assert printed == [
        "  context  140,000 tokens; handoff at 147,000",
        "  handoff  at 147,100 tokens: generation 2 starts from notes/handoff-1.md",
        "  api      HTTP 529 overloaded_error (retrying)",
    ]
    assert lines.counts.handoffs == 1
