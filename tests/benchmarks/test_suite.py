"""The pure parts of the benchmark suite (benchmarks/suite): peers' edits, players, probe logic.

No CLI here: these run on hand-built request bodies.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from benchmarks.suite.actions import Fact, Probe, ReadFile, Run, Workload, WriteFile
from benchmarks.suite.delegate import Chunk, partition
from benchmarks.suite.metrics import Metrics
from benchmarks.suite.peers import CLEARS, MASKS, Masking
from benchmarks.suite.play import MOVE
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
from benchmarks.suite.realistic import Behaviour
from benchmarks.suite.realistic import piped as piped_command
from benchmarks.suite.runner import SEEDS, SELECT, Selection, best, planned
from benchmarks.suite.summary import kept_facts
from benchmarks.suite.trace import with_pad
from flower._cost import Block
from tests.benchmarks.reports import cut_report, metrics_row


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


# -- peers: masking as SWE-agent does it ---------------------------------------------------------------


def test_masking_keeps_the_last_n_results_and_every_call() -> None:
    messages = history([(f"python3 gen.py out-{i:03d}", f"line a\nline b {i}") for i in range(8)])
    body = {"messages": messages}
    masked = Masking(5)(body)["messages"]
    texts = results_of(masked)
    # 9 observations (the prompt and 8 results): 9 - 5 = 4 removed, the prompt never: 3 results masked
    assert texts[:3] == ["Old environment output: (2 lines omitted)"] * 3
    assert texts[3:] == [f"line a\nline b {i}" for i in range(3, 8)]
    assert [m for m in masked if m["role"] == "assistant"] == [
        m for m in messages if m["role"] == "assistant"
    ]
    assert results_of(messages)[0] == "line a\nline b 0"  # the input is not modified
    assert Masking(10)(body) is body


@pytest.mark.parametrize(("count", "masked"), [(8, 0), (9, 4), (13, 4), (14, 9), (18, 9), (19, 14)])
def test_polling_moves_the_masked_boundary_once_every_p_results(count: int, masked: int) -> None:
    body = {"messages": history([(f"cmd {i}", f"out {i}") for i in range(count)])}
    texts = results_of(Masking(5, polling=5)(body)["messages"])
    assert sum(t.startswith("Old environment output") for t in texts) == masked


def test_peer_settings_are_the_sweep_and_two_clear_settings() -> None:
    assert [p.edit.n for p in MASKS] == [5, 5, 10]
    assert [p.edit.polling for p in MASKS] == [1, 5, 10]
    assert (CLEARS[0].edit.trigger, CLEARS[0].edit.keep, CLEARS[0].edit.clear_at_least) == (100_000, 3, 0)


# -- the players ---------------------------------------------------------------------------------------


def test_the_ideal_player_greps_once_never_pipes_and_writes_no_prose() -> None:
    ideal = Behaviour()
    assert ideal.retrieval("K", 0) == ["grep"] and ideal.pipe("out-001") is None
    assert ideal.prose("run out-001#0") == ("", "")


def test_the_realistic_player_is_seeded_and_calibrated() -> None:
    one, again, other = Behaviour("realistic", 1), Behaviour("realistic", 1), Behaviour("realistic", 2)
    labels = [f"out-{i:03d}" for i in range(600)]
    assert [one.pipe(label) for label in labels] == [again.pipe(label) for label in labels]
    assert [one.pipe(label) for label in labels] != [other.pipe(label) for label in labels]
    piped = [one.pipe(label) for label in labels if one.pipe(label)]
    assert 0.12 < len(piped) / len(labels) < 0.22 and piped.count("tail") > piped.count("head")
    plans = [one.retrieval(f"K{i}", 0) for i in range(600)]
    assert {len(p) for p in plans} == {1, 2, 3}
    assert all(p[-1] in ("read", "grep") and all(s.startswith("miss") for s in p[:-1]) for p in plans)
    assert 0.4 < sum(len(p) == 1 for p in plans) / 600 < 0.56
    prose = [one.prose(f"run out-{i:03d}#0") for i in range(400)]
    assert 0.5 < sum(bool(t) for t, _ in prose) / 400 < 0.66
    assert piped_command("python3 gen.py x", "tail") == "python3 gen.py x | tail -n 40"


def test_the_realistic_workers_report_as_project_agents_with_a_report_format_do() -> None:
    from benchmarks.suite.realistic import REPORTS
    from flower.report._measured import REPORT_CHARS_DECILES as DECILES

    assert Behaviour().report_chars("c0") == 0  # the ideal worker: its lines only
    player = Behaviour("realistic", 1)
    drawn = sorted(player.report_chars(f"c{i}") for i in range(2_000))
    assert drawn == sorted(Behaviour("realistic", 1).report_chars(f"c{i}") for i in range(2_000))
    assert DECILES[0] <= drawn[0] and drawn[-1] <= DECILES[-1]
    # placed linearly between the deciles: each tenth of the draws falls between two deciles
    for decile in range(1, 10):
        share = sum(size <= DECILES[decile] for size in drawn) / len(drawn)
        assert share == pytest.approx(decile / 10, abs=0.03)
    assert len(set(drawn)) > 500  # any length between two deciles, not only the eleven measured
    # the pessimistic row: agents never asked to be brief, the calibration transcripts' own reports
    unbriefed = Behaviour("realistic", 1, reports="unbriefed")
    assert {unbriefed.report_chars(f"c{i}") for i in range(200)} <= set(REPORTS)
    assert sum(size >= 4_000 for size in REPORTS) == 10 and len(REPORTS) == 11
    assert unbriefed.label == "realistic #1 [unbriefed]" and player.label == "realistic #1"
    assert Behaviour("realistic", 2, reads_cut=0.5).label == "realistic #2 [reads 0.5]"
    from benchmarks.suite.trace import _seeds

    assert _seeds(unbriefed.label) == (1,) and _seeds("realistic #3 [reads 0.5, unbriefed]") == (3,)


def test_every_strategy_of_a_seed_draws_alike_where_it_does_alike(tmp_path: Any) -> None:
    from benchmarks.suite.play import Play
    from flower.testing import RecordedRequest

    actions = (Run("a", "python3 gen.py a"), Run("b", "python3 gen.py b"))
    workload = Workload("w9", "test", "Do it.", actions, chunk=8)
    player = Behaviour("realistic", 3)
    inline = Play(
        workload, tmp_path, delegated=False, pointers_in_handoff=False, scripts="s", behaviour=player
    )
    split = Play(workload, tmp_path, delegated=True, pointers_in_handoff=False, scripts="s", behaviour=player)

    def answer(play: Play, caller: str, index: int, messages: list[dict[str, Any]]) -> Any:
        request = RecordedRequest(
            index, caller, index, index, {"messages": messages}, {}, "/v1/messages", 0.0
        )
        return play.on_worker(request) if caller == "worker" else play.on_main(request)

    go = [{"role": "user", "content": "Go."}]
    inline_first = answer(inline, "main", 0, go)  # the main thread runs `a` itself
    split_first = answer(split, "main", 0, go)  # the coordinator delegates: no counterpart
    mandate = next(b for b in split_first.content if type(b).__name__ == "ToolUse").input["prompt"]
    worker_first = answer(split, "worker", 1, [{"role": "user", "content": mandate}])  # the worker runs `a`
    assert inline.ledger.about == {0: "run a#0"} and split.ledger.about == {0: "delegate c0#0", 1: "run a#0"}
    assert inline_first.content[-1] == worker_first.content[-1]  # the same call
    assert inline_first.content != split_first.content
    assert player.prose("run a#0", worker=True) == (
        "",
        "".join(b.text for b in worker_first.content[:-1] if type(b).__name__ == "Text"),
    )  # the worker's prose is the subagent figures' draw: no thinking
    as_main = Behaviour("realistic", 3, worker_prose="main")
    assert as_main.prose("run a#0", worker=True) == as_main.prose("run a#0") == player.prose("run a#0")


def test_workers_write_what_real_subagents_write_unless_told_otherwise() -> None:
    """No thinking, text in about 87 % of replies; the `main prose` variant keeps the main thread's."""
    player, as_main = Behaviour("realistic", 1), Behaviour("realistic", 1, worker_prose="main")
    worker = [player.prose(f"run out-{i:03d}#0", worker=True) for i in range(400)]
    assert not any(t for t, _ in worker) and 0.8 < sum(bool(x) for _, x in worker) / 400 < 0.94
    assert max(len(x) for _, x in worker) < 1_000
    assert [as_main.prose(f"run out-{i:03d}#0", worker=True) for i in range(5)] == [
        player.prose(f"run out-{i:03d}#0") for i in range(5)
    ]
    assert as_main.label == "realistic #1 [main prose]" and player.label == "realistic #1"


