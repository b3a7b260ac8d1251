"""A handoff in place of each compaction (the handoff line): what the successor starts from, and what its
request costs. The successor is a new session that starts from the fixed start, the takeover prompt and
the document, where the CLI's restart also carries the files it reads again and the messages it keeps.
Pure functions over a transcript; where flower's own policy hands off in a replay is in
`test_what_if_threshold.py`."""

from __future__ import annotations

from typing import Any

import pytest

from flower.cost import price
from flower.handoff.document import HANDOFF_PROMPT, TAKEOVER_PROMPT
from flower.report.what_if.handoff import handoff_line, handoff_requests
from flower.report.what_if.replay import thread_of
from flower.usage import TokenUsage
from tests.stores.transcripts import Transcript


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
