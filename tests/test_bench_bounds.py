"""The benchmark's replays of flower's runs (`benchmarks/suite/bounds.py`): pure functions over recorded
requests, priced through `flower.cost`'s simulated cache."""

from __future__ import annotations

import dataclasses
from typing import Any

from benchmarks.suite import bounds
from benchmarks.suite.metrics import Metrics
from benchmarks.suite.ratios import bounds_table, replayed
from benchmarks.suite.trace import Sent, dollars, usages
from flower.cost import TTL_1H, TTL_5M, Block
from flower.testing import ToolResultView

from .test_bench_suite import cut_report, metrics_row

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


def test_the_oracle_asks_one_hour_only_before_a_wait_over_five_minutes() -> None:
    times = [0.0, 10.0, 390.0, 400.0, 420.0]  # the worker takes 400 s, the last step 20 s
    assert bounds.oracle(run(), times) == {0: TTL_1H, 3: TTL_5M, 4: TTL_5M}
    assert bounds.oracle(run(), [0.0, 10.0, 20.0, 30.0, 50.0]) == {0: TTL_5M, 3: TTL_5M, 4: TTL_5M}


def test_a_replay_changes_only_the_coordinators_marks_and_the_oracle_saves_the_rewrite() -> None:
    requests = run()
    assert bounds.asks_one_hour(requests) and not bounds.asks_one_hour(requests[:1])
    five = bounds.with_lifetimes(requests, {0: TTL_5M, 3: TTL_5M, 4: TTL_5M})
    assert [b.breakpoint for b in five[1].blocks] == [b.breakpoint for b in requests[1].blocks]
    assert {b.breakpoint for s in five if s.caller == "main" for b in s.blocks} == {None, TTL_5M}
    long_wait = [0.0, 10.0, 390.0, 400.0, 420.0]
    replays = bounds.variants(requests, long_wait, [0.0] * 5, [], 0)
    cost = {name: dollars(found, usages(found, at)) for name, (found, at) in replays.items()}
    as_run = dollars(requests, usages(requests, long_wait))
    assert cost["oracle"] < cost["5m"]  # the 5-minute coordinator writes its prefix again after the wait
    assert cost["oracle"] < as_run  # and one hour on every write pays 2x where 1.25x would do
    assert cost["warm"] < cost["5m"]  # a ping at 270 s reads the prefix, the next request reads it too
    short_wait = [0.0, 10.0, 20.0, 30.0, 50.0]
    replays = bounds.variants(requests, short_wait, [0.0] * 5, [], 0)
    assert replays["oracle"] == replays["5m"] == replays["warm"]


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
        row(
            "flower", "realistic #1", 1.2, {"5m": 1.0, "oracle": 0.9, "warm": 0.9, "short": 0.8, "both": 0.6}
        ),
        row(
            "flower", "realistic #2", 1.4, {"5m": 1.3, "oracle": 1.1, "warm": 1.0, "short": 1.0, "both": 0.9}
        ),
        *(row("peer", f"realistic #{s}", 1.0) for s in (1, 2)),
    ]
    assert replayed(rows, "w1", "35", "oracle") == {"median": 1.0, "max": 1.1}
    assert replayed(rows, "w1", "35", "missing") is None
    table = bounds_table(rows, ["w1"])
    assert (
        "| 35 s | lifetime knowing the wait, and cut reports as long as their head | 0.75 (0.90) |" in table
    )
    assert "| calibrated | as run | **1.30 (1.40)** |" in table