def test_the_marathons_residue_is_a_block_after_each_assistant_message() -> None:
    blocks = [Block(1, 10, None, "user", 0), Block(2, 5, None, "assistant", 1), Block(3, 7, 300.0, "user", 2)]
    padded = with_pad(blocks, 100)
    assert [b.tokens for b in padded] == [10, 5, 100, 7]
    assert padded[2].key == with_pad(blocks, 100)[2].key and with_pad(blocks, 0) == blocks


def test_a_peer_at_its_best_is_its_cheapest_finishing_setting() -> None:
    def row(strategy: str, cost: float, finished: bool = True) -> Metrics:
        return metrics_row(strategy, cost, finished)

    rows = [row("mask n5 p1", 2.0), row("mask n10 p10", 1.0, finished=False), row("mask n5 p5", 1.5)]
    assert best(rows, "w1", ["mask n5 p1", "mask n5 p5", "mask n10 p10"]) == "mask n5 p5"


def test_a_selection_plans_only_the_named_strategies_runs_at_every_player() -> None:
    everything = planned(["w1"], quick=False, clock="35")
    picked = Selection(frozenset({"flower", "flower -keep_warm"}))
    runs = {
        (j.strategy, j.player, j.seed, j.size)
        for j in planned(["w1"], quick=False, clock="35", select=picked)
    }

    realistic = {("flower", "realistic", seed, None) for seed in SEEDS}
    ideal = {("flower", "ideal", 0, None), ("flower -keep_warm", "ideal", 0, None)}
    scaled = {(j.strategy, j.player, j.seed, j.size) for j in everything if j.strategy == "flower" and j.size}
    assert scaled and runs == realistic | ideal | scaled
    assert {j.clock for j in everything} == {"35"}
    unscaled = planned(["w1"], quick=False, clock="35", select=Selection(picked.strategies, scaling=False))
    assert {(j.strategy, j.player, j.seed, j.size) for j in unscaled} == realistic | ideal
    assert len(everything) > len(runs)


