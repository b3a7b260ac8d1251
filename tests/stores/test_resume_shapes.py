"""The shapes of real sessions that misled layer 4, each built as the CLI writes it.

- a compacted session resumed warm: the last cold load's rewrites are repeated on entries the
  compaction took off what the CLI replays, and they save nothing (named apart, `unreplayed`);
- a slash command typed after an idle gap, in a transcript without resume marks: it ran in a live
  process, so it is no load, and a resume seconds later repeats the load before it;
- a CLI that marks every resumed process and an idle gap inside one process: no mark, no load;
- the 1-hour prompt cache, told by the usage of a CLI that recorded no `promptCacheRequested`;
- an old-format interrupt whose "STOP what you are doing…" also sits in `toolUseResult`, and expired
  and trimmed Bash bodies copied there.

The CLI tests resume through the real CLI on the scripted model and read what the model saw.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import InMemorySessionStore, SessionKey
from claude_agent_sdk._internal.sessions import project_key_for_directory

from flower.stores import CachePolicy, EphemeralPolicy, PrunePolicy, PruningSessionStore, TrimPolicy
from flower.stores._rewrite import (
    CLI_ORPHAN_NOTE,
    OLD_REJECTION,
    is_command,
    load_points,
    rewrite_history,
    rewrite_point,
)
from flower.testing import RecordedRequest, ScriptedModel, bash

from .resumes import bare_and_flower
from .transcripts import Transcript, dumps

KEY: SessionKey = {"project_key": "proj", "session_id": "sess"}
GIT = EphemeralPolicy(keep_recent=2, predicate=lambda c: c.startswith("git status"))
OLD_CLI = "2.1.17"
REVIEW = "\n".join(
    (
        "<command-message>review</command-message>",
        "<command-name>/review</command-name>",
        "<command-args></command-args>",
    )
)


def status(i: int) -> str:
    """A `git status` body longer than the note that would replace it."""
    return f"status {i}\n" + "\n".join(f" M src/package/module_{i}_{k}.py" for k in range(8))


def written_by(t: Transcript, version: str) -> Transcript:
    """Every entry stamped with the CLI version that wrote it."""
    for entry in t.entries:
        if "version" in entry:
            entry["version"] = version
    return t


def glanced_then_idle(count: int) -> Transcript:
    """A prompt, `count` `git status` results, then ten minutes of idle (the next load is cold)."""
    t = Transcript()
    t.prompt("work")
    for i in range(count):
        t.run("git status", status(i), f"toolu_gs{i}")
    t.pause(600)
    return t


def compact(request: RecordedRequest) -> int:
    return len(json.dumps(request.messages, ensure_ascii=False, separators=(",", ":")))


# -- a compacted session resumed warm ----------------------------------------------------------------------


def compacted_after_a_cold_resume() -> tuple[Transcript, int]:
    """Six `git status` results, a resume ten minutes later (cold: it expires four), two more turns, a
    compaction, one turn after it; and the index of the resumed prompt."""
    t = glanced_then_idle(6)
    resumed = t.resume("go on")
    t.run("git status", status(6), "toolu_gs6")
    t.assistant({"type": "text", "text": "Done with that."})
    t.compact_summary("This session is being continued from a previous conversation. Summary: tidied.")
    t.prompt("next")
    t.assistant({"type": "text", "text": "Next it is."})
    return t, t.entries.index(resumed)


async def test_a_warm_load_after_a_compaction_counts_nothing_the_cli_does_not_replay() -> None:
    t, resumed = compacted_after_a_cold_resume()
    store = PruningSessionStore(InMemorySessionStore(), ephemeral=GIT)
    await store.append(KEY, t.snapshot())  # type: ignore[arg-type]
    store.clock = lambda: t.last_time + 60

    loaded = await store.load(KEY) or []

    report = store.last_report
    assert report is not None and report.warm
    assert report.changes == () and report.chars_saved == 0, "the expiries sit before the compaction"
    boundary = next(i for i, e in enumerate(t.entries) if e.get("subtype") == "compact_boundary")
    assert dumps(loaded[boundary:]) == dumps(t.entries[boundary:]), "what the CLI replays, as sent"
    expired = [e for e in loaded[:resumed] if "expired" in json.dumps(e.get("message"))]
    assert len(expired) == 4, "the cold load's decisions are still repeated where they were made"
    assert [c.uuid for c in report.unreplayed] == [e["uuid"] for e in expired], "and named, apart"
    assert {c.kind for c in report.unreplayed} == {"expired"}
    assert report.summary().endswith(
        "0 chars saved (cache warm: the last cold load's rewrites, repeated; 4 on "
        "entries the CLI no longer replays)"
    )


@pytest.mark.cli
async def test_through_the_cli_a_warm_resume_after_a_compaction_saves_what_the_report_says(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    """The same history resumed without flower and with it, a minute after its last entry: the requests
    differ by exactly `chars_saved` (nothing: the CLI replays from the compaction on)."""
    t, _ = compacted_after_a_cold_resume()
    bare, flower, store = await bare_and_flower(
        scripted_model,
        workspace,
        t.snapshot(),
        t.session_id,
        t.last_time + 60,
        lambda raw: PruningSessionStore(raw, ephemeral=GIT),
    )

    assert store.last_report is not None and store.last_report.warm
    assert compact(bare) - compact(flower) == store.last_report.chars_saved == 0
    assert "Summary: tidied." in flower and "status 0" not in flower


# -- a slash command after an idle gap --------------------------------------------------------------------


def command_after_a_gap(*, marked: bool = False) -> tuple[Transcript, int, int]:
    """An old CLI's session (no resume marks): ten `git status`, a resume ten minutes later (cold),
    two turns, fifteen minutes of idle, then `/review` as the CLI writes a prompt-type command (the
    command entry, its expansion as a meta entry) and its reply. Returns the transcript, the resumed
    prompt's index and the command's."""
    t = glanced_then_idle(10)
    resumed = t.prompt("go on")
    t.run("git status", status(10), "toolu_gs10")
    t.assistant({"type": "text", "text": "Clean."})
    t.pause(900)
    command = t.prompt(REVIEW)
    t.meta("Review the changes on this branch and list what is left.")
    t.assistant({"type": "text", "text": "Nothing left."})
    if marked:  # a resumed process started with the command: the previous one exited before it, and CLI
        # 2.1.332 writes a mode line at the resumed one's exit, before its own cost-state
        t.entries.insert(t.entries.index(command), {"type": "cost-state", "sessionId": t.session_id})
        t.entries.append({"type": "mode", "mode": "normal", "sessionId": t.session_id})
        t.entries.append({"type": "cost-state", "sessionId": t.session_id})
    written_by(t, OLD_CLI if not marked else "2.1.332")
    return t, t.entries.index(resumed), t.entries.index(command)


def test_the_cli_own_command_lines_are_told_from_typed_prompts() -> None:
    local = "<command-name>/model</command-name>\n            <command-message>model</command-message>\n"
    shapes = {
        REVIEW: True,
        local + "            <command-args></command-args>": True,
        "<local-command-stdout>Set model to opus</local-command-stdout>": True,
        "<bash-input>./run_test.sh</bash-input>": True,
        "<bash-stdout>ok\n</bash-stdout><bash-stderr></bash-stderr>": True,
        "<command-name>/review</command-name> and then fix what it finds": False,
        "please run /review": False,
        "<bash-stdout>unclosed": False,
    }
    for text, expected in shapes.items():
        entry = {"type": "user", "message": {"role": "user", "content": text}}
        listed = {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}
        assert is_command(entry) is is_command(listed) is expected, text


def test_a_slash_command_after_an_idle_gap_is_no_load() -> None:
    t, resumed, command = command_after_a_gap()
    points = {p.index: p for p in load_points(t.entries)}
    assert points[command].cold and points[command].command and not points[command].marked
    now = t.last_time + 13
    cache = CachePolicy()
    policies: dict[str, Any] = {"prune": PrunePolicy(), "ephemeral": EphemeralPolicy()}

    assert rewrite_point(t.entries, now, cache)[0] == resumed, "the resume before it was the last load"
    loaded = rewrite_history(t.entries, now=now, cache=cache, **policies)
    then = rewrite_history(t.entries[:resumed], now=points[resumed].time, cache=cache, **policies)
    assert len(then.changes) == 4 and dumps(loaded.entries)[:resumed] == dumps(then.entries)
    assert dumps(loaded.entries)[resumed:] == dumps(t.entries[resumed:]), "the rest as the process sent it"


def test_a_resume_the_cli_marked_at_a_command_is_a_load() -> None:
    t, _, command = command_after_a_gap(marked=True)
    assert rewrite_point(t.entries, t.last_time + 13, CachePolicy())[0] == command


def test_without_a_mark_a_cli_that_marks_resumes_was_never_resumed() -> None:
    """CLI 2.1.327 and later mark every resumed process: an idle gap inside one process is no load."""
    t, _, _ = command_after_a_gap()
    written_by(t, "2.1.332")
    assert not any(p.marked for p in load_points(t.entries))
    assert rewrite_point(t.entries, t.last_time + 13, CachePolicy()) == (0, None, True), "nothing decided"
    written_by(t, OLD_CLI)
    assert rewrite_point(t.entries, t.last_time + 13, CachePolicy())[0] > 0, "an old CLI: it may have been"


def test_the_one_hour_cache_is_read_from_the_usage() -> None:
    """CLI 2.1.42 and earlier recorded no `promptCacheRequested`; a session on the 1-hour cache shows it
    in the usage (`ephemeral_1h_input_tokens`), so a load 20 minutes later is warm."""
    t, resumed, _ = command_after_a_gap()
    for entry in t.entries:
        if entry.get("type") == "assistant":
            split = {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 900}
            entry["message"]["usage"] = {"cache_creation_input_tokens": 900, "cache_creation": split}
    point = {p.index: p for p in load_points(t.entries)}[resumed]
    assert point.lifetime == 3600 and not point.cold, "ten minutes idle: the 1-hour cache was warm"
    assert rewrite_point(t.entries, t.last_time + 1200, CachePolicy())[2], "20 minutes later: warm"
    assert not rewrite_point(t.entries, t.last_time + 3700, CachePolicy())[2]


# -- what toolUseResult keeps -------------------------------------------------------------------------------


def old_interrupt_and_stale_outputs() -> Transcript:
    """An old-format interrupt (CLI 2.1.42 and earlier: no `toolDenialKind`, `"Error: "` + the result in
    `toolUseResult`), then ten `git status` with their outputs, as the CLI stores them, in
    `toolUseResult`, and one long `cat`."""
    t = Transcript()
    t.prompt("work")
    t.assistant(t.bash("sleep 30", "toolu_sleep"))
    stopped = t.result("toolu_sleep", OLD_REJECTION, is_error=True)
    stopped["toolUseResult"] = f"Error: {OLD_REJECTION}"
    t.prompt("[Request interrupted by user for tool use]")
    for i in range(10):
        t.run("git status", status(i), f"toolu_gs{i}")
    t.run("cat big.log", "L" * 5000, "toolu_big")
    t.assistant({"type": "text", "text": "Looked."})
    return written_by(t, OLD_CLI)


async def test_tool_use_result_says_what_the_result_says() -> None:
    t = old_interrupt_and_stale_outputs()
    spill = "/nonexistent/spill"
    out = rewrite_history(
        t.entries,
        prune=PrunePolicy(),
        ephemeral=GIT,
        trim=TrimPolicy(keep_recent=0, min_chars=4000),
        spill_dir=spill,
    )
    by_call = {
        block["tool_use_id"]: entry
        for entry in out.entries
        for block in (entry.get("message") or {}).get("content") or []
        if isinstance(block, dict) and block.get("type") == "tool_result"
    }
    assert "STOP what you are doing" not in json.dumps(out.entries)
    assert by_call["toolu_sleep"]["toolUseResult"] == "Error: " + PrunePolicy().interrupt_note
    note = by_call["toolu_gs0"]["message"]["content"][0]["content"]
    assert by_call["toolu_gs0"]["toolUseResult"] == {"stdout": note, "stderr": ""}
    assert by_call["toolu_gs9"]["toolUseResult"] == {"stdout": status(9), "stderr": ""}, "kept: kept whole"
    pointer = by_call["toolu_big"]["message"]["content"][0]["content"]
    assert (
        pointer.startswith("[tool result trimmed")
        and by_call["toolu_big"]["toolUseResult"]["stdout"] == pointer
    )
    read = {"file": {"filePath": "/a.py", "content": "x" * 5000}, "type": "text"}
    t.entries[-2]["toolUseResult"] = read  # a Read's: the CLI rebuilds what it read from it on resume
    again = rewrite_history(t.entries, trim=TrimPolicy(keep_recent=0, min_chars=4000), spill_dir=spill)
    assert again.entries[-2]["toolUseResult"] == read, "another tool's record is left as it is"


@pytest.mark.cli
async def test_a_resume_after_the_rewrites_of_tool_use_result(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Through the real CLI: the history is accepted, the model sees the notes and none of the stale
    texts, and a command after the resume runs."""
    t = old_interrupt_and_stale_outputs()
    raw = InMemorySessionStore()
    key: SessionKey = {"project_key": project_key_for_directory(workspace), "session_id": t.session_id}
    await raw.append(key, t.snapshot())  # type: ignore[arg-type]
    store = PruningSessionStore(raw, ephemeral=GIT)
    store.clock = lambda: t.last_time + 600
    scripted_model.script("main", [bash("echo AFTER-RESUME"), "Ready."])

    run = await scripted_model.run("Where were we?", cwd=workspace, session_store=store, resume=t.session_id)

    assert run.error is None and run.text == "Ready."
    first, second = scripted_model.requests("main")[-2:]
    assert "STOP what you are doing" not in first and PrunePolicy().interrupt_note in first
    assert first.count("[result of `git status` expired") == 8 and status(0) not in first
    assert "AFTER-RESUME" in second.tool_results[-1].text
    loaded = await store.load(key) or []
    assert "STOP what you are doing" not in json.dumps(loaded) and status(0) not in json.dumps(loaded)


