"""Handoffs in a replay. The handoff line weighs each compaction against a handoff in its place: the
successor is a new session that starts from the fixed start, the takeover prompt and the document, where
the CLI's restart also carries the files it reads again and the messages it keeps. The replays of flower
(`what_if.threshold`) hand off after the first reply whose context reaches `HandoffPolicy.threshold`, carry
the context on past a compaction the CLI made by itself (flower turns it off), and hand off at a `/compact`
the user asked for; the policy's window is given here (147k on a 200k window would need transcripts of
that size). Pure functions over a transcript."""

from __future__ import annotations

from typing import Any

import pytest

from flower._cost import price
from flower._handoff.document import HANDOFF_PROMPT, TAKEOVER_PROMPT, HandoffPolicy
from flower._usage import TokenUsage
from flower.report._measured import SUMMARY_CHARS
from flower.report._what_if.handoff import handoff_line, handoff_requests
from flower.report._what_if.replay import thread_of
from flower.report._what_if.threshold import LARGE_WINDOW, handed_off, window_of
from tests.stores.transcripts import Transcript

POLICY = HandoffPolicy(window=100_000)
"""Threshold 47,000 (100k - 33k - the default 20k reserve)."""
RATE = 0.25
FRAMED = round(len(TAKEOVER_PROMPT) * RATE)
ASKED = round(len(HANDOFF_PROMPT) * RATE)


def _use(entries: list[dict[str, Any]], read: int, written: int = 0, output: int = 10) -> None:
    for entry in entries:
        entry["message"]["usage"] = {
            "input_tokens": 0,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written,
            "output_tokens": output,
        }


def _compacted() -> Transcript:
    """Two requests, a compaction (a 4,000-char summary), and two requests after it: the restart reads
    the 1,000-token prefix and writes 9,000 (the summary, and what the CLI sent again with it)."""
    t = Transcript()
    t.prompt("Go.")
    _use(t.assistant(t.bash("step 0", "s0")), 1_000)
    t.result("s0", "x")
    _use(t.assistant(t.bash("step 1", "s1")), 50_000)
    t.result("s1", "x")
    t.compact_summary("s" * 4_000)
    _use(t.assistant(t.bash("step 2", "s2")), 1_000, written=9_000)
    t.result("s2", "x")
    _use(t.assistant({"type": "text", "text": "done"}), 10_500)
    return t


def test_the_handoff_request_reads_the_context_before_the_boundary() -> None:
    thread = thread_of("main", _compacted().entries)
    used = [r.usage for r in thread.requests]
    asked = round(len(HANDOFF_PROMPT) / 4)
    assert handoff_requests(thread, used, 0.25) == [
        TokenUsage(cache_read=50_010, cache_creation=asked, output=1_000)
    ]
    line = handoff_line(thread, [], 0.25)
    assert line.compactions == 1 and line.estimated == 1
    successor = 1_000 + round(len(TAKEOVER_PROMPT) / 4) + 1_000
    start = TokenUsage(cache_read=1_000, cache_creation=successor - 1_000, output=10)
    ask = TokenUsage(cache_read=50_010, cache_creation=asked, output=1_000)
    model = thread.requests[0].model
    assert line.handoff_usd == pytest.approx(price([ask, start], model=model).total, abs=1e-12)
    assert line.saved_usd > 0  # the successor writes less than the CLI's restart did


def _growing(compaction: str | None = None) -> Transcript:
    """Four requests at 1,000, 50,000, 50,510 and 51,000 tokens; with `compaction` ("auto", "manual" or
    "" for none recorded), a compaction (a 4,000-char summary) after the second, whose restart reads
    1,000 tokens and writes 9,000, the request after it at 10,500."""
    t = Transcript()
    t.prompt("Go.")
    _use(t.assistant(t.bash("step 0", "s0")), 1_000)
    t.result("s0", "x" * 400)
    _use(t.assistant(t.bash("step 1", "s1")), 50_000)
    t.result("s1", "y" * 800)  # 200 tokens
    if compaction is None:
        _use(t.assistant(t.bash("step 2", "s2")), 50_010, written=500)
        t.result("s2", "z")
        _use(t.assistant({"type": "text", "text": "done"}), 51_000)
        return t
    t.compact_summary("s" * 4_000)
    if compaction:
        t.entries[-2]["compactMetadata"] = {"trigger": compaction, "preTokens": 50_210}
    _use(t.assistant(t.bash("step 2", "s2")), 1_000, written=9_000)
    t.result("s2", "z")
    _use(t.assistant({"type": "text", "text": "done"}), 10_500)
    return t


def _handed(t: Transcript, policy: HandoffPolicy = POLICY, skip: frozenset[int] = frozenset()) -> Any:
    thread = thread_of("main", t.entries)
    return handed_off(thread, [r.usage for r in thread.requests], RATE, policy, skip)