def test_seeds_with_a_selection_plan_only_its_realistic_runs_at_those_seeds() -> None:
    names = frozenset({"clear_tool_uses", "clear_tool_uses tuned", "flower"})
    picked = Selection(names, seeds=frozenset({4, 5}))
    runs = {
        (j.workload, j.strategy, j.player, j.seed, j.size)
        for j in planned(["w4", "w5"], quick=False, clock="35", select=picked)
    }

    # every named strategy at those seeds, a peer setting whether or not it would be chosen; no ideal,
    # held-out or scaling run; clear_tool_uses never acts in W5 (its context stays under the trigger)
    acting = {"w4": names, "w5": names - {"clear_tool_uses"}}
    assert runs == {
        (key, name, "realistic", seed, None) for key in acting for name in acting[key] for seed in (4, 5)
    }
    seeded = Selection(seeds=frozenset({4}))  # without names: every run, the realistic ones at seed 4
    realistic = {
        j.seed for j in planned(["w1"], quick=False, clock="35", select=seeded) if j.player == "realistic"
    }
    assert realistic == {SELECT, 4} and SELECT not in SEEDS


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
    moves = partition(actions, size=MOVE)  # one mandate per move: every run up to the next own step
    assert [type(i).__name__ for i in moves] == ["Chunk", "Run", "Chunk", "Probe"]
    delegated = partition(actions, size=MOVE, glances=False)  # the look goes to the worker too
    assert [type(i).__name__ for i in delegated] == ["Chunk", "Probe"]


def test_flowers_coordinator_puts_a_look_that_checks_the_work_in_that_workers_mandate() -> None:
    actions = (
        Run("first", "ls", glance=True, check=True),  # nothing done yet: a look of its own
        Run("edit", "python3 gen.py edit"),
        Run("after", "ls", glance=True, check=True),  # checks the edit: in the edit's mandate
        Run("page", "cat page.md", glance=True),  # reading for its own decision: its own
        Run("test", "python3 gen.py test"),
    )
    items = partition(actions, size=MOVE, fold=True)
    assert [i.label if isinstance(i, Run) else [a.label for a in i.actions] for i in items] == [  # type: ignore[union-attr]
        "first",
        ["edit", "after"],
        "page",
        ["test"],
    ]
    assert len(partition(actions, size=MOVE)) == 5  # without the rule every look is the coordinator's


