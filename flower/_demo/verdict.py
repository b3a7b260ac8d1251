"""The demo's verdict: what flower bought, what it cost, and where the cost crossover lies.

Every dollar is the report's estimate (flower's cost model, `flower._cost`), the same for both runs.

The crossover is an extrapolation, and the verdict says so: each run's cost per main-thread turn is taken
as a fixed part (the run's measured average, workers included) plus the re-read of a history growing at
the run's measured rate, priced as cache reads. The rate is the history's growth per main-thread request
between restarts (a compaction or a handoff, where the history drops by half or more), in tokens of
chars / 4. Two runs whose histories grow at different rates then cost the same after `T` turns, where
the flower run's fixed overhead (a worker's prompt, tools and report per delegation) is paid back by the
plain run's faster-growing re-reads. The restarts themselves are left out: the figure says which way
the trend goes, not a bill.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .._cost import DEFAULT_MODEL, price_for
from ..report._growth import pooled_slope
from .compare import Side

__all__ = ["Verdict", "crossover", "growth", "verdict"]


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """The comparison in a few numbers, and the same in plain words (`lines`)."""

    flower_peak: int
    """The flower run's largest main-thread context (tokens)."""
    plain_peak: int
    """The plain run's largest main-thread context (tokens)."""
    kept_out: int
    """Characters of tool output flower's spill kept out of the context."""
    flower_cost: float
    """The flower run's estimated cost, workers included (US dollars)."""
    plain_cost: float
    """The plain run's estimated cost (US dollars)."""
    extra_seconds: float
    """The flower run's wall time minus the plain run's."""
    crossover_turns: float | None
    """Main-thread turns at which the two runs cost the same (extrapolated); None when the trend never
    crosses (the cheaper run's history grows no faster)."""
    turns: int
    """The flower run's main-thread turns (the length the costs were measured at)."""
    lines: tuple[str, ...]
    """The verdict, as printed."""


def growth(resident: Sequence[int]) -> float:
    """Tokens of history added per main-thread request, between restarts (a drop by half or more)."""
    segments: list[list[float]] = [[]]
    for before, chars in zip([0, *resident], resident, strict=False):
        if segments[-1] and chars <= before / 2:
            segments.append([])
        segments[-1].append(chars / 4)
    return max(pooled_slope(segments) or 0.0, 0.0)


def _per_turn(side: Side) -> tuple[float, float]:
    """A run's cost per turn as `(fixed, growth)`: turn `t` costs `fixed + growth * t` dollars."""
    report = side.report
    turns = max(report.context.turns, 1)
    model = report.cost.by_model[0][0] if report.cost.by_model else DEFAULT_MODEL
    read = price_for(model)[0].cache_read / 1_000_000
    rate = read * growth(side.resident)
    return report.cost.usd / turns - rate * turns / 2, rate


def crossover(flower: Side, plain: Side) -> float | None:
    """Turns at which the two runs' extrapolated costs meet (see the module docstring), or None."""
    fixed_f, growth_f = _per_turn(flower)
    fixed_p, growth_p = _per_turn(plain)
    if growth_f == growth_p:
        return None
    turns = 2 * (fixed_p - fixed_f) / (growth_f - growth_p)
    return turns if turns > 0 else None


def verdict(flower_side: Side, plain_side: Side) -> Verdict:
    """What flower bought and cost against the plain run, and where the crossover lies."""
    flower, plain = flower_side.report, plain_side.report
    flower_s, plain_s = flower_side.seconds, plain_side.seconds
    peak_f, peak_p = flower.context.peak, plain.context.peak
    cost_f, cost_p = flower.cost.usd, plain.cost.usd
    turns = flower.context.turns
    meet = crossover(flower_side, plain_side)
    bought = (
        f"flower bought a main thread {1 - peak_f / peak_p:.0%} smaller at its peak "
        f"({peak_f:,} tokens against {peak_p:,}), {flower.spills.kept_out:,} chars of output kept out of "
        f"it, and a handoff where the plain session compacted."
        if peak_p and peak_f < peak_p
        else f"flower's main thread peaked at {peak_f:,} tokens, the plain session's at {peak_p:,}."
    )
    diff = cost_f - cost_p
    cost = (
        f"It cost ${cost_f:.2f} against ${cost_p:.2f} ({diff / cost_p:+.0%}, estimated with flower's cost "
        f"model) and {flower_s - plain_s:+.0f} s of wall time: "
        + (
            "the workers' own prompts, tools and reports."
            if diff > 0
            else "the plain session re-reads more history than flower's workers add."
        )
        if cost_p
        else f"It cost ${cost_f:.2f}."
    )
    if cost_f <= cost_p:
        where = f"Crossover: flower is already the cheaper at this length ({turns} main-thread turns)."
    elif meet is None:
        where = (
            "Crossover: none at these growth rates; in a run this short flower buys context, not dollars "
            "(the benchmarks show where it buys both)."
        )
    else:
        where = (
            f"Crossover: at about {meet:,.0f} main-thread turns (this run: {turns}), extrapolating each "
            "history's growth (compactions and handoffs left out), flower becomes the cheaper; longer runs "
            "favour it."
        )
    return Verdict(
        flower_peak=peak_f,
        plain_peak=peak_p,
        kept_out=flower.spills.kept_out,
        flower_cost=cost_f,
        plain_cost=cost_p,
        extra_seconds=flower_s - plain_s,
        crossover_turns=meet,
        turns=turns,
        lines=(bought, cost, where),
    )