def test_flower_hands_off_after_the_first_reply_at_its_threshold_without_a_compaction() -> None:
    handed = _handed(_growing())
    document = round(SUMMARY_CHARS * RATE)  # never compacted: the real summaries' median
    successor = 1_000 + FRAMED + document
    assert handed.after == (1,)
    # the request for the document: the context read, the crossing reply's results (500) and the prompt
    assert handed.asks == [TokenUsage(cache_read=50_010, cache_creation=500 + ASKED, output=document)]
    # the successor's first request: the fixed start read from the cache, the rest written
    assert handed.used[2] == TokenUsage(cache_read=1_000, cache_creation=successor - 1_000, output=10)
    # after it, each request adds what it added as recorded (480), and reads its prefix from the cache
    assert handed.used[3] == TokenUsage(cache_read=successor + 10 + 480, output=10)
    assert [u.context for u in handed.used[:2]] == [1_000, 50_000]


def test_a_request_moved_into_a_worker_is_never_checked() -> None:
    handed = _handed(_growing(), skip=frozenset({1}))
    assert handed.after == (2,)  # the coordinator's context reached the threshold one request later
    assert handed.asks[0].cache_read == 50_510 + 10


def test_below_the_threshold_the_context_goes_on_past_a_compaction_the_cli_made_by_itself() -> None:
    for trigger in ("auto", ""):  # a boundary without metadata counts as the CLI's own
        handed = _handed(_growing(trigger), HandoffPolicy(window=200_000))
        assert handed.after == () and handed.asks == []
        # the restart reads what the thread held and writes the tool result that came in since
        assert handed.used[2] == TokenUsage(cache_read=50_010, cache_creation=200, output=10)
        assert handed.used[3] == TokenUsage(cache_read=50_210 + 10 + 490, output=10)


def test_over_the_threshold_the_handoff_comes_before_the_cli_compaction_with_its_summary() -> None:
    handed = _handed(_growing("auto"))
    successor = 1_000 + FRAMED + 1_000  # the summary's 4,000 chars as the document
    assert handed.after == (1,)
    # the tool result that came in before the CLI would have compacted goes to the request for the document
    assert handed.asks == [TokenUsage(cache_read=50_010, cache_creation=200 + ASKED, output=1_000)]
    assert handed.used[2] == TokenUsage(cache_read=1_000, cache_creation=successor - 1_000, output=10)
    assert handed.used[3].context == successor + 10 + 490


def test_a_compaction_the_user_asked_for_is_a_handoff_where_it_was() -> None:
    handed = _handed(_growing("manual"), HandoffPolicy(window=200_000))
    successor = 1_000 + FRAMED + 1_000
    assert handed.after == (1,)
    assert handed.asks == [TokenUsage(cache_read=50_010, cache_creation=ASKED, output=1_000)]
    assert handed.used[2] == TokenUsage(cache_read=1_000, cache_creation=successor - 1_000, output=10)
    assert handed.used[3] == TokenUsage(cache_read=successor + 10 + 490, output=10)


def test_a_session_that_began_with_a_history_starts_its_successor_from_the_restarts_prefix() -> None:
    t = _growing("manual")
    first = next(e for e in t.entries if e["type"] == "assistant")
    first["message"]["usage"]["cache_read_input_tokens"] = 60_000  # a continued session's first request
    handed = _handed(t, HandoffPolicy(window=200_000))
    assert handed.used[2].context == 1_000 + FRAMED + 1_000  # the restart's cached 1,000 tokens


def test_no_policy_no_handoff() -> None:
    thread = thread_of("main", _growing("auto").entries)
    used = [r.usage for r in thread.requests]
    handed = handed_off(thread, used, RATE, HandoffPolicy(enabled=False))
    assert handed.used == used and handed.asks == []


def test_the_window_is_the_models_unless_the_session_went_past_it() -> None:
    t = _growing()
    for entry in t.entries:
        if entry["type"] == "assistant":
            entry["message"]["model"] = "claude-sonnet-4-6"
    assert window_of(thread_of("main", t.entries), HandoffPolicy()) == 200_000
    assert window_of(thread_of("main", t.entries), POLICY) == 100_000
    last = [e for e in t.entries if e["type"] == "assistant"][-1]
    last["message"]["usage"]["cache_read_input_tokens"] = 250_000  # a [1m] session
    assert window_of(thread_of("main", t.entries), HandoffPolicy()) == LARGE_WINDOW


def test_a_compaction_inside_a_stretch_moved_into_a_worker_is_not_the_coordinators() -> None:
    handed = _handed(_growing("auto"), HandoffPolicy(window=200_000), skip=frozenset({1}))
    # the coordinator's context goes on from its own last request, not from the CLI's restart
    assert handed.used[2] == TokenUsage(cache_read=1_010, cache_creation=200, output=10)
    assert handed.used[1] == thread_of("main", _growing("auto").entries).requests[1].usage  # left as it is