def test_flowers_coordinator_takes_a_one_off_step_itself_never_two_in_a_row() -> None:
    actions = (
        Run("look", "ls", glance=True),
        Run("one", "python3 gen.py one"),  # a move of one run: its own step
        Run("page", "cat page.md", glance=True),
        Run("test", "python3 gen.py test"),  # a move of a run and its verdict: a worker's
        Probe(Fact("T", "PASS", "test", "verdict"), verdict=True),
        ReadFile("r", "notes.md"),
        WriteFile("big", "big.txt", 2_001),  # over the input limit: a worker's
        ReadFile("r2", "notes.md"),
        WriteFile("small", "small.txt", 2_000),  # its own step
        ReadFile("r3", "notes.md"),
        Run("loop-1", "python3 gen.py loop-1"),  # a move of two runs: a worker's loop
        Run("loop-2", "python3 gen.py loop-2"),
    )

    def name(action: Any) -> str:
        return str(action.fact.key if isinstance(action, Probe) else action.label)

    def shape(items: list[Any]) -> list[Any]:
        return [[name(a) for a in i.actions] if isinstance(i, Chunk) else name(i) for i in items]

    mine = partition(actions, size=MOVE, own_steps=1)
    assert shape(mine) == [
        "look",
        "one",
        "page",
        ["test", "T"],
        "r",
        ["big"],
        "r2",
        "small",
        "r3",
        ["loop-1", "loop-2"],
    ]
    chunked = partition(actions, size=1, own_steps=1)  # moves cut to one run: still never two in a row
    assert shape(chunked)[-2:] == ["loop-1", ["loop-2"]]
    assert shape(partition(actions, size=MOVE)) == shape(partition(actions, size=MOVE, own_steps=0))
    assert "one" not in shape(partition(actions, size=MOVE))  # the strict wall delegates it


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


def test_ratios_pair_the_seeds_and_the_scaling_table_reads_three_sizes() -> None:
    from benchmarks.suite.ranking import ratio, scaling

    def row(strategy: str, cost: float, player: str = "ideal", size: int = 0) -> Metrics:
        base = metrics_row(strategy, cost, True)
        return dataclasses.replace(base, player=player, size=size, peak=int(cost * 1000))

    rows = [
        row("flower", 1.0),
        row("peer", 2.0),
        *(row("flower", c, f"realistic #{s}") for s, c in ((1, 1.0), (2, 3.0), (3, 2.0))),
        *(row("peer", c, f"realistic #{s}") for s, c in ((1, 2.0), (2, 2.0), (3, 4.0))),
    ]
    assert ratio(rows, "w1", "peer") == ("0.50", "0.50 (0.50-1.50)")
    rows += [row("flower", 0.5, size=24), row("flower", 4.0, size=96)]
    table = scaling(rows, {"w1": (24, 48, 96)}, {"w1": "W1"})
    assert "| flower | 0.5k / 1.0k / 4.0k |" in table and "| 8.0x |" in table


# -- the clocks ----------------------------------------------------------------------------------------


@dataclasses.dataclass
class Sent:
    """A recorded request, as the clocks read it."""

    caller: str
    body: dict[str, Any]
    seq: int
    index: int
    output_tokens: int = 20


def delegation(runs: int) -> list[Sent]:
    """A coordinator's request, a worker's `runs` requests (each running one command), the next one."""
    worker = [{"role": "user", "content": "[task c0] do it"}]
    out = [Sent("main", {"messages": [{"role": "user", "content": "Go."}]}, 0, 0)]
    for n in range(runs):
        out.append(Sent("worker", {"messages": list(worker)}, n + 1, n))
        worker = [*worker, call(f"w{n}", f"python3 gen.py out-{n}"), result(f"w{n}", "ok")]
    out.append(Sent("main", {"messages": [{"role": "user", "content": "Go."}]}, runs + 1, 1))
    return out


def test_a_fixed_clock_moves_every_request_and_adds_the_idle_gaps() -> None:
    from benchmarks.suite.timing import send_times

    requests = delegation(2)
    assert send_times(requests, {1: 100.0}, "35", 0, [0] * 4) == [0.0, 35.0, 170.0, 205.0]


