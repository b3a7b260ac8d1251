"""The delegation estimate of `coordinator(inline_until=T)` under a `Runtime`: an inline session, then a
handoff to the strict coordinator.

Pure functions over small transcripts built as the CLI writes them (`tests.stores.transcripts`), and one
what-if over a tiny projects directory: the inline session's prefix is its own (no `Agent`, the short
inline prompt), exactly one handoff comes after the first reply that reached `T`, and a session that never
reached it keeps every call and hands nothing off.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flower import HandoffPolicy
from flower._handoff.document import TAKEOVER_PROMPT
from flower._usage import TokenUsage
from flower.report._measured import SUMMARY_CHARS
from flower.report._what_if import WhatIfOptions, build_what_if_sync
from flower.report._what_if.delegation import (
    DelegationAssumptions,
    delegation_line,
    inline_switch,
    tool_loops,
)
from flower.report._what_if.prefix import (
    AGENT_LISTING_CHARS,
    AGENT_TOOL_CHARS,
    coordinator_delta,
    coordinator_shape,
    recorded_shape,
)
from flower.report._what_if.replay import thread_of
from flower.report._what_if.threshold import handed_off
from tests.stores.transcripts import Transcript

RATE = 0.25
MODEL = "claude-sonnet-4-6"


def _use(entries: list[dict[str, Any]], read: int, written: int = 0) -> None:
    for entry in entries:
        entry["message"]["model"] = MODEL
        entry["message"]["usage"] = {
            "input_tokens": 0,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written,
            "output_tokens": 10,
        }


def _shape() -> dict[str, Any]:
    """An `api-request-shape` entry: the CLI's identity block, its 28,000-char preset, Bash and Read."""
    blocks = [{"type": "text", "text": "s" * (n - 28)} for n in (62, 28_000)]
    tools = {"Bash": 12_000, "Read": 3_000}
    defined = [{"name": name, "description": "d" * (n - 31 - len(name))} for name, n in tools.items()]
    return {"type": "api-request-shape", "shape": {"system": blocks, "tools": defined}}


def _steps(contexts: tuple[int, ...], shape: bool = False) -> Transcript:
    """A hands-on Bash call at each of `contexts` (the first written, the others read from the cache and
    adding what they add), then a read and the answer."""
    t = Transcript()
    if shape:
        t.entries.append(_shape())
    t.prompt("p" * 400)
    for number, context in enumerate(contexts):
        call = f"c{number}"
        _use(t.assistant(t.bash(f"make {number}", call)), *((0, context) if number == 0 else (context,)))
        t.result(call, "ok")
    _use(t.assistant(t.call("Read", {"file_path": "/x/a"}, "r")), contexts[-1] + 500)
    t.result("r", "ok")
    _use(t.assistant({"type": "text", "text": "Done."}), contexts[-1] + 1_000)
    return t


def test_the_inline_session_sends_a_shorter_prefix_than_the_coordinator() -> None:
    """No `Agent` (nor its agent listing) and the short inline prompt in place of the coordinator's."""
    shape = recorded_shape(_steps((10_000,), shape=True).entries)
    assert shape is not None
    coordinator = coordinator_shape(shape, MODEL, {"Bash"})
    inline = coordinator_shape(shape, MODEL, {"Bash"}, inline_until=30_000)
    # the coordinator's prompt and rules are longer than the inline prompt too
    assert coordinator - inline > AGENT_TOOL_CHARS[MODEL] + AGENT_LISTING_CHARS
    main = thread_of("main", _steps((10_000,), shape=True).entries)
    ours, theirs = coordinator_delta(main, 30_000), coordinator_delta(main)
    assert ours is not None and theirs is not None and ours < theirs


def test_the_switch_is_one_handoff_to_a_coordinator_that_starts_from_its_own_prefix() -> None:
    """After the switch's reply: the inline session is asked for its document (`inline_prompt`), and the
    coordinator's first request writes its whole context, its fixed start `shift` tokens longer."""
    thread = thread_of("main", _steps((1_000, 40_000, 50_000, 50_500)).entries)
    recorded = [r.usage for r in thread.requests]
    # the requests after the switch carry the coordinator's prefix, 2,000 tokens longer (read as recorded)
    used = [u + TokenUsage(cache_read=2_000) if n > 1 else u for n, u in enumerate(recorded)]
    policy = HandoffPolicy(window=100_000)  # its own line at 47,000
    handed = handed_off(thread, used, RATE, policy, switch=1, shift=2_000)
    document = round(SUMMARY_CHARS * RATE)
    successor = 1_000 + 2_000 + round(len(TAKEOVER_PROMPT) * RATE) + document
    assert handed.after == (1,), "one handoff: the coordinator never reaches the policy's line"
    asked = round(len(policy.inline_prompt) * RATE)
    assert handed.asks == [TokenUsage(cache_read=40_010, cache_creation=asked + 9_990, output=document)]
    assert handed.used[2] == TokenUsage(cache_creation=successor, output=10)
    assert handed.used[3].context == successor + 10 + 490
    # without the switch, the policy's own handoff after the reply at 50,000
    assert handed_off(thread, recorded, RATE, policy).after == (2,)


