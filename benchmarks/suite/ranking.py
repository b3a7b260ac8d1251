"""The summary tables of docs/benchmarks.md: flower against each peer at its best, every strategy ranked,
the billing block's sensitivity, and the scaling table.

Rows of the ideal player are single runs; the realistic player's are summarised over seeds as
min / median / max. A ratio with the realistic player is the median of the per-seed ratios (the same
seed draws the same choices for both strategies).
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable, Sequence

from .metrics import Metrics
from .peers import CLEARS, MASKS
from .runs import WINDOW

COORD, SOLO, CC, RAW = "flower", "flower -delegation", "baseline_cc_default", "baseline_raw"
PEER_NAMES = {p.name for p in (*MASKS, *CLEARS)}


def money(value: float) -> str:
    """Dollars: `$1.23`, `$0.045`."""
    return f"${value:,.2f}" if value >= 1 else f"${value:.3f}"


def k(value: float) -> str:
    """Thousands, one decimal: `12.3k`."""
    return f"{value / 1000:,.1f}k"


def _at(
    rows: Sequence[Metrics], key: str, strategy: str, player: str = "ideal", size: int = 0
) -> list[Metrics]:
    return [
        r
        for r in rows
        if r.workload == key and r.strategy == strategy and r.size == size and r.player.startswith(player)
    ]


def one(rows: Sequence[Metrics], key: str, strategy: str, size: int = 0) -> Metrics | None:
    """The ideal player's row."""
    found = _at(rows, key, strategy, "ideal", size)
    return found[0] if found else None


def seeds(rows: Sequence[Metrics], key: str, strategy: str) -> list[Metrics]:
    """The realistic player's rows, by seed (not the held-out seed 0 the peers' settings are chosen on,
    nor a variant of the player, `realistic #2 [unbriefed]`, which `variant` brings in)."""
    found = [
        r for r in _at(rows, key, strategy, "realistic") if r.player != "realistic #0" and "[" not in r.player
    ]
    return sorted(found, key=lambda r: r.player)


def variant(rows: Sequence[Metrics], tag: str) -> list[Metrics]:
    """`rows` as the realistic player variant `tag` (`unbriefed`, `reads 0.5`) saw them: each of its rows
    (`realistic #2 [unbriefed]`) takes the place of the default player's row of the same strategy and
    seed; a strategy the variant did not run keeps the default's (its run does not depend on it)."""
    suffix = f" [{tag}]"
    swapped = {
        (r.workload, r.strategy, r.size, r.player.removesuffix(suffix)): dataclasses.replace(
            r, player=r.player.removesuffix(suffix)
        )
        for r in rows
        if r.player.endswith(suffix)
    }
    kept = [
        r for r in rows if "[" not in r.player and (r.workload, r.strategy, r.size, r.player) not in swapped
    ]
    return kept + list(swapped.values())


def spread(values: Sequence[float], show: Callable[[float], str]) -> str:
    """`median (min-max)` of some values, or the one value."""
    if not values:
        return "-"
    if len(values) == 1:
        return show(values[0])
    return f"{show(statistics.median(values))} ({show(min(values))}-{show(max(values))})"


def ratio(rows: Sequence[Metrics], key: str, other: str, metric: str = "cost_all") -> tuple[str, str]:
    """flower ÷ `other` on `metric`: (ideal player, realistic player median of per-seed ratios)."""
    mine, theirs = one(rows, key, COORD), one(rows, key, other)
    ideal = "-"
    if mine and theirs and getattr(theirs, metric):
        ideal = f"{getattr(mine, metric) / getattr(theirs, metric):.2f}" + ("" if theirs.finished else " †")
    pairs = {r.player: r for r in seeds(rows, key, other)}
    found = [
        getattr(m, metric) / getattr(pairs[m.player], metric)
        for m in seeds(rows, key, COORD)
        if m.player in pairs and getattr(pairs[m.player], metric)
    ]
    real = f"{statistics.median(found):.2f}" if found else "-"
    if len(found) > 1:
        real += f" ({min(found):.2f}-{max(found):.2f})"
    return ideal, real