def test_the_calibrated_clock_is_seeded_and_a_worker_lasts_what_its_requests_and_tools_take() -> None:
    from benchmarks.suite.timing import TABLES, send_times, worker_spans

    requests = delegation(10)
    one = send_times(requests, {}, "calibrated", 1, [30_000] * len(requests))
    assert one == send_times(requests, {}, "calibrated", 1, [30_000] * len(requests))
    assert one != send_times(requests, {}, "calibrated", 2, [30_000] * len(requests))
    table = TABLES["request_seconds"]["20-50k"]
    (wait,) = worker_spans(requests, one)
    assert 11 * table[0] <= wait <= 11 * table[-1] + 10 * TABLES["tool_seconds"]["Bash"][-1]
    bigger = send_times(requests, {}, "calibrated", 1, [150_000] * len(requests))
    assert bigger != one  # the context's size picks the table


def test_a_request_draws_its_duration_by_what_its_reply_does_and_a_read_by_its_path_in_the_workspace() -> (
    None
):
    from benchmarks.suite.timing import reply_tools, request_seconds, send_times, tool_seconds

    # the same reply (`run out-3#0`) takes the same draw in a worker and in a main thread: the table its
    # context picks differs, the quantile does not
    small = request_seconds(1, "worker:c0", 0, 30_000, 0, "run out-3#0")
    assert small == request_seconds(1, "main", 17, 30_000, 0, "run out-3#0")
    assert small != request_seconds(1, "main", 17, 30_000, 0)  # no key: its thread and index
    requests = delegation(3)
    about = {r.seq: f"run out-{r.seq}#0" for r in requests}
    assert send_times(requests, {}, "calibrated", 1, [30_000] * 5, about) != send_times(
        requests, {}, "calibrated", 1, [30_000] * 5
    )
    read = {"role": "assistant", "content": [{"type": "tool_use", "id": "r", "name": "Read", "input": {}}]}
    read["content"][0]["input"] = {"file_path": "/tmp/flower-bench-a1b2/src/mod_1.py"}
    asked = [Sent("main", {"messages": []}, 0, 0), Sent("main", {"messages": [read]}, 1, 1)]
    assert reply_tools(asked, ["main", "main"])[0] == [("Read", "src/mod_1.py")]
    assert tool_seconds(1, "Read", "src/mod_1.py") == tool_seconds(1, "Read", "src/mod_1.py")


def test_a_plain_run_with_a_one_hour_cache_is_its_main_threads_marks_at_one_hour() -> None:
    from benchmarks.suite.trace import Sent as Cut
    from benchmarks.suite.trace import at_one_hour
    from flower._cost import TTL_1H, TTL_5M

    blocks = [
        Block(1, 2_000, TTL_5M, "system"),
        Block(2, 100, None, "user", 0),
        Block(3, 50, TTL_5M, "user", 0),
    ]
    main = Cut("main", "m", blocks, blocks, 8_600, 2_150, 0, 10)
    compact = dataclasses.replace(main, caller="compact")
    worker = dataclasses.replace(main, caller="worker")
    found = at_one_hour([main, compact, worker])
    assert (
        [b.breakpoint for b in found[0].blocks]
        == [TTL_1H, None, TTL_1H]
        == [b.breakpoint for b in found[0].ignored]
    )
    assert found[1] == compact and found[2] == worker  # the CLI keeps 5 minutes there (measured)


def test_a_side_keeps_the_peers_or_flowers_runs_and_a_kept_recording_is_named_by_its_player() -> None:
    from benchmarks.suite.runner import Job

    peers = planned(["w3"], quick=False, clock="35", select=Selection(side="peers"))
    flowers = planned(["w3"], quick=False, clock="35", select=Selection(side="flower"))
    assert peers and flowers and not any(j.flower for j in peers) and all(j.flower for j in flowers)
    assert {j.strategy for j in peers if j.reports == "unbriefed"} == {"baseline_cc_default"}  # it delegates
    assert {j.reads_cut for j in flowers if j.player == "realistic"} == {0.2, 0.5}
    assert {j.reads_cut for j in peers} == {0.2}  # a plain run reads no cut report: one player for all
    held = {j.strategy for j in peers if j.seed == SELECT and j.player == "realistic"}
    assert {"baseline_raw (SDK prompt)", "clear_tool_uses t30k k1 a0k"} <= held
    job = Job("w3", "baseline_cc_default", False, "realistic", 2, reports="unbriefed")
    assert job.kept == "w3/baseline_cc_default--realistic2-unbriefed.pkl.gz"
    assert (
        Job("w1", "mask n5 p5 (SDK prompt)", False, size=24).kept
        == "w1/mask_n5_p5_(SDK_prompt)--ideal0@24.pkl.gz"
    )


