"""How the wall reads a session's size for `inline_until`: the latest main-thread reply's usage in the
transcript, read from its end (pure: transcripts written here, as the CLI writes them)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from flower import SpecError, coordinator, worker
from flower._wall._inline import Growth, reply_context

HELPER = worker("Does anything.", "You do things.", tools=["Bash"])


def _reply(cached: int, call: str, *, sidechain: bool = False, fresh: int = 3) -> dict[str, object]:
    usage = {"input_tokens": fresh, "cache_read_input_tokens": cached, "cache_creation_input_tokens": 0}
    content = [{"type": "tool_use", "id": call, "name": "Bash", "input": {"command": "make"}}]
    return {"type": "assistant", "isSidechain": sidechain, "message": {"usage": usage, "content": content}}


def _write(path: Path, *entries: object) -> str:
    path.write_text("".join(json.dumps(entry) + "\n" for entry in entries))
    return str(path)


def test_the_reply_that_made_the_call_counts(tmp_path: Path) -> None:
    big = {"type": "user", "message": {"content": "x" * 300_000}}  # longer than the first chunk read
    path = _write(
        tmp_path / "t.jsonl",
        _reply(1_000, "toolu_a"),
        _reply(40_000, "toolu_b"),
        big,
        _reply(90_000, "toolu_c", sidechain=True),
        _reply(0, "toolu_d", fresh=0),  # a synthetic error reply says nothing of the context
        {"type": "attachment"},
    )
    assert reply_context(path, "toolu_b") == 40_003
    assert reply_context(path, "toolu_a") == 1_003
    assert reply_context(path, "toolu_c") is None  # a worker's
    assert reply_context(path, "toolu_e") is None  # not written yet
    assert reply_context(_write(tmp_path / "e.jsonl"), "toolu_a") is None


def test_the_wall_waits_for_the_reply_then_stays_past_and_an_unreadable_one_is_strict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    growth = Growth(50_000)
    path = tmp_path / "t.jsonl"
    _write(path, _reply(10_000, "toolu_a"))

    async def later() -> None:  # the CLI writes the reply while the hook waits
        await anyio.sleep(0.05)
        _write(path, _reply(10_000, "toolu_a"), _reply(60_000, "toolu_b"))

    async def both() -> tuple[str, str]:
        first = await growth.past(
            {"session_id": "s1", "transcript_path": str(path), "tool_use_id": "toolu_a"}
        )
        async with anyio.create_task_group() as group:
            group.start_soon(later)
            second = await growth.past(
                {"session_id": "s1", "transcript_path": str(path), "tool_use_id": "toolu_b"}
            )
        return first, second

    first, second = anyio.run(both)
    assert first == ""
    assert "its context reached 60,003 tokens, past inline_until=50,000" in second
    again = {"session_id": "s1", "transcript_path": str(path), "tool_use_id": "toolu_a"}
    assert anyio.run(growth.past, again) != ""  # for good
    monkeypatch.setattr("flower._wall._turns.ENTRY_WAIT", 0.1)
    never = {"session_id": "s2", "transcript_path": str(path), "tool_use_id": "toolu_z"}
    assert "could not be read" in anyio.run(growth.past, never)
    gone = {"session_id": "s3", "transcript_path": str(tmp_path / "no"), "tool_use_id": "toolu_a"}
    assert "could not be read" in anyio.run(growth.past, gone)
    assert "could not be read" in anyio.run(growth.past, {"session_id": "s4"})


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
