"""`mode` lines mark no resume, and layer 4 names every change it makes on a history full of them.

CLIs 2.1.1xx-2.1.2xx write `{"type": "mode", "mode": "normal", "sessionId": ...}` at a session's start
and beside ordinary prompts, a few seconds after the message before: it is one of the session's metadata
lines, which the CLI re-appends (at its exit, at a resume, as the file grows), not the mark of a resumed
process. Taken for one, 148 resumes were counted in 36 real sessions that had none, and a warm
`PruningSessionStore.load()` went back to a prompt nobody resumed at. The shape is built here from that
structure, not copied; the real transcripts beside the repository get the same lines added and are
loaded warm at every prompt.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, cast

import pytest
from claude_agent_sdk import InMemorySessionStore, SessionKey, SessionStoreEntry

from flower.report._what_if import build_what_if
from flower.stores import PruningSessionStore
from flower.stores._rewrite import is_prompt, load_points, resumes
from flower.stores._rewrite.expire import entry_time
from flower.testing import ScriptedModel

from . import corpus
from .transcripts import Transcript, dumps, unnamed

VERSION = "2.1.218"
KEY = cast(SessionKey, {"project_key": "-projects-demo", "session_id": "s"})


def mode_line(session_id: str) -> dict[str, Any]:
    return {"type": "mode", "mode": "normal", "sessionId": session_id}


def with_mode_lines(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history as CLIs 2.1.1xx-2.1.2xx write it: a `mode` line first and one before every prompt."""
    session = next((str(e["sessionId"]) for e in entries if e.get("sessionId")), "s")
    out = [mode_line(session)]
    for entry in entries:
        if is_prompt(entry):
            out.append(mode_line(session))
        out.append(entry)
    return out


def interleaved() -> Transcript:
    """Three stretches of work (denied calls, `git status` that go stale, a large read) with a `mode`
    line beside each prompt, the second prompt an hour and a half after the first stretch (the cache had
    expired: taken for a resume, it would have been a cold load), the third 40 s after the second."""
    t = Transcript()
    t.entries.append(mode_line(t.session_id))
    for stretch, pause in enumerate((0.0, 5_400.0, 40.0)):
        t.pause(pause)
        t.prompt(f"stretch {stretch}: fix the next failing test")
        t.pause(5)
        t.entries.append(mode_line(t.session_id))
        for i in range(4):
            t.run(
                "git status", f"On branch main\n\tmodified: src/m{stretch}_{i}.py\n", f"toolu_gs{stretch}{i}"
            )
        for i in range(3):
            denied = f"Permission to use Bash with command rm -rf build{i} has been denied."
            t.run(f"rm -rf build{i}", denied, f"toolu_rm{stretch}{i}", is_error=True)
        t.run("cat log.txt", "x" * 20_000, f"toolu_cat{stretch}")
        t.assistant({"type": "text", "text": f"Stretch {stretch} done."})
    for entry in t.entries:
        if "version" in entry:
            entry["version"] = VERSION
    return t


async def warm_load(entries: list[dict[str, Any]], now: float) -> tuple[list[dict[str, Any]], Any]:
    """What a `PruningSessionStore` hands the CLI at `now`, and its report."""
    inner = InMemorySessionStore()
    await inner.append(KEY, cast(list[SessionStoreEntry], copy.deepcopy(entries)))
    store = PruningSessionStore(inner, config_dir="/nonexistent/flower-mode-lines")
    store.clock = lambda: now
    loaded = await store.load(KEY) or []
    return cast(list[dict[str, Any]], loaded), store.last_report


def test_mode_lines_beside_prompts_mark_no_resume() -> None:
    t = interleaved()
    points = load_points(t.entries)
    assert len(points) == 2 and points[0].cold and not points[1].cold
    assert resumes(t.entries) == [], "the CLI recorded no resume"
    assert not any(p.marked or p.marking for p in points)


async def test_a_warm_load_over_mode_lines_names_every_change() -> None:
    """Loaded 60 s after the last message (warm), then at every prompt: every entry returned changed is
    named by a `Change`, and the history without its `mode` lines loads to the same messages."""
    t = interleaved()
    bare = [e for e in t.entries if e.get("type") != "mode"]
    for now in [t.last_time + 60] + [p.time for p in load_points(t.entries) if p.time is not None]:
        loaded, report = await warm_load(t.entries, now)
        assert report is not None and not report.errors
        assert unnamed(t.entries, loaded, report.changes + report.unreplayed) == [], now
        without, _ = await warm_load(bare, now)
        assert dumps([e for e in loaded if e.get("type") != "mode"]) == dumps(without), now


def real_sessions() -> list[corpus.Transcript]:
    directory = corpus.real_dir()
    if corpus.missing_reason(directory) is not None:
        pytest.skip(f"no real transcripts: {corpus.missing_reason(directory)}")
    return corpus.transcripts(directory)


async def test_real_sessions_with_mode_lines_keep_their_resumes_and_name_every_change() -> None:
    """Every real transcript, as stored and with the `mode` lines of CLIs 2.1.1xx-2.1.2xx added: the lines
    add no resume, and a load at every prompt (the cache warm or cold, as the history says) and one a
    minute after the last message name every change."""
    checked = 0
    for session in real_sessions():
        marked = with_mode_lines(session.entries)
        assert len(resumes(marked)) == len(resumes(session.entries)), session.name
        times = [t for e in marked if e.get("type") in ("user", "assistant") and (t := entry_time(e))]
        moments = [p.time for p in load_points(marked) if p.time is not None] + (
            [max(times) + 60] if times else []
        )
        for now in moments:
            loaded, report = await warm_load(marked, now)
            assert report is not None and not report.errors, session.name
            where = f"{session.name} at {now}"
            assert unnamed(marked, loaded, report.changes + report.unreplayed) == [], where
            checked += 1
    assert checked, "no session had a timestamped message"


@pytest.mark.cli
async def test_the_bundled_cli_marks_a_resume_by_a_mode_line_at_its_exit(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Through the bundled CLI: a new session, a `--resume` and a `--continue` (no SessionStart hook is
    set). The CLI writes a `mode` line at the resumed process's exit and none in the continued one: the
    resume is marked, the continue goes unmarked (no resume counted the CLI did not mark)."""
    scripted_model.script("main", ["ONE"])
    first = await scripted_model.run("first prompt", cwd=workspace)
    scripted_model.script("main", ["TWO"])
    await scripted_model.run("second prompt", cwd=workspace, resume=first.session_id)
    scripted_model.script("main", ["THREE"])
    await scripted_model.run("third prompt", cwd=workspace, continue_conversation=True)
    (path,) = Path(scripted_model.config_dir, "projects").glob(f"*/{first.session_id}.jsonl")
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    prompts = [i for i, e in enumerate(entries) if is_prompt(e)]
    modes = [i for i, e in enumerate(entries) if e.get("type") == "mode"]
    assert len(prompts) == 3 and len(modes) == 1 and prompts[1] < modes[0] < prompts[2]
    assert [p.index for p in load_points(entries)] == prompts[1:]
    assert [p.index for p in resumes(entries)] == [prompts[1]]
    last = scripted_model.request("main", -1)
    assert "first prompt" in last and "second prompt" in last, "the continued process loaded the history"
    report = await build_what_if(Path(scripted_model.config_dir, "projects"))
    (session,) = report.sessions
    assert session.as_recorded.resumes == 1 and report.not_transcripts == ()