def test_the_stress_clock_draws_worker_durations_with_the_real_tail() -> None:
    from benchmarks.suite.timing import worker_seconds

    drawn = sorted(worker_seconds(i / 1000) for i in range(1001))
    assert drawn[500] == pytest.approx(56.0) and drawn[750] == pytest.approx(116.0)
    assert drawn[900] == pytest.approx(404.0) and 0.17 < sum(d > 300 for d in drawn) / 1001 < 0.19


def test_the_summary_pairs_seeds_against_the_cheapest_peer_that_finished() -> None:
    from benchmarks.suite.ratios import summary

    def row(strategy: str, player: str, cost: float, *, family: str = "peer", done: bool = True) -> Metrics:
        base = dataclasses.replace(metrics_row(strategy, cost, done), family=family, player=player)
        return dataclasses.replace(base, costs={"35": cost, "calibrated": cost * 2})

    rows = [
        row("flower", "ideal", 1.0, family="flower"),
        row("flower -lean", "ideal", 1.25, family="flower"),
        *(row("flower", f"realistic #{s}", c, family="flower") for s, c in ((1, 0.8), (2, 0.9), (3, 1.2))),
        *(row("cheap", f"realistic #{s}", c) for s, c in ((1, 1.0), (2, 1.0), (3, 1.0))),
        *(row("cheaper", f"realistic #{s}", 0.5, done=s != 2) for s in (1, 2, 3)),  # one seed failed
        row("cheaper", "realistic #0", 0.1),  # the held-out seed chooses settings, it is no ratio
    ]
    found = summary(rows, ["w1"], "35")
    assert found["w1"]["flower_vs_best"] == {"median": 0.9, "max": 1.2, "peer": "cheap"}
    assert found["w1"]["ablations"] == {"-lean": 0.8}
    assert found["clock"]["35"] == {"w1": found["w1"]}
    assert found["clock"]["calibrated"]["w1"]["flower_vs_best"]["median"] == 0.9  # both clocks, always
    # a peer's variants compete (the SDK's prompt, a 1-hour cache); the row as before keeps them out
    rows += [row("cheap (SDK prompt)", f"realistic #{s}", 0.9) for s in (1, 2, 3)]
    found = summary(rows, ["w1"], "35")["w1"]
    assert (
        found["flower_vs_best"]["peer"] == "cheap (SDK prompt)"
        and found["peers_as_before"]["peer"] == "cheap"
    )
    # the pessimistic player: flower's and the delegating peers' runs with unbriefed reports replace theirs
    rows += [row("flower", f"realistic #{s} [unbriefed]", 1.8, family="flower") for s in (1, 2, 3)]
    found = summary(rows, ["w1"], "35")["w1"]
    assert found["unbriefed"] == {"median": 2.0, "max": 2.0, "peer": "cheap (SDK prompt)"}
    assert found["flower_vs_best"]["median"] == 1.0  # the default player's rows are untouched
    assert "inline_start_vs_best" not in found  # the opt-in inline start did not run
    rows += [row("flower +inline", f"realistic #{s}", 0.72, family="flower") for s in (1, 2, 3)]
    found = summary(rows, ["w1"], "35")["w1"]
    assert found["inline_start_vs_best"] == {"median": 0.8, "max": 0.8, "peer": "cheap (SDK prompt)"}


def test_flower_against_its_inline_run_is_paired_seed_by_seed_under_the_realistic_player() -> None:
    from benchmarks.suite.levers import inline_realistic

    def row(strategy: str, seed: int, cost: float, finished: bool = True) -> Metrics:
        base = dataclasses.replace(metrics_row(strategy, cost, finished), player=f"realistic #{seed}")
        return dataclasses.replace(base, costs={"35": cost, "calibrated": cost * 2})

    rows = [
        *(row("flower", s, c) for s, c in ((1, 1.1), (2, 0.9), (3, 1.2))),
        *(row("flower -delegation", s, 1.0) for s in (1, 2)),
        row("flower -delegation", 3, 0.5, finished=False),  # a run that did not finish pairs with nothing
    ]
    assert inline_realistic(rows, "w1", "35") == {"median": 1.0, "max": 1.1, "seeds": 2}
    assert inline_realistic(rows, "w2", "35") is None
    rows += [row("flower +inline", s, 0.8) for s in (1, 2)]  # the opt-in inline start, the same way
    assert inline_realistic(rows, "w1", "35", "flower +inline") == {"median": 0.8, "max": 0.8, "seeds": 2}


