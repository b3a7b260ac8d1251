"""The delegation estimate's worker and own steps: what a worker writes, and which stretches stay.

Pure functions over small transcripts built as the CLI writes them (`tests.stores.transcripts`); the
figures are `flower.report._measured`'s and the wall's (`OWN_STEP_MAX_INPUT`).
"""

from __future__ import annotations

import pytest

from flower._wall.delegate import OWN_STEP_MAX_INPUT
from flower.report._measured import SUBAGENT_TEXT, SUBAGENT_THINKING, expected_chars
from flower.report._what_if.delegation import (
    DelegationAssumptions,
    delegation_line,
    tool_loops,
    worker_outputs,
)
from flower.report._what_if.replay import Thread, thread_of
from tests.stores.transcripts import Transcript


def _step(t: Transcript, name: str, tool_input: dict[str, str], call_id: str) -> None:
    t.assistant(t.call(name, tool_input, call_id))
    t.result(call_id, "ok")


def test_a_one_off_hands_on_step_stays_with_a_lenient_coordinator_and_a_row_of_two_goes() -> None:
    """flower's coordinator is strict by default (`own_steps=0`): every hands-on call goes to a worker;
    with `own_steps=1`, a one-off step stays."""
    t = Transcript()
    t.prompt("Go.")
    _step(t, "Bash", {"command": "make a"}, "a")  # 0: one step, then a read: stays
    _step(t, "Read", {"file_path": "/x/a"}, "r1")
    _step(t, "Bash", {"command": "make b"}, "b")  # 2, 3: two in a row: a worker's
    _step(t, "Bash", {"command": "make c"}, "c")
    _step(t, "Read", {"file_path": "/x/b"}, "r2")
    _step(t, "Write", {"file_path": "/x/big", "content": "x" * (OWN_STEP_MAX_INPUT + 1)}, "w1")  # 5: too big
    _step(t, "Read", {"file_path": "/x/c"}, "r3")
    _step(t, "Grep", {"pattern": "ERR"}, "g")  # 7: not hands-on, not the coordinator's: a worker's
    _step(t, "Read", {"file_path": "/x/d"}, "r4")
    _step(t, "Write", {"file_path": "/x/small", "content": "x" * OWN_STEP_MAX_INPUT}, "w2")  # 9: stays
    _step(t, "Read", {"file_path": "/x/e"}, "r5")
    t.assistant({"type": "text", "text": "Done."})
    thread = thread_of("main", t.entries)
    assert tool_loops(thread, own_steps=1) == [(2, 4, 2), (5, 6, 1), (7, 8, 1)]
    assert tool_loops(thread) == [(0, 1, 1), (2, 4, 2), (5, 6, 1), (7, 8, 1), (9, 10, 1)], "strict: all go"
    assert tool_loops(thread, own_steps=2)[0] == (5, 6, 1)  # the row of two stays too


def test_at_the_low_end_the_worker_looks_at_the_state_its_calls_left_before_it_reports() -> None:
    t = Transcript()
    t.prompt("Go.")
    _step(t, "Bash", {"command": "make a"}, "a")  # 0: one step, then glances: stays, glances too
    _step(t, "Bash", {"command": "cat state/status.txt"}, "s1")
    _step(t, "Read", {"file_path": "/x/a"}, "r1")
    _step(t, "Bash", {"command": "make b"}, "b")  # 3, 4: a worker's, and the two glances after them
    _step(t, "Bash", {"command": "make c"}, "c")
    _step(t, "Bash", {"command": "ls -la src"}, "s2")
    _step(t, "Bash", {"command": "cat state/status.txt"}, "s3")
    _step(t, "Read", {"file_path": "/x/b"}, "r2")  # 7: a read stays the coordinator's
    t.assistant({"type": "text", "text": "Done."})
    thread = thread_of("main", t.entries)
    assert tool_loops(thread, own_steps=1) == [(3, 5, 2)]
    assert tool_loops(thread, own_steps=1, trailing=True) == [(3, 7, 4)]
    assert tool_loops(thread, trailing=True) == [(0, 2, 2), (3, 7, 4)], "strict: the one step goes too"
    low, high = DelegationAssumptions().worker_glances
    assert low and not high