def headline(rows: Sequence[Metrics], keys: Sequence[str], picks: dict[str, tuple[str, str]]) -> str:
    """flower ÷ each peer at its best, all-agent dollars (output priced), both players."""
    heads = " | ".join(key.upper() for key in keys)
    lines = [
        f"| flower ÷ | player | {heads} |",
        "|---|---|" + "---:|" * len(keys),
    ]
    for label, pick in (
        ("the CLI's default (`baseline_cc_default`)", lambda key: CC),
        ("masking at its best", lambda key: picks[key][0]),
        ("`clear_tool_uses` at its best", lambda key: picks[key][1]),
        ("flower without its wall (`flower -delegation`)", lambda key: SOLO),
        ("plain SDK, compaction off (`baseline_raw`)", lambda key: RAW),
    ):
        cells = [ratio(rows, key, pick(key)) for key in keys]
        lines.append(f"| {label} | realistic | " + " | ".join(c[1] for c in cells) + " |")
        lines.append("| | ideal | " + " | ".join(c[0] for c in cells) + " |")
    lines.append(
        "| *best settings* | | "
        + " | ".join(f"{picks[key][0]}; {picks[key][1].replace('clear_tool_uses', 'clear')}" for key in keys)
        + " |"
    )
    return "\n".join(lines)


def _cost_key(rows: Sequence[Metrics], key: str, strategy: str) -> tuple[bool, float]:
    found = seeds(rows, key, strategy)
    if found:
        return (not all(r.finished for r in found), statistics.median(r.cost_all for r in found))
    row = one(rows, key, strategy)
    return (True, float("inf")) if row is None else (not row.finished, row.cost_all)


def ranked(rows: Sequence[Metrics], key: str, player: str) -> list[str]:
    """Strategies of a workload by all-agent cost with this player (finished first, then cheapest)."""
    names = list(dict.fromkeys(r.strategy for r in rows if r.workload == key and r.size == 0))
    if player == "realistic":
        names = [n for n in names if seeds(rows, key, n)]
        return sorted(names, key=lambda n: _cost_key(rows, key, n))
    present = [n for n in names if one(rows, key, n)]
    return sorted(present, key=lambda n: (not one(rows, key, n).finished, one(rows, key, n).cost_all))


def _facts(r: Metrics) -> str:
    asked = r.probes + r.verdicts
    if not asked:
        return "-"
    lost = r.failed + r.verdicts_lost
    return f"{r.at_once + r.verdicts_at_once} / {asked}" + (f", {lost} lost" if lost else "")


def ranking_table(rows: Sequence[Metrics], key: str) -> str:
    """Every strategy of a workload ranked by all-agent cost: the realistic player's median where it ran,
    the ideal player's run for every strategy."""
    out = [
        "| rank | strategy | realistic: cost all, median (min-max) | realistic: peak main "
        "| ideal: cost all | ideal: input / cache read / cache write / output | ideal: peak main "
        "| ideal: facts at once | finished |",
        "|---:|---|---:|---:|---:|---|---:|---:|---|",
    ]
    for rank, name in enumerate(ranked(rows, key, "ideal"), start=1):
        r = one(rows, key, name)
        if r is None:
            continue
        real = seeds(rows, key, name)
        split = " / ".join(money(v) for v in (r.cost_input, r.cost_read, r.cost_write, r.cost_output))
        done = (
            "yes"
            if r.finished and all(s.finished for s in real)
            else f"**no** ({(r.error or 'a seed').splitlines()[0][:40]})"
        )
        out.append(
            f"| {rank} | {name} | {spread([s.cost_all for s in real], money)} "
            f"| {spread([s.peak for s in real], k)} | {money(r.cost_all)} | {split} | {k(r.peak)} "
            f"| {_facts(r)} | {done} |"
        )
    return "\n".join(out)