def test_the_strict_part_starts_at_the_coordinators_first_request() -> None:
    """The calls of the reply that reached `T` run as a handoff's last reply's do; the coordinator, from
    the next request on, delegates. With the handoff off, one session: the wall refuses that reply's."""
    thread = thread_of("main", _steps((10_000, 20_000, 60_000, 70_000, 80_000)).entries)
    assert inline_switch(thread, 50_000) == 2
    assert tool_loops(thread, inline_until=50_000, handoff=True) == [(3, 5, 2)]
    assert tool_loops(thread, inline_until=50_000) == [(2, 5, 3)]
    assert inline_switch(thread, None) is None
    assert tool_loops(thread) == [(0, 5, 5)]


def test_a_session_that_never_reaches_it_hands_nothing_off_and_delegates_nothing() -> None:
    thread = thread_of("main", _steps((10_000, 20_000, 30_000)).entries)
    assert inline_switch(thread, 100_000) is None
    assert tool_loops(thread, inline_until=100_000, handoff=True) == []
    usages = [r.usage for r in thread.requests]
    line = delegation_line(
        thread, (usages, usages), (0.0, 0.0), RATE, DelegationAssumptions(inline_until=100_000), shift=5_000
    )
    # nothing moved, nothing handed off: the session as it was
    assert (line.loops, line.calls, line.requests, line.switches) == (0, 0, 0, 0)
    assert line.main_peak_low == line.main_peak_high == 31_000


def test_the_strict_default_ignores_the_inline_prefix() -> None:
    thread = thread_of("main", _steps((10_000, 20_000, 60_000, 70_000)).entries)
    usages = [r.usage for r in thread.requests]
    a = DelegationAssumptions()
    plain = delegation_line(thread, (usages, usages), (0.0, 0.0), RATE, a)
    shifted = delegation_line(thread, (usages, usages), (0.0, 0.0), RATE, a, shift=5_000)
    assert plain == shifted


def _what_if(tmp_path: Path, t: Transcript, options: WhatIfOptions) -> Any:
    project = tmp_path / "projects" / "-home-me-app"
    project.mkdir(parents=True, exist_ok=True)
    (project / f"{t.session_id}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in t.entries))
    return build_what_if_sync(tmp_path / "projects", options=options).total.layers.delegation


def test_a_small_session_costs_less_in_the_inline_session_than_in_one_session(tmp_path: Path) -> None:
    """Never reaching `T`: every request carries the inline session's prefix (no `Agent`, the short
    prompt), less than the coordinator's prefix one session keeps (the handoff off)."""
    t = _steps((10_000, 11_000, 12_000), shape=True)
    inline = DelegationAssumptions(inline_until=100_000)
    runtime = _what_if(tmp_path, t, WhatIfOptions(delegation=inline))
    one = _what_if(tmp_path, t, WhatIfOptions(delegation=inline, handoff=HandoffPolicy(enabled=False)))
    assert runtime.loops == one.loops == 0
    assert runtime.cost_usd_low < one.cost_usd_low and runtime.cost_usd_high < one.cost_usd_high
    assert runtime.inline_prefix_delta < runtime.prefix_delta == one.prefix_delta
    assert (runtime.switches, one.switches, one.inline_prefix_delta) == (0, 0, 0)


def test_a_session_that_reaches_it_switches_once(tmp_path: Path) -> None:
    t = _steps((10_000, 20_000, 60_000, 70_000), shape=True)
    line = _what_if(tmp_path, t, WhatIfOptions(delegation=DelegationAssumptions(inline_until=50_000)))
    assert (line.switches, line.loops, line.calls) == (1, 1, 1)  # the call at 70,000 goes to a worker
    strict = _what_if(tmp_path, t, WhatIfOptions())
    assert (strict.switches, strict.inline_prefix_delta, strict.loops) == (0, 0, 1)
    assert strict.calls == 4
