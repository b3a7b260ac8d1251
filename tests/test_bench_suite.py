"""The pure parts of the benchmark suite (benchmarks/suite): cache model, peers' transforms, probe logic.

No CLI here: these run on hand-built request bodies.
"""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.suite import cache
from benchmarks.suite.actions import Fact, Probe, Run, Workload
from benchmarks.suite.delegate import Chunk, partition
from benchmarks.suite.player import Ledger, ProbeRecord
from benchmarks.suite.probes import (
    View,
    decide,
    denial_visible,
    grep_command,
    latest_state,
    pointers,
    runs_label,
    stale_snapshots,
)
from benchmarks.suite.summary import kept_facts
from benchmarks.suite.transforms import CLEARED, PEERS, edit, transform, with_insertions

MASK_5, MASK_10, CLEAR = PEERS


def call(ident: str, command: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": ident, "name": "Bash", "input": {"command": command}}],
    }


def result(ident: str, text: str, *, error: bool = False) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": ident, "content": text, "is_error": error}
    return {"role": "user", "content": [block]}


def history(outputs: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """A user prompt, then one call and result per (command, output)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Go."}]
    for n, (command, output) in enumerate(outputs):
        messages += [call(f"t{n}", command), result(f"t{n}", output)]
    return messages


def results_of(messages: list[dict[str, Any]]) -> list[str]:
    return [
        b["content"]
        for m in messages
        if isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "tool_result"
    ]


# -- cache model ---------------------------------------------------------------------------------------


def blocks(*sizes: int, start: int = 0) -> list[cache.Block]:
    return [cache.Block(start + i, size) for i, size in enumerate(sizes)]


def test_a_request_that_extends_the_previous_one_reads_its_prefix_and_writes_the_rest() -> None:
    first, second = blocks(2_000, 500), blocks(2_000, 500, 300)
    costs = cache.costs([(0.0, first), (20.0, second)])
    assert (costs[0].cached, costs[0].written) == (0, 2_500)
    assert (costs[1].cached, costs[1].written, costs[1].uncached) == (2_500, 300, 0)
    assert costs[1].units == pytest.approx(2_500 * 0.1 + 300 * 1.25)


def test_the_cache_expires_after_its_ttl_and_refreshes_on_each_read() -> None:
    request = blocks(2_000)
    costs = cache.costs([(0.0, request), (250.0, request), (500.0, request), (900.0, request)])
    assert [c.cached for c in costs] == [0, 2_000, 2_000, 0]  # 500 s after the first, 250 after a read
    hour = cache.costs([(0.0, request), (900.0, request)], ttl=cache.TTL_1H, write=2.0)
    assert hour[1].cached == 2_000 and hour[0].units == 4_000


def test_a_rewritten_early_block_breaks_the_prefix_there_and_small_prefixes_are_not_cached() -> None:
    before = blocks(1_500, 800, 800)
    after = [before[0], cache.Block(99, 700), before[2]]
    costs = cache.costs([(0.0, before), (20.0, after)])
    assert costs[1].cached == 1_500 and costs[1].written == 1_500
    small = cache.costs([(0.0, blocks(600, 300)), (20.0, blocks(600, 300))])
    assert small[1].cached == 0 and small[1].uncached == 900  # below 1,024 tokens: never cached
    assert cache.breaks([3_100, 2_900], [0, 1_500], [0.0, 20.0]) == [1_600]
    assert cache.breaks([3_100, 2_900], [0, 0], [0.0, 400.0]) == []  # the cache was cold anyway


def test_tokens_are_chars_over_four_rounded_up() -> None:
    assert [cache.tokens_of(n) for n in (0, 1, 4, 5)] == [0, 1, 1, 2]


# -- masking and clear_tool_uses ---------------------------------------------------------------------------


def test_masking_keeps_the_last_n_results_and_every_call() -> None:
    messages = history([(f"python3 gen.py out-{i:03d}", f"line a\nline b {i}") for i in range(8)])
    masked = edit(MASK_5, messages, tokens=0)
    texts = results_of(masked)
    assert texts[:3] == ["Old environment output: (2 lines omitted)"] * 3
    assert texts[3:] == [f"line a\nline b {i}" for i in range(3, 8)]
    assert [m for m in masked if m["role"] == "assistant"] == [
        m for m in messages if m["role"] == "assistant"
    ]
    assert results_of(messages)[0] == "line a\nline b 0"  # the input is not modified
    assert results_of(edit(MASK_10, messages, tokens=0)) == results_of(messages)


def test_clear_tool_uses_acts_only_past_its_trigger_and_keeps_three() -> None:
    messages = history([(f"cmd {i}", f"out {i}") for i in range(6)])
    assert edit(CLEAR, messages, tokens=99_999) == messages
    cleared = results_of(edit(CLEAR, messages, tokens=100_000))
    assert cleared == [CLEARED] * 3 + ["out 3", "out 4", "out 5"]


def test_insertions_land_after_the_raw_message_count_they_anchor_to() -> None:
    raw = [{"n": i} for i in range(5)]
    pair = [{"rerun": 1}, {"rerun": 2}]
    assert with_insertions(raw, [(3, pair)]) == [{"n": 0}, {"n": 1}, {"n": 2}, *pair, {"n": 3}, {"n": 4}]
    assert with_insertions(raw[:2], [(3, pair)]) == raw[:2]  # not reached yet


def _workload(*facts: Fact, pad: int = 0) -> Workload:
    return Workload("wt", "test", "task", tuple(Probe(f) for f in facts), pad=pad)


def test_a_masked_fact_is_rerun_when_idempotent_and_lost_otherwise() -> None:
    fact = Fact("K1", "v1", "out-000")
    once = Fact("K2", "v2", "out-001", idempotent=False)
    outputs = [("python3 gen.py out-000", "K1=v1"), ("python3 gen.py out-001", "K2=v2")]
    outputs += [(f"python3 gen.py out-{i:03d}", "filler") for i in range(2, 9)]
    bodies = [
        {"system": "s", "tools": [], "messages": history(outputs[: n + 1])} for n in range(len(outputs))
    ]
    ledger = Ledger(
        probes=[ProbeRecord(fact, False, "main", 8, True, 0), ProbeRecord(once, False, "main", 8, True, 0)]
    )
    trace = transform(
        MASK_5,
        _workload(fact, once),
        bodies,
        [20.0 * i for i in range(9)],
        ledger,
        finished=True,
        limit=10**9,
    )
    first, second = trace.probes
    assert (first.answered, first.extra) == (True, 1) and (second.answered, second.extra) == (False, 0)
    assert len(trace.requests) == 10  # the re-run is one more request
    assert trace.source == "approximation" and trace.finished


def test_a_transform_stops_at_the_limit_and_unreached_probes_count_as_lost() -> None:
    fact = Fact("K1", "v1", "out-000")
    bodies = [
        {"system": "s", "tools": [], "messages": history([("python3 gen.py out-000", "x" * 400 * n)])}
        for n in range(1, 5)
    ]
    ledger = Ledger(probes=[ProbeRecord(fact, False, "main", 3, True, 0)])
    trace = transform(
        MASK_10, _workload(fact), bodies, [0.0, 20.0, 40.0, 60.0], ledger, finished=True, limit=300
    )
    assert not trace.finished and len(trace.requests) == 2
    assert [(p.answered, p.index) for p in trace.probes] == [(False, 3)]


# -- probes ------------------------------------------------------------------------------------------------


def view_of(messages: list[dict[str, Any]], system: str = "") -> View:
    return View({"system": system, "messages": messages})


def test_a_visible_fact_is_answered_at_once() -> None:
    view = view_of(history([("python3 gen.py out-001", "note: K=v (recorded)")]))
    assert decide(view, "K=v", "out-001", idempotent=True, tried=(), reran=False).decision == "answered"


def test_pointers_are_found_in_the_calls_result_in_reports_and_after_a_compaction() -> None:
    spill = (
        "[spilled] Bash stdout: 9,000 chars moved out of the conversation to "
        "`/ws/.flower/spill/ab-bash.txt` (Read it, ...)"
    )
    persisted = (
        "<persisted-output>\nOutput too large (39.1KB). Full output saved to: /cfg/tool-results/x.txt\n"
    )
    report = "[task c1] done.\n- out-003 -> /ws/.flower/spill/cd-bash.txt\n- out-004: ok"
    compacted = "Summary...\nread the full transcript at: /cfg/projects/p/s.jsonl\nContinue"
    messages = history([("python3 gen.py out-001", spill), ("python3 gen.py out-002", persisted)])
    messages += [result("t9", report), {"role": "user", "content": compacted}]
    view = view_of(messages)
    assert pointers(view, "out-001") == ["/ws/.flower/spill/ab-bash.txt", "/cfg/projects/p/s.jsonl"]
    assert pointers(view, "out-002")[0] == "/cfg/tool-results/x.txt"
    assert pointers(view, "out-003")[0] == "/ws/.flower/spill/cd-bash.txt"
    assert pointers(view, "out-004") == ["/cfg/projects/p/s.jsonl"]  # "ok": no path of its own
    nxt = decide(view, "K=v", "out-001", idempotent=True, tried=(), reran=False)
    assert (nxt.decision, nxt.path) == ("grep", "/ws/.flower/spill/ab-bash.txt")
    nxt = decide(view, "K=v", "out-001", idempotent=True, tried=(nxt.path,), reran=False)
    assert nxt.path.endswith(".jsonl")
    assert grep_command("K", "/p/f.txt") == "grep -n -F 'K=' /p/f.txt"


def test_without_a_pointer_an_idempotent_tool_is_rerun_once_else_the_probe_fails() -> None:
    view = view_of(history([("python3 gen.py out-001", "Old environment output: (40 lines omitted)")]))
    assert decide(view, "K=v", "out-001", idempotent=True, tried=(), reran=False).decision == "rerun"
    assert decide(view, "K=v", "out-001", idempotent=True, tried=(), reran=True).decision == "failed"
    assert decide(view, "K=v", "out-001", idempotent=False, tried=(), reran=False).decision == "failed"


def test_labels_match_whole_words_only() -> None:
    assert runs_label("python3 gen.py out-011 --retry", "out-011")
    assert not runs_label("python3 gen.py out-0111", "out-011")
    assert runs_label("cat docs/page-007.md", "page-007")


def test_a_denial_is_visible_as_a_refused_call_or_a_report_line() -> None:
    refused = history([("rm -rf build", "Permission to use Bash with command rm -rf build has been denied.")])
    refused[-1]["content"][0]["is_error"] = True
    assert denial_visible(view_of(refused), "rm -rf build")
    assert not denial_visible(view_of(refused), "rm -f cache.db")
    assert denial_visible(view_of([result("t1", "- denied: `rm -f cache.db`")]), "rm -f cache.db")


def test_the_agent_trusts_the_latest_visible_state_and_stale_ones_are_counted() -> None:
    messages = history(
        [("cat state/status.txt", "STATE v 3 (current)"), ("cat state/status.txt", "STATE v 5 (current)")]
    )
    view = view_of(messages)
    assert latest_state(view) == 5 and stale_snapshots(view, 6) == 2 and stale_snapshots(view, 5) == 1
    expired = history([("cat state/status.txt", "[result of `cat state/status.txt` expired: ...]")])
    assert latest_state(view_of(expired)) is None


def test_summaries_keep_every_constraint_and_the_same_facts_for_every_strategy() -> None:
    constraint = Fact("C1", "must", "", "task")
    facts = [Fact(f"F{i}", f"v{i}", f"out-{i:03d}") for i in range(40)]
    workload = Workload(
        "wt", "t", "task", tuple(Probe(f) for f in [*facts, constraint]), constraints=(constraint,)
    )
    view = view_of([{"role": "user", "content": " ".join(f.text for f in [*facts, constraint])}])
    kept = kept_facts(view, workload, event=1)
    assert constraint in kept and kept == kept_facts(view, workload, event=1)
    assert 15 < len(kept) < 40  # about 70 % of the others


def test_a_coordinator_delegates_runs_in_chunks_and_keeps_glances_and_probes() -> None:
    fact = Fact("T1", "PASS", "test-1", "verdict")
    actions = (
        Run("a", "python3 gen.py a"),
        Run("test-1", "python3 gen.py test-1"),
        Probe(fact, verdict=True),
        Run("look", "ls", glance=True),
        Run("b", "python3 gen.py b"),
        Run("c", "python3 gen.py c"),
        Probe(Fact("K", "v", "a")),
    )
    items = partition(actions, size=1)
    kinds = [type(i).__name__ for i in items]
    assert kinds == ["Chunk", "Chunk", "Run", "Chunk", "Chunk", "Probe"]
    first, second = items[0], items[1]
    assert isinstance(first, Chunk) and isinstance(second, Chunk)
    assert [type(a).__name__ for a in second.actions] == ["Run", "Probe"]  # the verdict stays with its run


@pytest.mark.parametrize("quick", [True, False])
def test_every_planted_fact_is_in_the_output_or_file_that_holds_it(quick: bool) -> None:
    from benchmarks.suite.gen import body
    from benchmarks.suite.workloads import build

    for workload in build(quick):
        texts = list(workload.files.values())
        for output in workload.outputs.values():
            text = body(output.spec(), output.size) if output.needles else ""
            assert all(f.text in text for f in output.needles), (workload.key, output.label)
            texts.append(text)
        for fact in workload.facts:
            if fact.where not in ("task", "verdict"):
                assert any(fact.text in t for t in texts), (workload.key, fact.key)
        places = [f.where for f in workload.facts if f.key.startswith("W1-")]
        if places:
            assert {places.count(p) for p in ("head", "middle", "tail")} <= {
                len(places) // 3,
                len(places) // 3 + 1,
            }
