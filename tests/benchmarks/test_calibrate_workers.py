"""benchmarks/calibrate_workers.py counts what the realistic workers' figures rest on.

On transcripts written here (a project agent whose definition asks for a format, a built-in agent whose
tool calls only the CLI's footer gives, a background agent reporting through a task notification, a
failed call, a checkpoint copy of the session, a subagent transcript with thinking and text), its counts
are checked against what was written. On the shared corpus of real transcripts, where it is present, it
is checked to find the calls and replies that corpus holds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.calibrate_workers import FORMAT, figures, measure, report_text, spearman
from tests.stores import corpus
from tests.stores.transcripts import Transcript

FOOTER = "agentId: a1b2c3d (for resuming to continue this agent's work if needed)\n<usage>total_tokens: 9\n"


def _write(path: Path, entries: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))


def _task(t: Transcript, ident: str, agent: str, prompt: str) -> dict[str, Any]:
    return t.call("Task", {"subagent_type": agent, "prompt": prompt, "description": "d"}, ident)


def _session() -> Transcript:
    t = Transcript()
    t.prompt("Check the build.")
    t.assistant({"type": "thinking", "thinking": "t" * 50}, {"type": "text", "text": "I will delegate."})
    t.assistant(_task(t, "k1", "checker", "Check it."))
    t.result("k1", [{"type": "text", "text": "r" * 300}])["toolUseResult"] = {"totalToolUseCount": 1}
    t.assistant(_task(t, "k2", "Explore", "Find the callers."))
    t.result(
        "k2",
        [{"type": "text", "text": "e" * 4_000}, {"type": "text", "text": FOOTER + "tool_uses: 12</usage>"}],
    )
    t.assistant(_task(t, "k3", "general-purpose", "Look around in the background."))
    t.result("k3", [{"type": "text", "text": "Async agent launched successfully."}])["toolUseResult"] = {
        "isAsync": True,
        "agentId": "bg1",
    }
    t.assistant(_task(t, "k4", "Explore", "Fail."))
    t.result("k4", "Agent type not found", is_error=True)
    t.prompt(
        "<task-notification>\n<task-id>bg1</task-id>\n<status>completed</status>\n<result>"
        + "b" * 900
        + "</result>\n<usage><total_tokens>5</total_tokens><tool_uses>3</tool_uses></usage>\n"
        + "</task-notification>"
    )
    t.assistant({"type": "text", "text": "All done."})
    return t


def _subagent() -> list[dict[str, Any]]:
    t = Transcript()
    t.prompt("Find the callers.")
    t.assistant(
        {"type": "thinking", "thinking": "x" * 40}, {"type": "text", "text": "y" * 20}, t.bash("ls", "s1")
    )
    t.result("s1", "a b")
    t.assistant({"type": "text", "text": "z" * 10}, t.bash("ls a", "s2"))
    t.result("s2", "c")
    t.assistant({"type": "text", "text": "the report " * 40})
    for entry in t.entries:
        entry["isSidechain"] = True
        if entry["type"] == "assistant":
            entry["message"]["id"] = "sub_" + entry["message"]["id"]  # ids are unique across real files
    return t.entries


def test_the_tool_counts_each_completed_call_once_with_its_calls_and_report(tmp_path: Path) -> None:
    session = _session().entries
    _write(tmp_path / "s.jsonl", session)
    _write(tmp_path / "copy" / "s.jsonl", session[:12])  # a checkpoint copy: the same calls again
    _write(tmp_path / "s" / "subagents" / "agent-a1.jsonl", _subagent())
    _write(tmp_path / "s" / "subagents" / "agent-acompact-1.jsonl", _subagent())  # not a subagent at work
    (tmp_path / ".claude" / "agents").mkdir(parents=True)
    (tmp_path / ".claude" / "agents" / "checker.md").write_text("# Checker\n\n## Output format\n- verdict\n")
    found = measure(tmp_path.rglob("*.jsonl"))
    calls = {(c.agent, c.calls, c.report_chars, c.project, c.format_asked) for c in found.calls.values()}
    assert calls == {
        ("checker", 1, 300, True, True),
        ("Explore", 12, 4_000, False, False),
        ("general-purpose", 3, 900, False, False),
    }
    result = figures(found)
    assert result["calls"] == 3 and result["calls_left_out"] == 1  # the failed call
    assert result["all"]["buckets"]["1"]["n"] == 1 and result["all"]["buckets"]["10+"]["median"] == 4_000
    assert result["project_format"]["n"] == 1
    sub = result["prose_subagent"]  # two replies before the report, one with thinking
    assert (sub["replies"], sub["thinking_share"], sub["thinking_median"], sub["text_share"]) == (
        2,
        0.5,
        40,
        1.0,
    )
    main = result["prose_main"]  # six replies in the session (and its copy), the last left out
    assert main["replies"] == 5 and main["thinking_share"] == 0.2 and main["thinking_median"] == 50


def test_the_frame_and_the_format_words() -> None:
    assert report_text([{"type": "text", "text": "Done.\n"}, {"type": "text", "text": FOOTER}]) == "Done."
    assert report_text("Done.\n\n" + FOOTER.replace("\n<usage>total_tokens: 9\n", "")) == "Done."
    assert FORMAT.search("Report back in the following format:\n- a") is not None
    assert FORMAT.search("## Output\nOne line per file.") is not None
    assert FORMAT.search("Fix the bug and run the tests.") is None
    assert spearman([(1, 10), (2, 20), (3, 30)]) == 1.0 and spearman([(1, 30), (2, 20), (3, 10)]) == -1.0
    assert spearman([(1, 5), (1, 5)]) == 0.0


SHARED = corpus.real_dir()


@pytest.mark.skipif(
    not any(SHARED.glob("*--agent-*.jsonl")), reason=f"no real subagent transcripts in {SHARED}"
)
def test_the_tool_reads_the_real_transcripts() -> None:
    """The shared corpus's completed subagent calls and its subagents' replies are found."""
    result = figures(measure(SHARED.rglob("*.jsonl")))
    launched = set()
    for path in SHARED.rglob("*.jsonl"):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if '"subagent_type"' in line and '"tool_use"' in line:
                entry = json.loads(line)
                launched |= {
                    b["id"]
                    for b in entry["message"]["content"]
                    if b.get("type") == "tool_use" and b["name"] in ("Task", "Agent")
                }
    assert 0 < result["calls"] <= len(launched)
    assert result["calls"] + result["calls_left_out"] <= len(launched)
    assert result["prose_subagent"]["replies"] > 0 and result["prose_main"]["replies"] > 100
    assert all(c["n"] >= 0 for c in result["all"]["buckets"].values())
