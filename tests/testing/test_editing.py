"""Server-side context editing: the API's clear_tool_uses edit, replayed over a history (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from flower import SpecError
from flower.testing import ClearToolUses
from flower.testing._editing import CLEARED, apply_context_management


def use(n: int, name: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"t{n}", "name": name, "input": {}}


def result(n: int, text: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": f"t{n}", "content": text}


def history(sizes: list[int], name: str = "Bash") -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Go."}]
    for n, size in enumerate(sizes):
        messages += [
            {"role": "assistant", "content": [use(n, name)]},
            {"role": "user", "content": [result(n, "x" * size)]},
        ]
    return {"system": "s", "tools": [], "messages": messages}


def results(b: dict[str, Any]) -> list[str]:
    return [
        block["content"]
        for m in b["messages"]
        if isinstance(m["content"], list)
        for block in m["content"]
        if block["type"] == "tool_result"
    ]


def test_nothing_is_cleared_below_the_trigger_and_the_input_is_never_modified() -> None:
    b = history([4_000] * 5)
    assert ClearToolUses(trigger=100_000)(b) is b
    edited = ClearToolUses(trigger=3_000, keep=3)(b)
    assert results(b) == ["x" * 4_000] * 5
    assert results(edited)[:2] == [CLEARED, CLEARED] and results(edited)[2:] == ["x" * 4_000] * 3


def test_a_clear_is_an_event_later_requests_keep_its_boundary_until_the_trigger_is_crossed_again() -> None:
    edit = ClearToolUses(trigger=5_000, keep=2)
    # each result is ~1,000 tokens: past 5,000 the oldest all but 2 go, then the context regrows
    seen = [results(edit(history([4_000] * n))).count(CLEARED) for n in range(1, 12)]
    assert seen == sorted(seen)  # once cleared, stays cleared
    assert len(set(seen)) < len(seen) - 3  # the boundary holds for several requests between clears


def test_clear_at_least_skips_a_clear_that_reclaims_too_little_and_excluded_tools_stay() -> None:
    b = history([4_000] * 6)
    assert ClearToolUses(trigger=3_000, keep=3, clear_at_least=100_000)(b) is b
    kept = ClearToolUses(trigger=3_000, keep=0, exclude_tools=("Read",))(history([4_000] * 4, name="Read"))
    assert CLEARED not in results(kept)
    with pytest.raises(SpecError, match="keep"):
        ClearToolUses(keep=-1)


def test_a_request_asking_for_the_edit_in_context_management_gets_it() -> None:
    b = history([4_000] * 6)
    b["context_management"] = {
        "edits": [
            {"type": "clear_thinking_20251015", "keep": "all"},
            {
                "type": "clear_tool_uses_20250919",
                "trigger": {"type": "input_tokens", "value": 3_000},
                "keep": {"type": "tool_uses", "value": 1},
            },
        ]
    }
    edited = results(apply_context_management(b))
    assert edited[:3] == [CLEARED] * 3 and edited[-1] == "x" * 4_000
    del b["context_management"]
    assert apply_context_management(b) is b
