"""How the wall reads a session's size for `inline_until`: the latest main-thread reply's usage in the
transcript, read from its end (pure: transcripts written here, as the CLI writes them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flower import SpecError, coordinator, worker
from flower._wall._inline import Growth, reply_context

HELPER = worker("Does anything.", "You do things.", tools=["Bash"])


def _reply(cached: int, *, sidechain: bool = False, fresh: int = 3) -> dict[str, object]:
    usage = {"input_tokens": fresh, "cache_read_input_tokens": cached, "cache_creation_input_tokens": 0}
    return {"type": "assistant", "isSidechain": sidechain, "message": {"usage": usage, "content": []}}


def _write(path: Path, *entries: object) -> str:
    path.write_text("".join(json.dumps(entry) + "\n" for entry in entries))
    return str(path)


def test_the_latest_main_thread_reply_counts(tmp_path: Path) -> None:
    big = {"type": "user", "message": {"content": "x" * 300_000}}  # longer than the first chunk read
    path = _write(
        tmp_path / "t.jsonl",
        _reply(1_000),
        _reply(40_000),
        big,
        _reply(90_000, sidechain=True),
        _reply(0, fresh=0),  # a synthetic error reply says nothing of the context
        {"type": "attachment"},
    )
    assert reply_context(path) == 40_003


def test_a_transcript_without_a_reply_is_a_session_at_its_start(tmp_path: Path) -> None:
    assert reply_context(_write(tmp_path / "t.jsonl", {"type": "api-request-route"})) == 0
    assert reply_context(_write(tmp_path / "e.jsonl")) == 0


def test_past_the_limit_a_session_stays_past_and_an_unreadable_one_is_strict(tmp_path: Path) -> None:
    growth = Growth(50_000)
    path = tmp_path / "t.jsonl"
    data = {"session_id": "s1", "transcript_path": _write(path, _reply(10_000))}
    assert growth.past(data) == ""
    _write(path, _reply(60_000))
    assert "its context reached 60,003 tokens, past inline_until=50,000" in growth.past(data)
    _write(path, _reply(10_000))
    assert growth.past(data) != ""  # for good
    assert "could not be read" in growth.past({"session_id": "s2", "transcript_path": str(tmp_path / "no")})
    assert "could not be read" in growth.past({"session_id": "s3"})


@pytest.mark.parametrize(
    ("knobs", "says"),
    [
        ({"inline_until": 0}, "inline_until must be a positive number of tokens, got 0"),
        ({"inline_until": 10_000, "own_steps": 1}, "give inline_until or own_steps, not both"),
    ],
)
def test_a_bad_inline_until_is_named(knobs: dict[str, int], says: str) -> None:
    with pytest.raises(SpecError, match=says):
        coordinator("lead", "Goal.", {"helper": HELPER}, **knobs)  # type: ignore[arg-type]
