"""Where a process started, read from the CLI's own evidence: SessionStart hook entries and resume marks.

The shape of a real session (CLI 2.1.39, the 1-hour cache) that made a warm resume re-send 91.5 % of
its history: a SessionStart hook ran at startup, so the CLI marks every resumed process; a prompt came
after 41,680 s of idle in the same process (no mark: no load); the first real resume, marked, came
668 s after the last message, within the hour. Nothing was ever rewritten before it, so it must
rewrite nothing. Built here from that structure, not copied.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from flower.stores import CachePolicy, EphemeralPolicy, PrunePolicy
from flower.stores._rewrite import load_points, rewrite_history, rewrite_point, session_start
from flower.testing import ScriptedModel

from .resumes import bare_and_flower
from .transcripts import Transcript, dumps

VERSION = "2.1.39"
IDLE = 41_680.0  # seconds of idle before the unmarked prompt, inside one process
LATER = 668.0  # the resume, after the last message: warm on the 1-hour cache


def hook(t: Transcript, source: str, *, shape: str = "progress") -> dict[str, Any]:
    """A SessionStart hook entry as the CLI writes it: a `progress` entry (CLI 2.1.42 and earlier) or an
    `attachment` (later CLIs), chained like the CLI chains it."""
    entry = t._base(shape, t._tip)
    record = {"hookEvent": "SessionStart", "hookName": f"SessionStart:{source}", "command": "setup.sh"}
    if shape == "progress":
        entry["data"] = {"type": "hook_progress", **record}
        entry["toolUseID"] = entry["parentToolUseID"] = f"hook-{entry['uuid']}"
    else:
        entry["attachment"] = {"type": "hook_success", **record, "exitCode": 0, "stdout": ""}
    return t._add(entry)


def status(i: int) -> str:
    return f"On branch main {i}\n" + "\n".join(f"\tmodified:   src/module_{i}_{k}.py" for k in range(10))


def one_hour(t: Transcript) -> None:
    """Every reply's usage shows 1-hour cache writes; the CLI recorded no `promptCacheRequested`."""
    for entry in t.entries:
        if entry.get("type") == "assistant":
            split = {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 2400}
            entry["message"]["usage"] = {
                "input_tokens": 3,
                "cache_creation_input_tokens": 2400,
                "cache_read_input_tokens": 18_000,
                "cache_creation": split,
                "output_tokens": 40,
            }
        if "version" in entry:
            entry["version"] = VERSION


def idle_in_one_process(*, hooks: str | None = "progress") -> tuple[Transcript, int]:
    """Startup hook entries, a prompt and six `git status`; 41,680 s of idle; an unmarked prompt in the
    same process and six more. Returns the transcript and the unmarked prompt's index."""
    t = Transcript()
    if hooks is not None:
        hook(t, "startup", shape=hooks)
        hook(t, "startup", shape=hooks)
    t.prompt("review the branch")
    for i in range(6):
        t.run("git status", status(i), f"toolu_01before{i:02d}")
    t.assistant({"type": "text", "text": "The branch is clean."})
    t.pause(IDLE)
    unmarked = t.prompt("now fix the failing test")
    for i in range(6, 12):
        t.run("git status", status(i), f"toolu_01after{i:02d}")
    t.assistant({"type": "text", "text": "Fixed."})
    one_hour(t)
    return t, t.entries.index(unmarked)


POLICIES: dict[str, Any] = {"prune": PrunePolicy(), "ephemeral": EphemeralPolicy()}


def test_session_start_hook_entries_are_read_in_both_shapes() -> None:
    t = Transcript()
    progress, attachment = hook(t, "startup"), hook(t, "resume", shape="attachment")
    assert (session_start(progress), session_start(attachment)) == ("startup", "resume")
    other = {**attachment, "attachment": {**attachment["attachment"], "hookName": "PreToolUse:Bash"}}
    assert session_start(other) is None and session_start(t.prompt("hi")) is None


@pytest.mark.parametrize("shape", ["progress", "attachment"])
def test_an_unmarked_prompt_after_an_idle_day_is_no_load_when_hooks_mark_resumes(shape: str) -> None:
    t, unmarked = idle_in_one_process(hooks=shape)
    point = {p.index: p for p in load_points(t.entries)}[unmarked]
    assert point.cold and not point.marked and point.marking, "idle, but the CLI would have marked a load"
    assert point.lifetime == 3600, "the 1-hour cache, from the usage"
    now = t.last_time + LATER
    assert rewrite_point(t.entries, now, CachePolicy()) == (0, None, True), "nothing was decided before"
    out = rewrite_history(t.entries, now=now, **POLICIES)
    assert out.changes == () and dumps(out.entries) == dumps(t.entries)


def test_without_any_evidence_an_old_cli_prompt_after_a_pause_may_have_been_a_load() -> None:
    """The rule the hooks replace: no hook entry, no mark, a CLI older than 2.1.327: the prompt after the
    pause is taken for the last cold load, and its six idle expiries are repeated."""
    t, unmarked = idle_in_one_process(hooks=None)
    assert rewrite_point(t.entries, t.last_time + LATER, CachePolicy())[0] == unmarked
    out = rewrite_history(t.entries, now=t.last_time + LATER, **POLICIES)
    assert len(out.changes) == 6 and {c.kind for c in out.changes} == {"expired"}


def test_a_marked_resume_is_still_the_load_a_warm_one_repeats() -> None:
    """The first resume, marked by its `SessionStart:resume` hook and cold: a warm load after it
    repeats its decisions and keeps what the resumed process sent since."""
    t, _ = idle_in_one_process()
    t.pause(2 * 3600)
    hook(t, "resume")
    resumed = t.prompt("go on")
    t.run("git status", status(12), "toolu_01resumed")
    t.assistant({"type": "text", "text": "Still clean."})
    one_hour(t)
    point = {p.index: p for p in load_points(t.entries)}[t.entries.index(resumed)]
    assert point.marked and point.cold
    now = t.last_time + LATER
    assert rewrite_point(t.entries, now, CachePolicy())[0] == point.index
    out = rewrite_history(t.entries, now=now, **POLICIES)
    then = rewrite_history(t.entries[: point.index], now=point.time, **POLICIES)
    assert len(then.changes) == 12, "every result before the idle hours expired at that resume"
    assert dumps(out.entries)[: point.index] == dumps(then.entries)
    assert dumps(out.entries)[point.index :] == dumps(t.entries[point.index :])


def compact(messages: list[Any]) -> int:
    return len(json.dumps(messages, ensure_ascii=False, separators=(",", ":")))


@pytest.mark.cli
async def test_through_the_cli_the_warm_first_resume_re_sends_no_more_than_a_bare_one(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    """The same history resumed 668 s after its last message, without flower and with it: the model sees
    the same messages, so the cached prefix the live process wrote is read, not written again."""
    t, _ = idle_in_one_process()
    bare, flower, store = await bare_and_flower(
        scripted_model, workspace, t.snapshot(), t.session_id, t.last_time + LATER
    )

    report = store.last_report
    assert report is not None and report.warm and report.changes == ()
    assert flower.messages == bare.messages, "not one character of the cached history re-sent"
    assert "expired" not in flower and status(0) in flower
    assert compact(flower.messages) == compact(bare.messages)
