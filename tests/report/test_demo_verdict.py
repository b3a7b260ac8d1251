"""The demo's crossover: where two runs' extrapolated costs meet (a pure function over two reports)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from flower._cost import price_for
from flower._demo.compare import Side
from flower._demo.verdict import crossover, growth, verdict

READ = price_for("claude-opus-5-5")[0].cache_read / 1_000_000


def _report(*, usd: float, turns: int, slope: float, peak: int = 10_000, seconds: float = 1.0) -> Side:
    """A run of `turns` main-thread requests whose history grows `slope` tokens a turn; the parts of its
    `EconomyReport` the verdict reads."""
    report: Any = SimpleNamespace(
        cost=SimpleNamespace(usd=usd, by_model=(("claude-opus-5-5", usd),)),
        context=SimpleNamespace(turns=turns, peak=peak),
        spills=SimpleNamespace(kept_out=1_000),
    )
    return Side(report, [int(4 * (1_000 + slope * t)) for t in range(turns)], seconds)


def test_growth_restarts_where_the_history_drops_by_half() -> None:
    assert growth([4_000, 8_000, 12_000]) == pytest.approx(1_000)
    assert growth([4_000, 8_000, 12_000, 400, 4_400, 8_400]) == pytest.approx(1_000)  # a compaction
    assert growth([4_000, 4_000]) == 0.0 and growth([]) == 0.0


def test_a_dearer_run_with_slower_growth_crosses_where_the_sums_meet() -> None:
    flower, plain = _report(usd=0.5, turns=40, slope=200), _report(usd=0.4, turns=40, slope=2_000)

    turns = crossover(flower, plain)

    assert turns is not None and turns > 40

    def total(usd: float, slope: float) -> float:  # the cost model the verdict extrapolates with
        fixed = usd / 40 - READ * slope * 40 / 2
        return fixed * turns + READ * slope * turns**2 / 2

    assert total(0.5, 200) == pytest.approx(total(0.4, 2_000))


def test_no_crossover_when_the_dearer_run_also_grows_faster() -> None:
    assert crossover(_report(usd=0.5, turns=40, slope=900), _report(usd=0.4, turns=40, slope=300)) is None
    assert crossover(_report(usd=0.5, turns=40, slope=300), _report(usd=0.4, turns=40, slope=300)) is None


def test_the_verdict_says_what_was_bought_and_at_what_price() -> None:
    flower = _report(usd=0.5, turns=40, slope=200, peak=17_000, seconds=60.0)
    plain = _report(usd=0.4, turns=40, slope=2_000, peak=42_000, seconds=20.0)

    said = verdict(flower, plain)

    assert said.crossover_turns == crossover(flower, plain) and said.extra_seconds == 40.0
    bought, cost, where = said.lines
    assert "60% smaller at its peak (17,000 tokens against 42,000)" in bought
    assert "$0.50 against $0.40 (+25%" in cost and "+40 s" in cost
    assert where.startswith("Crossover: at about ") and "(this run: 40)" in where
    cheaper = verdict(_report(usd=0.3, turns=40, slope=200), plain)
    assert "already the cheaper" in cheaper.lines[2]
