"""The one measure of tokens per character (`replay.rate_samples`, `family_rates`): the what-if's, which
the benchmarks' price rows and `benchmarks/tokens_per_char.py` use too."""

from __future__ import annotations

import copy
from typing import Any

from flower.report._what_if.replay import (
    THINKING_SHARE,
    family,
    family_rates,
    rate_samples,
    thread_of,
)
from tests.report import what_if_history as h
from tests.stores.transcripts import Transcript


def _session(thinking: int, model: str = "claude-sonnet-4-5-20250929") -> list[dict[str, Any]]:
    """Four 4,000-char outputs, each growing the context by 2,000 tokens (0.5 a char), after replies
    carrying `thinking` chars of thinking each (which the context also grows by, 1 token a char)."""
    t = Transcript(session_id=h.S1)
    t.prompt("go")
    context = 10_000
    for number in range(4):
        blocks = [{"type": "thinking", "thinking": "t" * thinking, "signature": "s"}] if thinking else []
        call = t.bash("cat big", f"b{number}")
        h._use(t.assistant(*blocks, call, merged=True), (5, context, 10, 10))
        t.result(f"b{number}", "z" * 4_000)
        context += 2_000 + thinking + len('{"command":"cat big"}') // 2
    h._use(t.assistant({"type": "text", "text": "done"}), (5, context, 10, 10))
    for entry in t.entries:
        if entry.get("type") == "assistant":
            entry["message"]["model"] = model
    return copy.deepcopy(t.entries)


def test_a_request_after_a_reply_mostly_thinking_is_not_measured_on() -> None:
    plain = rate_samples([thread_of("main", _session(0))])
    assert len(plain) == 4 and all(abs(r - 0.5) < 0.01 for r in plain)
    # thinking of 10 % of the characters added: the context grows by it, the characters would not count
    # it (the old measure read 0.6 here); the request is left out
    thought = rate_samples([thread_of("main", _session(int(4_000 * 2 * THINKING_SHARE)))])
    assert thought == []


def test_family_rates_pool_the_sessions_of_one_family_and_leave_mixed_ones_out() -> None:
    one = [thread_of("main", _session(0))]
    other = [thread_of("main", _session(0, "claude-opus-4-6"))]
    mixed_entries = _session(0)
    for entry in [e for e in mixed_entries if e.get("type") == "assistant"][:3]:
        entry["message"]["model"] = "claude-opus-4-6"
    found = family_rates([one, one, other, [thread_of("main", mixed_entries)]])
    assert set(found) == {"claude-sonnet-4-5", "claude-opus-4-6"}
    rate, requests, sessions = found["claude-sonnet-4-5"]
    assert abs(rate - 0.5) < 0.01 and requests == 8 and sessions == 2
    assert found["claude-opus-4-6"][2] == 1
    assert family("claude-opus-4-5-20251101") == "claude-opus-4-5"