def test_the_page_shows_the_inline_start_and_the_small_tasks_beside_flower() -> None:
    from benchmarks.suite.modes import modes_section, small_section

    def row(strategy: str, seed: int, cost: float, family: str = "flower") -> Metrics:
        base = dataclasses.replace(
            metrics_row(strategy, cost, True), family=family, player=f"realistic #{seed}"
        )
        return dataclasses.replace(base, costs={"35": cost, "calibrated": cost})

    rows = [row("peer", 1, 1.0, "peer"), row("flower", 1, 1.5), row("flower -delegation", 1, 1.25)]
    shown = small_section(rows, ["w1"])
    assert shown.startswith("## Small tasks") and "**1.50 (1.50)** `peer`" in shown
    assert "flower +inline" not in shown.split("```")[-1]  # no table for a mode that did not run
    rows.append(row("flower +inline", 1, 1.1))
    shown = small_section(rows, ["w1"])
    assert "**`flower +inline`** ÷ the same peer" in shown and "**1.10 (1.10)**" in shown
    found = modes_section(rows, ["w1"])
    assert "| flower | Sonnet 4.6 | calibrated | 1.20 (1.20) |" in found
    assert "| flower +inline | Sonnet 4.6 | 35 s | 0.88 (0.88) |" in found
    assert small_section([], ["w1"]) == ""


def test_the_page_says_plainly_where_flower_is_not_the_cheapest() -> None:
    from benchmarks.suite.ratios import losses

    def row(strategy: str, player: str, cost: float, *, family: str = "peer") -> Metrics:
        base = dataclasses.replace(metrics_row(strategy, cost, True), family=family, player=player)
        return dataclasses.replace(base, costs={"35": cost, "calibrated": cost})

    rows = [
        row("flower", "ideal", 1.0, family="flower"),
        row("flower -keep_warm", "ideal", 0.9, family="flower"),  # 11 % cheaper: said
        row("flower -lean", "ideal", 0.97, family="flower"),  # within 5 %: not said
        *(row("flower", f"realistic #{s}", c, family="flower") for s, c in ((1, 0.8), (2, 1.1))),
        *(row("peer", f"realistic #{s}", 1.0) for s in (1, 2)),
    ]
    said = losses(rows, ["w1"])
    assert "W1, calibrated: `peer` costs less than flower on 1 of 2 seeds" in said
    assert "W1, 35 s: `peer` costs less than flower on 1 of 2 seeds" in said
    cheaper = "W1, calibrated, ideal player: more than 5 % cheaper than flower's default: `flower -keep_warm`"
    assert cheaper in said
    assert "(flower ÷ it 1.11)" in said
    assert "W1, 35 s, ideal player" in said and "-lean" not in said
    assert losses(rows[:3], ["w1"]).startswith("**Where flower is not the cheapest**")
    assert "every workload" in losses([row("flower", "ideal", 1.0, family="flower")], ["w1"])


@pytest.mark.parametrize("share", [0.0, 1.0])
def test_a_coordinator_that_reads_cut_reports_reads_the_saved_one_before_its_next_move(
    share: float, tmp_path: Any
) -> None:
    from benchmarks.suite.play import Play
    from flower.testing import RecordedRequest

    actions = (Run("a", "python3 gen.py a"), Run("look", "ls", glance=True), Run("b", "python3 gen.py b"))
    workload = Workload("w9", "test", "Do it.", actions, chunk=1)
    behaviour = Behaviour("realistic", 1, reads_cut=share)
    play = Play(
        workload, tmp_path, delegated=True, pointers_in_handoff=False, scripts="s", behaviour=behaviour
    )
    shown = cut_report("[task c0] done.\n- a: ok\n" + "narration " * 900, str(tmp_path / "reports"))
    saved = shown.rsplit("the whole report: ", 1)[1].rstrip("]")
    assert (tmp_path / "reports").is_dir() and saved.startswith(str(tmp_path / "reports"))

    def step(index: int, messages: list[dict[str, Any]]) -> list[Any]:
        body = {"messages": messages}
        request = RecordedRequest(index, "main", index, index, body, {}, "/v1/messages", 0.0)
        return [b for b in play.main.step(request).content if type(b).__name__ == "ToolUse"]

    (first,) = step(0, [{"role": "user", "content": "Go."}])
    assert first.name == "Agent"
    use = {"type": "tool_use", "id": "ag0", "name": "Agent", "input": first.input}
    messages = [
        {"role": "user", "content": "Go."},
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "ag0", "content": shown}]},
    ]
    (nxt,) = step(1, messages)
    if share == 0:  # today's player: on with the next move, the look
        assert nxt.name == "Bash" and nxt.input["command"] == "ls"
        return
    assert nxt.name == "Read" and nxt.input == {"file_path": saved}
    assert play.ledger.cut_reads == 1
    read_use = {"type": "tool_use", "id": "rd0", "name": "Read", "input": nxt.input}
    read_result = {"type": "tool_result", "tool_use_id": "rd0", "content": "(the report)"}
    messages += [{"role": "assistant", "content": [read_use]}, {"role": "user", "content": [read_result]}]
    (after,) = step(2, messages)  # read once: the next move
    assert after.name == "Bash" and after.input["command"] == "ls"