def sensitivity(rows: Sequence[Metrics], keys: Sequence[str], picks: dict[str, tuple[str, str]]) -> str:
    """The billing block priced both ways: flower's cost and its ratio to the cheapest peer."""
    heads = " | ".join(key.upper() for key in keys)
    lines = [f"| ideal player | {heads} |", "|---|" + "---:|" * len(keys)]
    for label, metric in (
        ("billing block as sent", "cost_all"),
        ("billing block ignored", "cost_all_ignored"),
    ):
        cells = []
        for key in keys:
            mine = one(rows, key, COORD)
            others = [one(rows, key, n) for n in (CC, *picks[key])]
            cheapest = min((getattr(o, metric) for o in others if o and o.finished), default=0.0)
            cells.append(
                f"{money(getattr(mine, metric))} ({getattr(mine, metric) / cheapest:.2f}x)"
                if mine and cheapest
                else "-"
            )
        lines.append(f"| flower, {label} (÷ cheapest peer) | " + " | ".join(cells) + " |")
    diffs = []
    for key in keys:
        mine = one(rows, key, COORD)
        diffs.append(f"{(mine.cost_all_ignored / mine.cost_all - 1):+.0%}" if mine and mine.cost_all else "-")
    lines.append("| difference (ignored ÷ as sent - 1) | " + " | ".join(diffs) + " |")
    return "\n".join(lines)


def _first_event(r: Metrics) -> str:
    if not r.finished:
        return "refused (window)"
    if r.events:
        return f"{r.events} compaction(s)/handoff(s)"
    return "neither"


LINE = WINDOW - 33_000
"""The CLI's compaction line (and flower's handoff threshold, within its reserve)."""


def reach(sizes: Sequence[int], peaks: Sequence[int]) -> str:
    """The size at which the peak would reach the compaction line, extrapolated by least squares."""
    mean_x, mean_y = statistics.fmean(sizes), statistics.fmean(peaks)
    spread_x = sum((x - mean_x) ** 2 for x in sizes)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(sizes, peaks, strict=True)) / spread_x
    if max(peaks) >= LINE:
        return f"reached by {sizes[[p >= LINE for p in peaks].index(True)]}"
    if slope <= 0:
        return "never (flat)"
    at = sizes[0] + (LINE - peaks[0]) / slope
    return f"about {at:,.0f}" if at <= 20 * sizes[-1] else f"over {20 * sizes[-1]:,} (flat)"


def scaling(rows: Sequence[Metrics], sizes: dict[str, tuple[int, ...]], titles: dict[str, str]) -> str:
    """W1 and W3 at three sizes: peak main thread, all-agent cost, growth and the window, per strategy."""
    out: list[str] = []
    for key, steps in sizes.items():
        names = list(dict.fromkeys(r.strategy for r in rows if r.workload == key and r.size))
        if not names:
            continue
        heads = " / ".join(str(s) for s in steps)
        out += [
            f"**{titles[key]}** (sizes {heads}; the middle one is the suite's).",
            "",
            f"| strategy | peak main ({heads}) | cost all ({heads}) | cost growth, largest ÷ smallest "
            "| peak growth per size step | at the largest size "
            "| reaches the compaction line (167k) at size |",
            "|---|---|---|---:|---:|---|---|",
        ]
        for name in names:
            found = [one(rows, key, name, size=(0 if s == steps[1] else s)) for s in steps]
            if any(f is None for f in found):
                continue
            peaks = [f.peak for f in found]
            costs = [f.cost_all for f in found]
            growth = f"{costs[-1] / costs[0]:.1f}x" if costs[0] else "-"
            step = f"{k((peaks[-1] - peaks[0]) / (len(peaks) - 1))}"
            hit = _first_event(found[-1]) + f", peak {peaks[-1] / WINDOW:.0%} of the window"
            out.append(
                f"| {name} | {' / '.join(k(p) for p in peaks)} | {' / '.join(money(c) for c in costs)} "
                f"| {growth} | {step} | {hit} | {reach(steps, peaks)} |"
            )
        out.append("")
    return "\n".join(out)
