"""Which entries are prompts, which CLI versions mark a resume, and the cache lifetime a reply tells:
the pieces of `load_points`, each on entries written by hand."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from flower.stores import CachePolicy
from flower.stores._rewrite.loads import (
    LoadPoint,
    is_command,
    is_prompt,
    load_points,
    resumes,
    rewrite_point,
    session_start,
)

from .transcripts import Transcript


def user(content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "uuid": "u", "message": {"role": "user", "content": content}, **extra}


@pytest.mark.parametrize(
    ("entry", "prompt"),
    [
        (user("Go."), True),
        (user([{"type": "text", "text": "Go."}, {"type": "image"}]), True),
        (user([]), False),  # no text at all
        (user("Go.", isSidechain=True), False),
        (user("Go.", isMeta=True), False),
        (user("Go.", isCompactSummary=True), False),
        (user("Go.", toolUseResult={}), False),
        (user("Go.", promptSource="system"), False),
        (user([{"type": "tool_result", "tool_use_id": "t", "content": "x"}]), False),
        (user("[Request interrupted by user]"), False),
        (user([{"type": "text", "text": "[Request interrupted by user for tool use]"}]), False),
        # only text blocks make the text: an image first does not hide the marker
        (
            user(
                [
                    {"type": "image"},
                    "a bare string",
                    {"type": "text", "text": "[Request interrupted by user]"},
                ]
            ),
            False,
        ),
        ({"type": "assistant", "message": {"content": "Go."}}, False),
        ({"type": "user", "message": "not a message"}, False),
    ],
)
def test_what_a_prompt_is(entry: dict[str, Any], prompt: bool) -> None:
    assert is_prompt(entry) is prompt


def mode_lines(version: str, *, after_first_reply: bool) -> tuple[Transcript, dict[str, Any]]:
    """A session with `mode` lines where CLIs 2.1.1xx-2.1.2xx write them: first, beside each prompt, after a
    tool result; with `after_first_reply`, one right after the second prompt's first reply too."""
    t = Transcript()
    line = {"type": "mode", "mode": "normal", "sessionId": t.session_id}
    t.entries.append(dict(line))
    t.prompt("build")
    t.entries.append(dict(line))
    t.run("make", "ok", "toolu_make")
    t.entries.append(dict(line))
    t.assistant({"type": "text", "text": "Done."})
    t.pause(3_600)
    second = t.prompt("And now?")
    t.entries.append(dict(line))  # before its reply
    t.assistant(t.bash("make test", "toolu_test"))
    if after_first_reply:
        t.entries.append(dict(line))
    t.result("toolu_test", "ok")
    t.entries.append(dict(line))  # after a tool result
    t.assistant({"type": "text", "text": "Done again."})
    t.entries.append(dict(line))
    for entry in t.entries:
        if "version" in entry:
            entry["version"] = version
    return t, second


@pytest.mark.parametrize("version", ["2.1.112", "2.1.150", "2.1.218", "2.1.326", "2.0.76"])
@pytest.mark.parametrize("after_first_reply", [False, True])
def test_an_older_clis_mode_lines_mark_no_resume(version: str, after_first_reply: bool) -> None:
    """CLIs 2.1.1xx-2.1.2xx write `mode` lines at a session's start and beside ordinary prompts of sessions
    nobody resumed: none of them marks a resume."""
    t, _ = mode_lines(version, after_first_reply=after_first_reply)
    assert resumes(t.entries) == [] and not any(p.marked for p in load_points(t.entries))


@pytest.mark.parametrize("version", ["2.1.327", "2.1.332", "2.1.337"])
def test_a_new_cli_marks_the_first_prompt_of_a_process_that_exits_with_a_mode_line(version: str) -> None:
    """CLI 2.1.327 and later: a process started with `--resume` re-appends a `mode` line at its exit,
    before the `cost-state` every process writes then; a fresh or `--continue`d one writes none. The line
    marks the prompt the process started with, not a later one of the same process."""
    t = Transcript()
    t.prompt("build")
    t.assistant({"type": "text", "text": "Built."})
    t.marker("cost-state")  # the first process exits
    t.pause(3_600)
    resumed = t.prompt("test it")  # a --resume
    t.assistant({"type": "text", "text": "Tested."})
    t.pause(600)
    t.prompt("and lint it")  # the same process, ten minutes later
    t.assistant({"type": "text", "text": "Linted."})
    t.marker("last-prompt")
    t.entries.append({"type": "mode", "mode": "normal", "sessionId": t.session_id})
    t.marker("cost-state")
    t.pause(3_600)
    t.prompt("ship it")  # a --continue: no mode line at its exit
    t.assistant({"type": "text", "text": "Shipped."})
    t.marker("cost-state")
    for entry in t.entries:
        if "version" in entry:
            entry["version"] = version
    points = load_points(t.entries)
    assert [p.marked for p in points] == [True, False, False] and all(p.marking for p in points)
    assert [t.entries[p.index] for p in resumes(t.entries)] == [resumed]