def test_a_worker_writes_its_calls_and_a_real_subagents_prose_not_the_main_threads() -> None:
    t = Transcript()
    t.prompt("Go.")
    t.assistant({"type": "thinking", "thinking": "t" * 5_000}, t.call("Bash", {"command": "make a"}, "a"))
    t.result("a", "ok")
    t.assistant({"type": "text", "text": "w" * 900}, t.call("Bash", {"command": "make ab"}, "b"))
    t.result("b", "ok")
    t.assistant({"type": "text", "text": "The report."})
    main = thread_of("main", t.entries)
    # '{"command":"make a"}' is 20 chars, '{"command":"make ab"}' 21; the last reply is the report's
    assert worker_outputs(main, 80.0, 0.25) == [25, 25]  # round(0.25 * 100), round(0.25 * 101) = 25
    loop = Thread("worker", main.entries, main.requests[1:])
    assert worker_outputs(loop, 81.0, 0.5) == [51]  # 0.5 x (21 + 81): the 900-char text not written


def test_a_workers_prose_is_what_real_subagents_write() -> None:
    assert expected_chars(SUBAGENT_THINKING) == 0.0
    assert expected_chars(SUBAGENT_TEXT) == pytest.approx(71.0497, abs=1e-4)  # 0.871 x 77 x e^(s^2/2)
    assumed = DelegationAssumptions()
    assert (assumed.worker_prose_chars, assumed.own_steps) == (expected_chars(SUBAGENT_TEXT), 0)


def test_a_workers_prose_costs_its_output_and_what_its_next_request_reads() -> None:
    t = Transcript()
    t.prompt("Go.")
    replies = [t.assistant(t.call("Bash", {"command": "make a"}, "a"))]
    t.result("a", "ok")
    replies.append(t.assistant(t.call("Bash", {"command": "make b"}, "b")))
    t.result("b", "ok")
    replies.append(t.assistant({"type": "text", "text": "Done."}))
    for context, entries in zip((1_000, 2_000, 3_000), replies, strict=True):
        for entry in entries:
            entry["message"]["model"] = "claude-sonnet-4-6"
            entry["message"]["usage"] = {
                "input_tokens": 0,
                "cache_read_input_tokens": context,
                "cache_creation_input_tokens": 0,
                "output_tokens": 10,
            }
    main = thread_of("main", t.entries)
    assert tool_loops(main) == [(0, 2, 2)]  # two calls: a worker's, whose requests are the last two
    usages = [r.usage for r in main.requests]

    def cost(prose: float) -> float:
        line = delegation_line(
            main, (usages, usages), (0.0, 0.0), 0.25, DelegationAssumptions(worker_prose_chars=prose)
        )
        return line.cost_usd_low

    # the worker's first reply writes '{"command":"make b"}' (20 chars) and its prose: 5 tokens with none,
    # 105 with 400 chars; its next request reads those 100 more from the cache (all of its context is)
    assert cost(400.0) - cost(0.0) == pytest.approx((105 - 5) * (15 + 0.3) / 1e6, abs=1e-12)


def test_an_inline_start_keeps_the_calls_made_while_the_context_was_small() -> None:
    """`inline_until`: the wall judges a reply by its own request's context, so the replies before the
    first request at the limit run inline; the rest of the stretch goes."""
    t = Transcript()
    t.prompt("Go.")
    for number, context in enumerate((10_000, 20_000, 60_000, 70_000)):
        call = f"c{number}"
        for entry in t.assistant(t.call("Bash", {"command": f"make {number}"}, call)):
            entry["message"]["usage"] = {"input_tokens": 5, "cache_read_input_tokens": context}
        t.result(call, "ok")
    _step(t, "Read", {"file_path": "/x/a"}, "r")
    t.assistant({"type": "text", "text": "Done."})
    thread = thread_of("main", t.entries)
    assert tool_loops(thread) == [(0, 4, 4)]
    assert tool_loops(thread, inline_until=50_000) == [(2, 4, 2)]
    assert tool_loops(thread, inline_until=100_000) == []
