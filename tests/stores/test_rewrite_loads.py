"""Which entries are prompts, which CLI versions mark a resume, and the cache lifetime a reply tells:
the pieces of `load_points`, each on entries written by hand."""

from __future__ import annotations

from typing import Any

import pytest

from flower.stores.rewrite.loads import is_prompt, load_points, session_start

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
        ({"type": "assistant", "message": {"content": "Go."}}, False),
        ({"type": "user", "message": "not a message"}, False),
    ],
)
def test_what_a_prompt_is(entry: dict[str, Any], prompt: bool) -> None:
    assert is_prompt(entry) is prompt


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