@pytest.mark.parametrize(
    ("version", "marking"),
    [("2.1.327", True), ("2.1.400", True), ("3.0.0", True), ("2.1.326", False), ("2.0.999", False),
     ("v2.1.400", False), (None, False), (2, False)],
)  # fmt: skip
def test_a_cli_from_2_1_327_on_marks_every_resume(version: Any, marking: bool) -> None:
    t = Transcript()
    t.prompt("build")
    t.assistant({"type": "text", "text": "Done."})
    second = t.prompt("And now?")
    for entry in t.entries:
        if version is None:
            entry.pop("version", None)
        else:
            entry["version"] = version
    (point,) = [p for p in load_points(t.entries) if t.entries[p.index] is second]
    assert point.marking is marking


@pytest.mark.parametrize(
    ("written", "lifetime"),
    [({"ephemeral_1h_input_tokens": 5, "ephemeral_5m_input_tokens": 5}, 3_600.0),
     ({"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 7}, 300.0),
     ({"ephemeral_1h_input_tokens": True, "ephemeral_5m_input_tokens": 0.5}, 300.0),
     ({"ephemeral_1h_input_tokens": "9", "ephemeral_5m_input_tokens": -1}, 300.0)],  # none told: the default
)  # fmt: skip
def test_a_replys_usage_tells_the_lifetime_it_wrote(written: dict[str, Any], lifetime: float) -> None:
    t = Transcript()
    t.prompt("build")
    (reply,) = t.assistant({"type": "text", "text": "Done."})
    reply.pop("promptCacheRequested", None)
    reply["message"]["usage"] = {"cache_creation": written}
    second = t.prompt("And now?")
    (point,) = [p for p in load_points(t.entries) if t.entries[p.index] is second]
    assert point.lifetime == lifetime


def test_a_session_start_hook_is_read_from_either_record_the_cli_writes() -> None:
    def hook(kind: str, name: str, event: str | None = "SessionStart", **more: Any) -> dict[str, Any]:
        record = {"hookName": name, **({"hookEvent": event} if event else {})}
        field = "data" if kind == "progress" else "attachment"
        return {"type": kind, field: record, **more}

    assert session_start(hook("progress", "SessionStart:startup")) == "startup"
    assert session_start(hook("attachment", "SessionStart:resume")) == "resume"
    assert session_start(hook("attachment", "SessionStart:clear", event=None)) == "clear"  # older CLIs
    assert (
        session_start(hook("attachment", "SessionStart:compact:x")) == "compact:x"
    )  # cut at the first colon
    assert session_start(hook("attachment", "SessionStart:resume", event="Stop")) is None
    assert session_start(hook("attachment", "SessionStart:resume", isSidechain=True)) is None  # a worker's
    assert session_start(hook("attachment", "SessionStart:resume", isSidechain=False)) == "resume"
    assert session_start({"type": "user", "attachment": {"hookName": "SessionStart:resume"}}) is None
    assert session_start({"type": "progress", "attachment": {"hookName": "SessionStart:resume"}}) is None


T = 1_800_000_000.0


def at(seconds: float) -> str:
    return datetime.fromtimestamp(T + seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def said(seconds: float | None, **extra: Any) -> dict[str, Any]:
    """An assistant reply (a request) at `seconds` after T, or without a timestamp."""
    entry: dict[str, Any] = {
        "type": "assistant",
        "message": {"role": "assistant", "content": "Done."},
        **extra,
    }
    if seconds is not None:
        entry["timestamp"] = at(seconds)
    return entry


def asked(seconds: float | None, text: str = "Go.", **extra: Any) -> dict[str, Any]:
    entry = user(text, **extra)
    if seconds is not None:
        entry["timestamp"] = at(seconds)
    return entry


def test_a_load_is_timed_by_the_earliest_queue_operation_since_the_last_request() -> None:
    entries = [
        asked(0),
        said(10),
        {
            "type": "system",
            "timestamp": at(20),
        },  # written at the end of a turn: neither a request nor a queue
        {"type": "queue-operation", "timestamp": at(90)},
        {"type": "queue-operation", "timestamp": at(95)},
        asked(100),
        said(110),
        {"type": "system", "timestamp": at(120)},
        asked(200),
    ]
    assert load_points(entries, CachePolicy(ttl=60)) == [
        LoadPoint(5, T + 90, 80.0, 60, False),
        LoadPoint(8, T + 200, 90.0, 60, False),
    ]


def test_a_load_without_a_time_on_either_side_has_no_idle_time() -> None:
    entries = [
        asked(0),
        said(None),
        asked(100),
        said(110),
        asked(None),
        "not an entry",
        said(120),
        asked(130),
    ]
    assert load_points(entries, CachePolicy(ttl=60)) == [
        LoadPoint(2, T + 100, None, 60, False),
        LoadPoint(4, None, None, 60, False),
        LoadPoint(7, T + 130, 10.0, 60, False),
    ]


def test_an_api_error_is_no_request_the_idle_time_runs_from() -> None:
    error = said(50, isApiErrorMessage=True)
    error["message"]["model"] = "claude-x"  # an error the API sent back, not one the CLI made up
    entries = [asked(0), said(10), error, asked(100)]
    (point,) = load_points(entries)
    assert (point.index, point.idle) == (3, 90.0)


def test_a_prompt_before_any_request_is_not_marked() -> None:
    # a history that starts with a reply (a branch cut at it): its first prompt is no resume
    assert load_points([said(0), asked(10)]) == [LoadPoint(1, T + 10, 10.0, 300.0, False)]


@pytest.mark.parametrize(
    ("reply", "lifetime"),
    [
        ({"promptCacheRequested": "10m"}, 60),  # a lifetime the CLI does not ask for: none told
        ({"promptCacheRequested": "1h"}, 3_600.0),
        ({"message": None}, 60),
        ({"message": {"usage": {"cache_creation": {"ephemeral_5m_input_tokens": 7}}}}, 300.0),
        ({"message": {"usage": {"cache_creation": {"ephemeral_1h_input_tokens": 1}}}}, 3_600.0),
        ({"message": {"usage": {"cache_creation": {"ephemeral_5m_input_tokens": 1}}}}, 300.0),
        ({"message": {"usage": {"cache_creation": {"ephemeral_5m_input_tokens": 0}}}}, 60),
    ],
)
def test_the_lifetime_a_reply_tells_or_the_policys(reply: dict[str, Any], lifetime: float) -> None:
    (point,) = load_points([asked(0), said(10, **reply), asked(20)], CachePolicy(ttl=60))
    assert point.lifetime == lifetime


def test_a_session_start_hook_anywhere_makes_every_prompt_one_the_cli_would_mark() -> None:
    hook = {"type": "progress", "data": {"hookName": "SessionStart:startup", "hookEvent": "SessionStart"}}
    old = {"version": "2.1.300"}
    assert [p.marking for p in load_points([asked(0, **old), said(10), asked(20, **old)])] == [False]
    assert [p.marking for p in load_points([hook, asked(0, **old), said(10), asked(20, **old)])] == [True]


def test_resumes_reads_the_lifetime_from_the_policy_given() -> None:
    new = {"version": "2.1.332"}
    entries = [asked(0), said(10), {"type": "cost-state"}, asked(1_000, **new), said(1_010), {"type": "mode"}]
    assert resumes(entries, CachePolicy(ttl=60)) == [LoadPoint(3, T + 1_000, 990.0, 60, True, marking=True)]


@pytest.mark.parametrize(
    ("content", "command"),
    [
        ("<command-name>/clear</command-name>", True),
        ([{"type": "image"}, {"type": "text", "text": "<bash-input>ls</bash-input>"}], True),
        ([{"type": "image"}], False),
        (["a bare string", {"type": "text", "text": "<command-name>/x</command-name>"}], True),
        ("<command-name>/clear</command-name> and a question", False),
    ],
)
def test_a_command_line_is_made_of_the_clis_elements_only(content: Any, command: bool) -> None:
    assert is_command(user(content)) is command


def test_an_entry_without_a_message_is_no_command() -> None:
    assert is_command({"type": "user", "message": "<command-name>/x</command-name>"}) is False


def test_rewrite_point_reads_the_last_timed_request_and_the_last_lifetime_told() -> None:
    cache = CachePolicy(ttl=300)
    untimed = [asked(None), said(None), {"type": "system"}]
    assert rewrite_point(untimed, T + 10, cache) == (3, T + 10, False)
    assert rewrite_point([{"type": "system", "timestamp": at(0)}], T + 10, cache) == (1, T + 10, False)
    # a system entry written after the last request is no request: the load is cold
    late = [asked(0), said(10), {"type": "system", "timestamp": at(1_000)}]
    assert rewrite_point(late, T + 1_060, cache) == (3, T + 1_060, False)
    # exactly the lifetime after the last request: cold
    assert rewrite_point([asked(0), said(10)], T + 310, cache) == (2, T + 310, False)
    # the newest reply tells no lifetime, an older one does: that one applies (warm an hour long)
    told = [asked(0), said(10, promptCacheRequested="1h"), asked(20), said(30)]
    assert rewrite_point(told, T + 1_030, cache)[2] is True