def test_the_realistic_player_reads_a_previewed_output_back_to_look_as_real_agents_did() -> None:
    from flower.report._measured import PREVIEW_READ_BACK_SHARE

    player = Behaviour("realistic", 1)
    looks = [player.reads_to_look(f"run out-{i:03d}#0") for i in range(3_000)]
    assert looks == [Behaviour("realistic", 1).reads_to_look(f"run out-{i:03d}#0") for i in range(3_000)]
    assert sum(looks) / len(looks) == pytest.approx(PREVIEW_READ_BACK_SHARE, abs=0.02)  # 5 of 29
    assert not any(Behaviour().reads_to_look(f"run out-{i:03d}#0") for i in range(200))  # the ideal one
    never = Behaviour("realistic", 1, reads_look=0.0)
    assert not any(never.reads_to_look(f"run out-{i:03d}#0") for i in range(200))
    assert Behaviour("realistic", 2, reads_look=0.3).label == "realistic #2 [looks 0.3]"


@pytest.mark.parametrize(("share", "chars"), [(0.0, 5_000), (1.0, 5_000), (1.0, 150_000)])
def test_an_agent_shown_a_preview_reads_the_saved_output_back_by_its_next_reply(
    share: float, chars: int, tmp_path: Any
) -> None:
    from benchmarks.suite.play import Play
    from flower.testing import RecordedRequest

    actions = (Run("a", "python3 gen.py a"), Run("b", "python3 gen.py b"))
    workload = Workload("w9", "test", "Do it.", actions, chunk=8)
    behaviour = Behaviour("realistic", 1, reads_look=share)
    play = Play(
        workload, tmp_path, delegated=False, pointers_in_handoff=False, scripts="s", behaviour=behaviour
    )
    saved = tmp_path / "spill" / "a.txt"
    saved.parent.mkdir()
    saved.write_text("x" * chars)
    shown = f"(preview)\n[flower: output moved out of the conversation to `{saved}` (Read it for the rest)]"

    def step(index: int, messages: list[dict[str, Any]]) -> list[Any]:
        request = RecordedRequest(
            index, "main", index, index, {"messages": messages}, {}, "/v1/messages", 0.0
        )
        return [b for b in play.main.step(request).content if type(b).__name__ == "ToolUse"]

    messages: list[dict[str, Any]] = [{"role": "user", "content": "Go."}]
    (first,) = step(0, messages)
    assert first.name == "Bash" and "gen.py a" in first.input["command"]
    calls = []
    for index, result in enumerate([shown, "(a window)", "(another)"], start=1):
        use = {"type": "tool_use", "id": f"t{index}", "name": (calls or [first])[-1].name}
        use["input"] = (calls or [first])[-1].input
        messages += [
            {"role": "assistant", "content": [use]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"t{index}", "content": result}],
            },
        ]
        (call,) = step(index, messages)
        calls.append(call)
        if call.name == "Bash":
            break
    reads = [c.input for c in calls if c.name == "Read"]
    if share == 0:
        assert reads == [] and play.ledger.look_reads == 0
    elif chars <= 100_000:  # under the CLI's Read cap: the whole file in one Read
        assert reads == [{"file_path": str(saved)}] and play.ledger.look_reads == 1
    else:  # over it: two windows, as the one real look at such an output took
        assert [r.get("offset") for r in reads] == [1, 21] and {r["limit"] for r in reads} == {20}
    assert calls[-1].name == "Bash" and "gen.py b" in calls[-1].input["command"]  # then on with the work
