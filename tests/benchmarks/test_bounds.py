"""The benchmark's replays of flower's runs (`benchmarks/suite/bounds.py`): pure functions over recorded
requests, priced through `flower._cost`'s simulated cache."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from benchmarks.suite import bounds, floor
from benchmarks.suite.metrics import Metrics
from benchmarks.suite.ratios import bounds_table, replayed
from benchmarks.suite.trace import Sent, dollars, usages
from flower._cost import TTL_1H, TTL_5M, Block
from flower.testing._requests import ToolResultView
from tests.benchmarks.reports import cut_report, metrics_row

MODEL = "claude-sonnet-4-6"


def sent(caller: str, prefix: int, *, ttl: float = TTL_1H, output: int = 100) -> Sent:
    """A request of `prefix` blocks of 1,000 tokens each (the same blocks for every request of a caller),
    its last block marked."""
    blocks = [
        Block(hash((caller, n)), 1000, ttl if n == prefix - 1 else None, "user", n) for n in range(prefix)
    ]
    return Sent(caller, MODEL, blocks, blocks, prefix * 4000, prefix * 1000, 0, output)


def run() -> list[Sent]:
    """A coordinator request, a worker's two, the coordinator again, a last coordinator request."""
    return [sent("main", 10), sent("worker", 3), sent("worker", 4), sent("main", 11), sent("main", 12)]


def test_a_replay_changes_only_the_coordinators_marks_and_a_ping_saves_the_rewrite() -> None:
    requests = run()
    assert bounds.asks_one_hour(requests) and not bounds.asks_one_hour(requests[:1])
    five = bounds.with_lifetimes(requests, {0: TTL_5M, 3: TTL_5M, 4: TTL_5M})
    assert [b.breakpoint for b in five[1].blocks] == [b.breakpoint for b in requests[1].blocks]
    assert {b.breakpoint for s in five if s.caller == "main" for b in s.blocks} == {None, TTL_5M}
    long_wait = [0.0, 10.0, 390.0, 400.0, 420.0]
    replays = bounds.variants(requests, long_wait, [0.0] * 5, [], 0)
    cost = {name: dollars(found, usages(found, at)) for name, (found, at) in replays.items()}
    as_run = dollars(requests, usages(requests, long_wait))
    assert cost["warm"] < cost["5m"]  # a ping at 270 s reads the prefix, the next request reads it too
    assert cost["warm"] < as_run  # and one hour on every write pays 2x where 1.25x would do
    short_wait = [0.0, 10.0, 20.0, 30.0, 50.0]
    replays = bounds.variants(requests, short_wait, [0.0] * 5, [], 0)
    assert replays["5m"] == replays["warm"] and set(replays) == set(bounds.VARIANTS)


def test_a_coordinator_kept_warm_pings_every_270_seconds_of_a_long_wait_in_time_order() -> None:
    requests = run()
    found, at = bounds.kept_warm(requests, [0.0, 10.0, 600.0, 610.0, 620.0], [0.0] * 5)
    assert at == [0.0, 10.0, 270.0, 540.0, 600.0, 610.0, 620.0]
    assert [s.caller for s in found] == ["main", "worker", "main", "main", "worker", "main", "main"]
    assert found[2].output == found[3].output == 1 and found[2].blocks == found[0].blocks
    assert {b.breakpoint for b in found[2].blocks} == {None, TTL_5M}
    # the same wait, but 500 s of it the workload's idle time after the worker: no one waits, no ping
    _, at = bounds.kept_warm(requests, [0.0, 10.0, 600.0, 610.0, 620.0], [0.0, 0.0, 500.0, 0.0, 0.0])
    assert at == [0.0, 10.0, 600.0, 610.0, 620.0]
    # a long wait with no worker between two coordinator requests (its own tool): no ping either
    _, at = bounds.kept_warm(requests, [0.0, 10.0, 20.0, 30.0, 400.0], [0.0] * 5)
    assert at == [0.0, 10.0, 20.0, 30.0, 400.0]


