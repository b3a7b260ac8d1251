"""`build_report` over stores written by hand: sessions, handoff chains, resumes, spills, and bad sources."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import InMemorySessionStore

from flower import PruningSessionStore, SpecError, SqliteSessionStore, StoreError
from flower._handoff import HANDOFF_PROMPT, TAKEOVER_PROMPT
from flower.report import ReportOptions, build_report
from flower.report._build import compute_report
from flower.report._load import Loaded, SessionData
from tests.stores.transcripts import Transcript

PROJECT = "-projects-demo"
MANDATE = "Write a line counter to the workbench's scripts/ and run it on a.txt."


def used(entries: list[dict[str, Any]], context: int, model: str = "claude-sonnet-4-6") -> None:
    for entry in entries:
        entry["message"]["usage"] = {
            "input_tokens": 100,
            "cache_read_input_tokens": context - 100,
            "output_tokens": 10,
        }
        entry["message"]["model"] = model


def priced(contexts: list[int], *, input: float, output: float, cache_read: float) -> float:
    """What `used` turns cost at these list prices (dollars per million tokens), written out by hand."""
    return sum(100 * input + (context - 100) * cache_read + 10 * output for context in contexts) / 1e6


def coordinator_session() -> tuple[Transcript, Transcript]:
    """Seven glances, two denials, one delegation, a resume, then the handoff prompt."""
    t = Transcript(session_id="aaaaaaaa-0000-4000-8000-000000000000")
    sub = Transcript(session_id=t.session_id)
    t.prompt("Go")
    context = 10_000
    for i in range(7):
        used(t.assistant(t.bash(f"ls -la && echo LOOK-{i}", f"g{i}")), context)
        t.result(f"g{i}", f"a.txt\nLOOK-{i}" + ("x" * 6000 if i == 0 else ""))
        context += 1_000
    for i in range(2):
        used(t.assistant(t.bash("rm -rf build", f"d{i}")), context)
        t.result(f"d{i}", "PreToolUse:Bash hook error: delegate", denial="permission-rule")
    used(t.assistant(t.call("Agent", {"prompt": MANDATE, "subagent_type": "writer"}, "agent")), context)
    t.result("agent", "Wrote scripts/count.sh; a.txt has 3 lines.")
    used(t.assistant({"type": "text", "text": "Done."}), context + 500)
    t.pause(600)
    t.resume("Go on.")  # a resume (a new process) after the cache expired: layer 4 rewrote what came before
    used(t.assistant({"type": "text", "text": "Resumed."}), context + 600)
    t.prompt(HANDOFF_PROMPT.format(used=context, window=200_000))  # not a resume: the same process
    used(t.assistant({"type": "text", "text": "## Doing now\n..."}), context + 700)

    sub.prompt(MANDATE)
    script = "/projects/demo/.flower/scripts/count.sh"
    used(sub.assistant(sub.call("Write", {"file_path": script, "content": "wc -l $1"}, "w")), 3_000)
    sub.result("w", "File created")
    used(sub.assistant(sub.bash(f"sh {script} a.txt", "r")), 3_200)
    sub.result("r", "3 a.txt")
    used(sub.assistant({"type": "text", "text": "Wrote scripts/count.sh; a.txt has 3 lines."}), 3_300)
    for entry in sub.entries:
        entry.update(isSidechain=True, agentId="a1")
    return t, sub


def successor_session() -> Transcript:
    t = Transcript(session_id="bbbbbbbb-0000-4000-8000-000000000000")
    t.prompt(TAKEOVER_PROMPT.format(generation=1, path="notes/handoff.md", document="## Doing now\n..."))
    used(t.assistant({"type": "text", "text": "Taking over."}), 9_000, "claude-haiku-4-5")
    used(t.assistant({"type": "text", "text": "Done again."}), 9_400, "claude-haiku-4-5")
    for entry in t.entries:
        entry["timestamp"] = entry["timestamp"].replace("T10:", "T11:")
    return t


async def store_with_a_run(directory: Path) -> Path:
    """A workspace whose .flower/ holds the two sessions and a spill manifest."""
    bench = directory / ".flower"
    (bench / "spill").mkdir(parents=True)
    (bench / "scripts").mkdir()
    first, sub = coordinator_session()
    second = successor_session()
    async with SqliteSessionStore(bench / "sessions.db") as store:
        await store.append({"project_key": PROJECT, "session_id": first.session_id}, first.entries)
        await store.append(
            {"project_key": PROJECT, "session_id": first.session_id, "subpath": "subagents/agent-a1"},
            sub.entries,
        )
        await store.append({"project_key": PROJECT, "session_id": second.session_id}, second.entries)
    rows = [
        {
            "file": "1-bash.txt",
            "chars": 6_012,
            "tool": "Bash",
            "tool_use_id": "g0",
            "session_id": first.session_id,
            "agent_id": None,
        },
        {
            "file": "2-bash.txt",
            "chars": 5_000,
            "tool": "Bash",
            "tool_use_id": "elsewhere",
            "session_id": "another-run",
            "agent_id": "a9",
        },
    ]
    (bench / "spill" / "INDEX.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return directory


async def test_a_run_with_a_resume_and_a_handoff(tmp_path: Path) -> None:
    workspace = await store_with_a_run(tmp_path)

    report = await build_report(workspace, options=ReportOptions(window=200_000))

    first, second = report.sessions
    assert (first.role, first.handed_off, first.prompts, first.resumes) == ("start", True, 3, 1)
    assert (second.role, second.generation, second.predecessor) == ("successor", 2, first.session_id)
    assert report.handoffs == 1 and report.subagent_runs == 1
    assert (report.turns.main, report.turns.subagents) == (15, 3)
    assert (report.tool_calls.main, report.tool_calls.subagents) == (10, 2)
    assert (report.denials.main, report.denials.subagents) == (2, 0)
    (resume,) = report.resumes
    assert (resume.prompt, resume.after_turns, resume.expired, resume.denials) == (2, 11, 1, 1)
    assert resume.pruned == 1 and resume.chars_saved > 6_000  # the expired glance held the big output
    assert report.mandates.count == 1 and report.mandates.chars == len(MANDATE)
    assert (report.scripts.written, report.scripts.writes, report.scripts.runs) == (1, 1, 1)
    # the other run's spill is not this run's; the kept-out chars are what did not stay resident
    assert (report.spills.count, report.spills.main, report.spills.chars) == (1, 1, 6_012)
    assert report.spills.kept_out == 6_012 - len("a.txt\nLOOK-0" + "x" * 6000)
    context = report.context
    assert (context.start, context.peak, context.last, context.turns) == (10_000, 17_700, 9_400, 15)
    assert (context.window, context.window_from) == (200_000, "option")
    assert context.slope is not None and 400 < context.slope < 1_000  # within each session, pooled
    assert context.wall_turns == pytest.approx((200_000 - 10_000) / context.slope)
    everything = report.tokens.main + report.tokens.subagents
    assert report.tokens.hit_rate == pytest.approx(1 - 100 * 18 / everything.context)
    # every turn priced at its model's list price: the coordinator's and its worker's on Sonnet 4.6
    # ($3 in, $15 out, $0.30 cache read), the successor's on Haiku 4.5 ($1, $5, $0.10)
    sonnet = priced(
        [*range(10_000, 17_000, 1_000), 17_000, 17_000, 17_000, 17_500, 17_600, 17_700, 3_000, 3_200, 3_300],
        input=3.0,
        output=15.0,
        cache_read=0.3,
    )
    haiku = priced([9_000, 9_400], input=1.0, output=5.0, cache_read=0.1)
    assert (sonnet, haiku) == (pytest.approx(0.06801), pytest.approx(0.00212))
    assert report.cost.by_model == (
        ("claude-haiku-4-5", pytest.approx(haiku)),
        ("claude-sonnet-4-6", pytest.approx(sonnet)),
    )
    assert report.cost.usd == pytest.approx(sonnet + haiku) and report.cost.unpriced == ()
    assert (report.cost.keep_warm_usd, report.cost.lower_bound) == (0.0, False)
    data = json.loads(report.to_json())
    assert data["turns"]["subagent_share"] == pytest.approx(3 / 18)
    assert data["resumes"][0]["pruned"] == 1 and data["tokens"]["main"]["context"] > 0
    text = report.render_text()
    assert "successor (gen 2)" in text and "1 expired" in text and "restates the worker rules" in text


def test_a_warm_resume_repeats_the_cold_one_and_a_same_process_prompt_is_no_resume() -> None:
    """Resumed after 10 minutes (cold: it decides), asked again in the same process, then resumed a
    minute later (warm: it repeats what the cold resume decided and counts that)."""
    t, _ = coordinator_session()
    t.prompt("And the tests?")  # the same process as the resume: the CLI wrote no mark
    used(t.assistant({"type": "text", "text": "Green."}), 12_000)
    t.pause(60)
    t.resume("Ship it.")
    used(t.assistant({"type": "text", "text": "Shipped."}), 12_100)

    report = compute_report(Loaded("hand-made", [SessionData(PROJECT, t.session_id, t.entries, {})]))

    cold, warm = report.resumes
    assert (cold.prompt, cold.warm, warm.prompt, warm.warm) == (2, False, 5, True)
    assert (warm.expired, warm.denials, warm.chars_saved) == (cold.expired, cold.denials, cold.chars_saved)
    assert report.sessions[0].resumes == 2 and report.sessions[0].prompts == 5
    assert "cache warm: repeated the last cold resume's rewrites" in report.render_text()


async def test_any_store_object_and_the_paths_to_one(tmp_path: Path) -> None:
    workspace = await store_with_a_run(tmp_path)
    database = workspace / ".flower" / "sessions.db"
    by_file = await build_report(database)
    by_dir = await build_report(workspace / ".flower")
    assert by_file.to_dict()["turns"] == by_dir.to_dict()["turns"]
    assert by_file.spills.count == 1  # the workbench beside the .db was found
    only = await build_report(workspace, sessions=["bbbbbbbb-0000-4000-8000-000000000000"])
    assert [s.role for s in only.sessions] == ["successor"]

    memory = InMemorySessionStore()
    first, _ = coordinator_session()
    await memory.append({"project_key": PROJECT, "session_id": first.session_id}, first.entries)
    layered = PruningSessionStore(memory)  # a Runtime's store: read beneath its rewriting layer
    report = await build_report(layered, project_key=PROJECT)
    assert report.turns.main == 13 and report.denials.main == 2  # nothing was pruned from what it read
    assert report.notes and "no workbench" in report.notes[0]
    with pytest.raises(SpecError, match="project_key"):
        await build_report(memory)


async def test_what_is_not_a_store(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="does not exist"):
        await build_report(tmp_path / "missing")
    with pytest.raises(SpecError, match="no flower session store"):
        await build_report(tmp_path)
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(StoreError):
        await build_report(tmp_path / "notes.txt")
    foreign = tmp_path / "other.db"
    sqlite3.connect(foreign).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(StoreError):
        await build_report(foreign)
    with pytest.raises(SpecError):
        await build_report(42)  # type: ignore[arg-type]
    assert not (tmp_path / "missing").exists()  # reading never creates a file


def test_interleaved_handoff_chains_are_told_apart_by_time() -> None:
    def session(name: str, start: int, end: int, *, takeover: bool, retire: bool) -> SessionData:
        t = Transcript(session_id=f"{name}-session")
        first = TAKEOVER_PROMPT.format(generation=1, path="p", document="d") if takeover else "Go"
        t.prompt(first)["timestamp"] = f"2026-11-29T10:{start:02d}:00.000Z"
        if retire:
            t.prompt(HANDOFF_PROMPT.format(used=1, window=2))["timestamp"] = (
                f"2026-11-29T10:{end:02d}:00.000Z"
            )
        return SessionData(PROJECT, t.session_id, t.entries, {})

    loaded = Loaded(
        "hand-made",
        [
            session("a", 0, 50, takeover=False, retire=True),  # a long step, handed off at :50
            session("x", 10, 30, takeover=False, retire=True),  # another step, handed off at :30
            session("y", 31, 40, takeover=True, retire=False),  # x's successor
            session("b", 51, 59, takeover=True, retire=False),  # a's successor
        ],
    )

    report = compute_report(loaded)

    links = {s.session_id[0]: (s.predecessor or "-")[0] for s in report.sessions}
    assert links == {"a": "-", "x": "-", "y": "x", "b": "a"}
