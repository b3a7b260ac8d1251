"""The what-if's read-back estimate, its signs, how a session stopped, and the delegation's fixed price.

Pure functions over small transcripts built as the CLI writes them (`tests.stores.transcripts`); the
figures they use are `flower.report._measured`'s.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from flower._cost import TTL_5M, price
from flower._usage import TokenUsage
from flower._warm import KeepWarmPolicy
from flower._warm.schedule import ping_limit
from flower.report._measured import (
    LOOKUP_WHOLE_READ_SHARE,
    PARTIAL_READ_BACK,
    PREVIEW_READ_BACK_SHARE,
    WHOLE_READ_CHARS_PER_CHAR,
)
from flower.report._what_if.delegation import coordinator_wait, tool_loops, warm_starts
from flower.report._what_if.quotes import Copy, ThreadText, tokens, values
from flower.report._what_if.readback import (
    CENTRAL,
    PESSIMISTIC,
    REPLY_CHARS,
    Repeat,
    coordinator_look_ups,
    read_backs,
)
from flower.report._what_if.replay import Saving, Thread, thread_of
from flower.report._what_if.spill import SpillHit
from flower.report._what_if.stopped import how_it_stopped
from tests.stores.transcripts import Transcript

HEAD = "h" * 300
LOOK_UPS = dataclasses.replace(CENTRAL, look_share=0.0)
"""The real figures with no read to look at an output: the look-ups alone."""
TAIL = "t" * 100


def _use(entries: list[dict[str, Any]], context: int, output: int = 10) -> None:
    for entry in entries:
        entry["message"]["usage"] = {
            "input_tokens": 0,
            "cache_read_input_tokens": context,
            "cache_creation_input_tokens": 0,
            "output_tokens": output,
        }


def _replies(t: Transcript) -> list[tuple[int, list[dict[str, Any]]]]:
    return [(i, e["message"]["content"]) for i, e in enumerate(t.entries) if e["type"] == "assistant"]


def test_tokens_are_the_values_with_a_digit_and_a_letter() -> None:
    text = "see cmd.Run in app/main.go:515 with ERR-4711=disk, id 20260101 and abc123def"
    assert values(text) == {"cmd.Run", "app/main.go:515", "ERR-4711=disk", "20260101", "abc123def"}
    assert tokens(text) == {"app/main.go:515", "ERR-4711=disk", "abc123def"}


def _copying() -> tuple[Transcript, str]:
    """An output whose hidden part holds four tokens: one copied later and found nowhere else, one that
    another output shows too, one the model wrote before the output, one the preview shows."""
    t = Transcript()
    t.prompt("Run it.")
    _use(t.assistant({"type": "text", "text": "Earlier I saw OLD-11a."}, t.bash("run", "b1")), 1_000)
    hidden = "\n".join(["zone 1", "found KEY-7f3k9q", "also DUP-2b8x", "and OLD-11a", "TAIL-9z9z"])
    output = HEAD + "\n" + hidden + "\n" + TAIL[: 100 - len("TAIL-9z9z") - 1] + " TAIL-9z9z"
    t.result("b1", output)
    _use(t.assistant(t.bash("cat other", "b2")), 5_000)
    t.result("b2", "other output: DUP-2b8x")
    _use(t.assistant({"type": "text", "text": "Values: KEY-7f3k9q DUP-2b8x OLD-11a TAIL-9z9z."}), 6_000)
    return t, output


def test_copies_are_tokens_found_only_in_the_hidden_part() -> None:
    t, output = _copying()
    text = ThreadText.of(t.entries, _replies(t))
    index = next(i for i, e in enumerate(t.entries) if e["type"] == "user" and i > 1)
    call = t.entries[index - 1]["message"]["content"][0]
    assert call["id"] == "b1"
    found = text.copies(index, output, call, 300, 100)
    last = len(t.entries) - 1
    assert found == (Copy(last, 2),)  # line 2 of the output (0: the head): KEY-7f3k9q alone
    assert text.quoted_at(index, output, call, 300, 100) == last


def test_read_back_of_an_output_copied_from_is_a_look_up() -> None:
    t, _ = _copying()
    thread = thread_of("main", t.entries)
    last = len(t.entries) - 1
    hit = SpillHit(4, "b1", "Bash", 10_000, 9_000, lines=200, quoted_at=last, copies=(Copy(last, 2),))
    found = read_backs(thread, [hit], 0.25, LOOK_UPS)
    # the look-up (LOOKUP_CALLS: 1.86 calls, 0.86 misses; misses: a Read of 100 lines of 50 chars, a
    # search of 20; the last call: the whole file 32.5 % of the time, else the line), by the reply that
    # copies (2)
    misses = 0.86 * (0.572 * 5_000 * WHOLE_READ_CHARS_PER_CHAR + 0.428 * 1_000)
    chars = misses + LOOKUP_WHOLE_READ_SHARE * 10_000 * WHOLE_READ_CHARS_PER_CHAR + 0.675 * 50
    assert found.chars == pytest.approx(chars, abs=1e-9) and found.expected == 1.0
    prose = pytest.approx(1.86 * REPLY_CHARS / 4, abs=1e-9)  # each call's reply: a main thread's prose
    assert found.repeats == [
        Repeat(2, pytest.approx(1.86, abs=1e-12), pytest.approx(chars / 4, abs=1e-9), prose)
    ]
    assert found.added == []  # the reply that copies is the thread's last: nothing comes after it
    worst = read_backs(thread, [hit], 0.25, PESSIMISTIC)  # quoted: looked up, the last call whole
    whole, looked = 10_000 * WHOLE_READ_CHARS_PER_CHAR, PESSIMISTIC.look_share  # unless read whole to look
    assert worst.chars == pytest.approx(looked * whole + (1 - looked) * (misses + whole), abs=1e-9)
    # the real figures: read to look at it when it arrives (17 %), and then read whole: no look-up
    central = read_backs(thread, [hit], 0.25, CENTRAL)
    share = PREVIEW_READ_BACK_SHARE
    assert central.expected == pytest.approx(share + (1 - share), abs=1e-12)
    assert [r.request for r in central.repeats] == [2, 2]  # the look, then the look-up
    assert central.repeats[1].weight == pytest.approx((1 - share) * 1.86, abs=1e-12)


def test_an_output_nothing_copies_from_is_read_back_to_look_at_it_at_the_real_share() -> None:
    t = Transcript()
    t.prompt("Go.")
    for number in range(3):
        _use(t.assistant(t.bash(f"step {number}", f"s{number}")), 1_000 * (number + 1))
        t.result(f"s{number}", "x" * 50)
    thread = thread_of("main", t.entries)
    small = SpillHit(2, "s0", "Bash", 8_000, 7_000, lines=10)
    big = SpillHit(2, "s0", "Bash", 200_000, 199_000, lines=10)
    read = SpillHit(2, "s0", "Read", 8_000, 7_000, lines=10)
    saved_by_cli = SpillHit(2, "s0", "Bash", 8_000, 7_000, lines=10, cli_saved=True)
    share = PREVIEW_READ_BACK_SHARE
    whole = 8_000 * WHOLE_READ_CHARS_PER_CHAR * share / 4
    found = read_backs(thread, [small], 0.25, CENTRAL)
    assert found.repeats == [Repeat(1, share, pytest.approx(whole, abs=1e-9), share * REPLY_CHARS / 4)]
    assert found.added == [Saving(2, 3, 2_010, pytest.approx(whole), pytest.approx(-whole))]
    partial = read_backs(thread, [big], 0.25, CENTRAL)  # over the Read cap: read in windows
    calls = PARTIAL_READ_BACK[0] * share
    assert partial.repeats == [Repeat(1, calls, PARTIAL_READ_BACK[1] * share / 4, calls * REPLY_CHARS / 4)]
    assert read_backs(thread, [read], 0.25, CENTRAL).chars == pytest.approx(8_000 * share)  # numbered
    assert read_backs(thread, [saved_by_cli], 0.25, CENTRAL).repeats == []


def _two_copies() -> tuple[Thread, tuple[Copy, Copy]]:
    """Four requests, and two lines of one output copied by the third and the fourth."""
    t = Transcript()
    t.prompt("Go.")
    for number in range(4):
        _use(t.assistant(t.bash(f"step {number}", f"s{number}")), 1_000 * (number + 1))
        t.result(f"s{number}", "x")
    thread = thread_of("main", t.entries)
    return thread, (Copy(thread.requests[2].entry, 5), Copy(thread.requests[3].entry, 9))


def test_a_second_look_up_in_one_output_is_needed_only_when_the_first_read_part_of_it() -> None:
    thread, copies = _two_copies()
    found = read_backs(
        thread, [SpillHit(3, "s0", "Bash", 6_000, 5_000, lines=600, copies=copies)], 0.25, LOOK_UPS
    )
    assert [r.request for r in found.repeats] == [2, 3]
    assert found.expected == pytest.approx(1 + (1 - LOOKUP_WHOLE_READ_SHARE), abs=1e-12)


def test_a_look_up_in_an_output_no_longer_than_a_read_window_ends_at_its_first_read() -> None:
    thread, copies = _two_copies()
    hit = SpillHit(3, "s0", "Bash", 6_000, 5_000, lines=60, copies=copies)
    found = read_backs(thread, [hit], 0.25, LOOK_UPS)
    # a miss is a Read of 100 lines (57.2 %) or a search (42.8 %); on 60 lines the Read reads them all:
    # the look-up ends there, the output read whole, and no second look-up is needed
    r, s, w = 0.572, 0.428, LOOKUP_WHOLE_READ_SHARE
    calls = 0.48 + 0.18 * (r + 2 * s) + 0.34 * (r + 2 * s * r + 3 * s * s)
    whole = 0.48 * w + 0.18 * (r + s * w) + 0.34 * (r + s * r + s * s * w)
    searched = 0.18 * s + 0.34 * (s * r + 2 * s * s)  # the searches that missed before it ended
    assert [r.request for r in found.repeats] == [2, 3]
    assert found.repeats[0].weight == pytest.approx(calls, abs=1e-12)
    assert found.expected == pytest.approx(1 + (1 - whole), abs=1e-12)
    back = searched * 20 * 100 + whole * 6_000 * WHOLE_READ_CHARS_PER_CHAR + (1 - whole) * 100
    assert found.repeats[0].tokens == pytest.approx(back / 4, abs=1e-9)
    longer = read_backs(thread, [dataclasses.replace(hit, lines=101)], 0.25, LOOK_UPS)
    assert longer.repeats[0].weight == pytest.approx(1.86, abs=1e-12)  # past the window: the real calls


def test_how_a_session_stopped() -> None:
    finished = Transcript()
    finished.prompt("Go.")
    finished.assistant({"type": "text", "text": "Done."})
    assert how_it_stopped(finished.entries) == ""
    window = Transcript()
    window.prompt("Go.")
    error = window.api_error()
    error["message"]["content"] = [{"type": "text", "text": "Prompt is too long"}]
    error["error"] = "invalid_request"
    assert how_it_stopped(window.entries) == "window"
    failed = Transcript()
    failed.prompt("Go.")
    failed.api_error()
    assert how_it_stopped(failed.entries) == "api error"
    cut = Transcript()
    cut.prompt("Go.")
    cut.assistant({"type": "text", "text": "Running."}, cut.bash("make", "m1"), cut.bash("make test", "m2"))
    cut.result("m1", "ok")
    assert how_it_stopped(cut.entries) == "cut"
    interrupted = Transcript()
    interrupted.prompt("Go.")
    interrupted.assistant(interrupted.bash("make", "m1"))
    interrupted.result("m1", "", interrupted=True)
    assert how_it_stopped(interrupted.entries) == ""


def test_the_coordinator_waits_kept_warm_as_flower_keeps_it() -> None:
    usage = TokenUsage(cache_read=30_000, cache_creation=500, input=3)
    pings, gone = coordinator_wait(usage, 600.0, "claude-sonnet-4-6", True)
    ping = TokenUsage(cache_read=30_503, cache_creation=4, output=1)
    assert (pings, gone) == ([ping, ping], False)  # at 270 s and 540 s; the report comes at 600 s
    assert coordinator_wait(usage, 600.0, "claude-sonnet-4-6", False) == ([], True)
    assert coordinator_wait(usage, 200.0, "claude-sonnet-4-6", False) == ([], False)
    limit = ping_limit(KeepWarmPolicy(), model="claude-sonnet-4-6", lifetime=TTL_5M)
    long, gone = coordinator_wait(usage, 270.0 * (limit + 2), "claude-sonnet-4-6", True)
    assert (len(long), gone) == (limit, True)  # past the limit a rewrite costs less than more pings
    assert price(long, model="claude-sonnet-4-6").total == pytest.approx(
        limit * (30_503 * 0.3 + 4 * 3.75 + 15) / 1e6
    )


def test_a_worker_reads_the_workers_prefix_when_another_ran_within_five_minutes() -> None:
    t = Transcript()
    t.prompt("Go.")
    for number, pause in enumerate((0, 0, 400, 0)):  # four loops of two calls; a pause before the third
        t.pause(pause)
        t.assistant(t.bash(f"make {number}", f"a{number}"))
        t.result(f"a{number}", "ok")
        t.assistant(t.bash(f"make test {number}", f"b{number}"))
        t.result(f"b{number}", "ok")
        t.assistant({"type": "text", "text": "next"})
        t.prompt("Go on.")
    t.assistant({"type": "text", "text": "Done."})
    thread = thread_of("main", t.entries)
    loops = tool_loops(thread)
    assert len(loops) == 4
    assert warm_starts(thread, loops) == [False, True, False, True]


def test_the_coordinator_looks_up_what_a_later_reply_copies_from_what_its_worker_saw() -> None:
    t = Transcript()
    t.prompt("Investigate.")
    _use(t.assistant(t.bash("make a", "a1")), 1_000)
    t.result("a1", "log\n" * 50 + "result RES-5k2j\n" + "log\n" * 50)
    _use(t.assistant(t.bash("make b", "a2")), 2_000)
    t.result("a2", "other ERR-77x1\n")
    _use(t.assistant({"type": "text", "text": "Noted."}), 3_000)
    t.prompt("What was the result?")
    _use(t.assistant({"type": "text", "text": "It was RES-5k2j."}), 3_100)
    thread = thread_of("main", t.entries)
    loops = tool_loops(thread)
    assert loops == [(0, 2, 2)]  # the two calls: a worker's; the answer after the prompt: the coordinator's
    found = coordinator_look_ups(thread, loops, 0.25)
    assert (found.expected, [r.request for r in found.repeats]) == (1.0, [3])
    text = "log\n" * 50 + "result RES-5k2j\n" + "log\n" * 50
    lines = text.count("\n") + 1
    line = len(text) / lines
    read, search = min(len(text), 100 * line), min(len(text), 20 * line)  # a miss: 100 lines, or 20
    misses = 0.86 * (0.572 * read * WHOLE_READ_CHARS_PER_CHAR + 0.428 * search)
    whole = (
        LOOKUP_WHOLE_READ_SHARE * len(text) * WHOLE_READ_CHARS_PER_CHAR + (1 - LOOKUP_WHOLE_READ_SHARE) * line
    )
    assert found.chars == pytest.approx(misses + whole, abs=1e-9)