def test_flower_is_priced_with_the_pings_its_runtime_sends_while_the_coordinator_waits() -> None:
    from benchmarks.suite import warm
    from benchmarks.suite.runs import FLOWER, named
    from benchmarks.suite.workloads import workload

    requests = [dataclasses.replace(s, blocks=five(s)) if s.caller == "main" else s for s in run()]
    times = [0.0, 10.0, 600.0, 610.0, 620.0]
    found, at = warm.as_flower(requests, times, [0.0] * 5)
    assert at == [0.0, 10.0, 270.0, 540.0, 600.0, 610.0, 620.0]  # flower._warm's schedule: 270 s apart
    assert [s.caller for s in found][2:4] == [warm.PING, warm.PING] and found[2].output == 1
    # a ping is the coordinator's request with its last mark moved onto the ping's own text; on Sonnet
    # 4.6 the CLI's two reminders come before it (here the last block is no tool_result: after it)
    assert found[2].blocks[:-2] == [dataclasses.replace(b, breakpoint=None) for b in requests[0].blocks]
    assert [b.tokens for b in found[2].blocks[-2:]] == [warm.REMINDER_CHARS // 4, warm.PING_TEXT_CHARS // 4]
    assert found[2].blocks[-1].breakpoint == TTL_5M and found[2].blocks[-2].breakpoint is None
    assert found[2].blocks[-1].key != found[3].blocks[-1].key  # `. 1`, `. 2`: each its own suffix
    pinged = dollars(found, usages(found, at))
    assert dollars(requests, usages(requests, times)) > pinged  # the coordinator's prefix is read again
    _, at = warm.as_flower(requests, times, [0.0, 0.0, 500.0, 0.0, 0.0])  # the idle time: no one waits
    assert at == times
    w1 = workload("w1", True)
    assert warm.keeps_warm(FLOWER, requests) and warm.keeps_warm(FLOWER, run())  # recorded at 1 hour
    assert warm.as_flower(run(), times, [0.0] * 5)[0] == found  # priced with the marks flower sends
    assert not warm.keeps_warm(named(w1, "flower -keep_warm"), requests)
    assert not warm.keeps_warm(named(w1, "flower -delegation"), [s for s in requests if s.caller == "main"])


def test_a_ping_is_priced_as_the_cli_sends_it_on_each_model() -> None:
    from benchmarks.suite import warm

    last = sent("main", 10, ttl=TTL_5M)
    result = last.blocks[-1].key
    on_sonnet = dataclasses.replace(last, results={result: "toolu_1"})  # its last block a tool_result
    ping = warm.ping(on_sonnet, 1)
    # Sonnet 4.6: the reminders go inside the last tool_result, which differs; then the `. N` text
    assert [b.key for b in ping.blocks[:9]] == [b.key for b in last.blocks[:9]]
    assert ping.blocks[9].key != result and ping.blocks[9].tokens == 1000 + warm.REMINDER_CHARS // 4
    assert ping.blocks[9].breakpoint is None and ping.blocks[10].breakpoint == TTL_5M
    # Opus 5: every block up to the mark equal, then the text and the budget line (27 tokens)
    opus = warm.ping(dataclasses.replace(on_sonnet, model="claude-opus-5-5"), 1)
    assert [b.key for b in opus.blocks[:10]] == [b.key for b in last.blocks]
    assert (
        sum(b.tokens for b in opus.blocks[10:]) == warm.PING_SUFFIX and opus.blocks[-1].breakpoint == TTL_5M
    )
    # at another rate the ping's own blocks are counted at it too
    assert warm.ping(on_sonnet, 1, rate=0.5).blocks[-1].tokens == warm.PING_TEXT_CHARS // 2


def five(request: Sent) -> list[Block]:
    """`request`'s blocks with its marks at 5 minutes."""
    return [b if b.breakpoint is None else dataclasses.replace(b, breakpoint=TTL_5M) for b in request.blocks]


def test_cut_reports_count_once_and_the_workers_last_replies_write_the_rest_less(tmp_path: Any) -> None:
    report = "\n".join(f"line {n}: " + "x" * 90 for n in range(100))
    cut = cut_report(report, str(tmp_path))
    assert "[flower: report cut at" in cut

    @dataclasses.dataclass
    class Recorded:
        caller: str
        answer: str
        tool_results: list[ToolResultView] = dataclasses.field(default_factory=list)
        tool_uses: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    seen = [ToolResultView("a1", cut, False, "Agent"), ToolResultView("r1", "plain", False, "Read")]
    requests = [
        Recorded("main", 'reply Agent({"description": "c0"})'),
        Recorded("worker", 'reply thinking, Bash({"command": "ls"})'),
        Recorded("worker", "reply thinking, text('[task c0] done.')"),
        Recorded("main", "reply text('next')", seen),
        Recorded("main", "reply text('end')", seen),  # the same result again: counted once
    ]
    head, whole = (int(n.replace(",", "")) for n in bounds.CUT.search(cut).groups())  # type: ignore[union-attr]
    assert whole == len(report) and head <= 2_000
    assert bounds.cut_excess(requests) == (whole - head + 3) // 4
    assert bounds.worker_finals(requests) == [2]
    replay = bounds.short_reports(
        [sent("worker", 3, output=1_500), sent("worker", 3, output=900)], [0, 1], 2_000
    )
    assert [s.output for s in replay] == [0, 400]  # taken from the last replies in order, never below 0


def test_the_table_pairs_each_replay_with_the_cheapest_peer_seed_by_seed() -> None:
    def row(strategy: str, player: str, cost: float, replays: dict[str, float] | None = None) -> Metrics:
        base = dataclasses.replace(metrics_row(strategy, cost, True), player=player)
        if strategy == "flower":
            base = dataclasses.replace(base, family="flower")
        found = {clock: dict(replays) for clock in bounds.CLOCKS} if replays else {}
        return dataclasses.replace(base, costs={"35": cost, "calibrated": cost}, bounds=found)

    rows = [
        row("flower", "realistic #1", 1.2, {"5m": 1.0, "warm": 0.9, "short": 0.8}),
        row("flower", "realistic #2", 1.4, {"5m": 1.3, "warm": 1.1, "short": 0.6}),
        *(row("peer", f"realistic #{s}", 1.0) for s in (1, 2)),
    ]
    assert replayed(rows, "w1", "35", "warm") == {"median": 1.0, "max": 1.1}
    assert replayed(rows, "w1", "35", "missing") is None
    table = bounds_table(rows, ["w1"])
    assert "| 35 s | cut reports written only as long as their head | 0.70 (0.80) |" in table
    assert "| calibrated | as run | **1.30 (1.40)** |" in table


# -- the lower bound -----------------------------------------------------------------------------------


def seen_request(thread: str, blocks: list[Block], results: dict[int, str], **more: Any) -> floor.Seen:
    return floor.Seen(thread, MODEL, blocks, results, more.pop("output", 10), **more)


def test_the_bound_pays_each_block_once_and_drops_an_output_after_its_last_use() -> None:
    system, task = Block(1, 5_000, TTL_5M, "system"), Block(2, 100, None, "user", 0)
    call, out = Block(3, 10, None, "assistant", 1), Block(4, 8_000, TTL_5M, "user", 2)
    call2, out2 = Block(5, 10, None, "assistant", 3), Block(6, 2_000, TTL_5M, "user", 4)
    first = seen_request("main", [system, task], {})
    second = seen_request("main", [system, task, call, out], {4: "t1"})  # the model reads `out` here
    third = seen_request("main", [system, task, call, out, call2, out2], {4: "t1", 6: "t2"})
    usage = floor.floor_usage([first, second, third])[MODEL]
    # every block paid once as input; carried ones read; `out` dropped after its one read
    assert usage.input == 5_000 + 100 + 10 + 8_000 + 10 + 2_000
    assert usage.cache_read == 5_100 + (5_100 + 10) and usage.output == 30
    # a later reply that notes a fact `out` holds keeps it until then
    noted = dataclasses.replace(third, uses=frozenset({"t1"}))
    assert floor.floor_usage([first, second, noted])[MODEL].cache_read == 5_100 + (5_110 + 8_000)
    # a worker's context is its own: its results live and drop in its thread; the shared prefix is read
    worker = seen_request("worker:c0", [system, Block(7, 50, None, "user", 0), out], {4: "t9"})
    assert floor.floor_usage([first, worker])[MODEL].cache_read == 5_000
    # a report's narration is not paid (minimal reports)
    report = seen_request("main", [system, task, call, out], {4: "t1"}, trims={4: 7_000})
    assert floor.floor_usage([first, report])[MODEL].input == 100 + 10 + 1_000 + 5_000


def test_the_bound_is_below_the_run_it_replays_and_names_the_facts_and_narration_it_reads() -> None:
    requests = run()
    seen = [seen_request("main" if s.caller == "main" else "worker:c0", s.blocks, {}) for s in requests]
    times = [0.0, 10.0, 390.0, 400.0, 420.0]
    assert floor.floor_dollars(seen) < dollars(requests, usages(requests, times))
    assert floor.noted("Noted W1-F03=abc234. Noted T01=PASS.") == {"W1-F03=abc234", "T01=PASS"}
    assert (
        floor.narration("[task c0] done.\n  What I did: " + "x" * 400)
        == (len("\n  What I did: ") + 400 + 3) // 4
    )
    assert floor.narration("[task c0] done.") == 0


def test_flower_is_measured_against_the_cheapest_floor_of_its_seed() -> None:
    from benchmarks.suite.ratios import lower_bound

    def row(strategy: str, player: str, cost: float, bound: float) -> Metrics:
        found = dataclasses.replace(metrics_row(strategy, cost, True), player=player, floor=bound)
        return dataclasses.replace(found, family="flower") if strategy.startswith("flower") else found

    rows = [
        row("flower", "realistic #1", 1.0, 0.6),
        row("peer", "realistic #1", 1.5, 0.5),  # the bound of seed 1
        row("flower", "realistic #2", 1.2, 0.4),  # the bound of seed 2: flower's own floor
        row("peer", "realistic #2", 1.1, 0.8),
        row("flower", "ideal", 0.9, 0.45),
        row("peer", "ideal", 1.0, 0.3),
        dataclasses.replace(row("stopped", "realistic #1", 0.2, 0.1), finished=False),  # did less: no bound
    ]
    found = lower_bound(rows, "w1")
    assert found == {"median": 2.5, "max": 3.0, "by": found["by"], "ideal": 3.0}
    assert found["by"] in ("peer", "flower")


def test_where_the_money_goes_adds_up_to_the_runs_cost_and_parts_the_hand_back_frame() -> None:
    from types import SimpleNamespace

    from benchmarks.suite.player import Ledger
    from benchmarks.suite.pricing import SONNET, at_rate
    from benchmarks.suite.realistic import Behaviour
    from benchmarks.suite.spend import spend
    from benchmarks.suite.timing import send_times
    from benchmarks.suite.trace import cut
    from flower.testing import RecordedRequest

    mark = {"type": "ephemeral", "ttl": "1h"}
    tools = [{"name": "Agent", "description": "d" * 6_000, "input_schema": {}}]
    system = [{"type": "text", "text": "s" * 8_000, "cache_control": mark}]
    report = "[Subagent hand-back] " + "f" * 400 + "\n  [task c0] done.\n  " + "r" * 800 + "\nagentId: a1"
    call = {"type": "tool_use", "id": "ag", "name": "Agent", "input": {"prompt": "[task c0] go"}}
    result = {"type": "tool_result", "tool_use_id": "ag", "content": report, "cache_control": mark}
    first = {
        "model": MODEL,
        "tools": tools,
        "system": system,
        "messages": [{"role": "user", "content": "Go."}],
    }
    second = {**first, "messages": [*first["messages"], {"role": "assistant", "content": [call]}]}
    second["messages"].append({"role": "user", "content": [result]})
    worker = {
        "model": MODEL,
        "tools": tools,
        "system": system,
        "messages": [{"role": "user", "content": "[task c0] go"}],
    }
    requests = [
        RecordedRequest(0, "main", 0, 0, first, {}, "/v1/messages", 0.0, usage={"output_tokens": 50}),
        RecordedRequest(1, "worker", 0, 1, worker, {}, "/v1/messages", 0.0, usage={"output_tokens": 300}),
        RecordedRequest(2, "main", 1, 2, second, {}, "/v1/messages", 0.0, usage={"output_tokens": 20}),
    ]
    rec = SimpleNamespace(
        requests=requests,
        ledger=Ledger(),
        workload=SimpleNamespace(pad=0),
        behaviour=Behaviour("realistic", 1),
        strategy=SimpleNamespace(engine="plain", runtime={}),  # priced as recorded (no keep-warm)
    )
    found = spend(rec, "35")
    sent = [
        cut(r.body, "worker" if r.caller == "worker" else "main", r.output_tokens, 0, None) for r in requests
    ]
    sent = at_rate(sent, SONNET)  # the headline row: Sonnet 4.6 at its measured tokens per character
    times = send_times(requests, {}, "35", 1, [s.context for s in sent])
    assert sum(found.values()) == pytest.approx(dollars(sent, usages(sent, times)), abs=1e-3)
    assert (
        found["hand-back frames: write 1h"] > 0
        and found["reports: write 1h"] > found["hand-back frames: write 1h"]
    )
    assert found["worker prompt: read"] > 0  # the worker reads the prompt its coordinator wrote
    assert found["output: workers"] == pytest.approx(round(300 * SONNET.rate * 4) * 15 / 1e6, abs=1e-4)