# -- an orphan call: what the CLI would have answered -------------------------------------------------------


@pytest.mark.cli
async def test_an_orphan_heal_saves_what_the_request_loses_against_the_cli_own_answer(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    """A process died while two parallel calls ran; one result was written. Resumed without flower, the CLI
    answers the other itself ("[Tool call interrupted: …]", `CLI_ORPHAN_NOTE`); with flower, the heal's
    shorter note does. `chars_saved` is the difference of the two requests, not minus our note's size."""
    t = Transcript()
    t.prompt("build both")
    t.assistant(
        t.bash("make a", "toolu_01MakeAAAAAAAAAAAAAAAAAA"), t.bash("make b", "toolu_01MakeBBBBBBBBBBBBBBBBBB")
    )
    t.result("toolu_01MakeAAAAAAAAAAAAAAAAAA", "built a")
    bare, flower, store = await bare_and_flower(
        scripted_model, workspace, t.snapshot(), t.session_id, t.last_time + 600
    )

    assert bare.tool_result("toolu_01MakeBBBBBBBBBBBBBBBBBB").text == CLI_ORPHAN_NOTE
    assert flower.tool_result("toolu_01MakeBBBBBBBBBBBBBBBBBB").text == PrunePolicy().orphan_note
    report = store.last_report
    assert report is not None and [c.kind for c in report.changes] == ["orphan"]
    assert compact(bare) - compact(flower) == report.chars_saved > 0
