"""docs/benchmarks.md: the numbers of a run as tables, the preview decision, and the method (prose.py)."""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence
from pathlib import Path

from . import levers, modes, plots, prose, ranking, ratios
from .actions import Workload
from .findings import findings
from .metrics import Metrics
from .ranking import COORD, SOLO, k, money, one, seeds
from .runner import chosen_peers
from .runs import HEAD_ONLY, HEAD_TAIL, LONG_HEAD, ONE_HOUR, default_shape, shape_label, sweep_name
from .workloads import SCALES


def _probes(row: Metrics) -> str:
    return (
        f"{row.at_once} / {row.one_more} / {row.more} / {row.failed} (of {row.probes})" if row.probes else "-"
    )


def _extra(row: Metrics) -> str:
    seen = f"; the CLI saw a {row.cli_gap / 60:,.0f}-minute gap" if row.cli_gap >= 600 else ""
    if row.workload == "w2":
        trusted = "yes" if row.stale_trusted else "no"
        return f"stale snapshots after resume: {row.staleness}; acted on a stale state: {trusted}{seen}"
    if row.workload == "w5":
        return (
            f"residue peak / end: {k(row.residue_peak)} / {k(row.residue_end)} chars; retries {row.retries}, "
            f"skipped {row.skipped}; script written {row.reuse_writes}x, run {row.reuse_runs}x{seen}"
        )
    return ""


def workload_table(rows: Sequence[Metrics], idle: dict[str, str]) -> str:
    """One workload's details with the ideal player: every strategy run, then the ablations not run."""
    head = (
        "| strategy | finished | requests main / all | peak main (tokens) | Σ main (tokens) "
        "| Σ all agents (tokens) | cost main / all | output tokens | cached / breaks "
        "| facts: at once / +1 / +2 / lost | verdicts at once "
        "| compactions, handoffs (context after) "
        "| more |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---|"
    )
    lines = [head]
    for r in sorted(rows, key=lambda r: (r.family != "baseline", r.family != "peer", r.cost_all)):
        events = f"{r.events} ({', '.join(f'{p}%' for p in r.residuals)})" if r.events else "0"
        done = "yes" if r.finished else f"**no**: {(r.error or '').splitlines()[0][:60]}"
        verdicts = f"{r.verdicts_at_once} / {r.verdicts}" if r.verdicts else "-"
        lines.append(
            f"| {r.strategy} | {done} "
            f"| {r.main_turns} / {r.all_turns} | {k(r.peak)} | {k(r.sum_main)} | {k(r.sum_all)} "
            f"| {money(r.cost_main)} / {money(r.cost_all)} | {k(r.output_tokens)} "
            f"| {r.stability:.0%} / {r.breaks} | {_probes(r)} | {verdicts} | {events} | {_extra(r)} |"
        )
    for name, why in idle.items():
        same = "flower" if name.startswith("flower") else "baseline_raw"
        said = why if why.startswith("not run") else f"identical to {same} here: {why}"
        lines.append(f"| {name} | not run | | | | | | | | | | | {said} |")
    return "\n".join(lines)


def _cheaper(rows: Sequence[Metrics], key: str, player: str) -> tuple[int, int, list[str], float]:
    """(flower's rank, strategies ranked, the cheaper ones with how much, flower's cost) for a player."""
    order = ranking.ranked(rows, key, player)
    if COORD not in order:
        return 0, len(order), [], 0.0

    def cost(name: str) -> float:
        found = seeds(rows, key, name) if player == "realistic" else [one(rows, key, name)]
        return statistics.median(r.cost_all for r in found if r is not None)

    mine = cost(COORD)
    rank = order.index(COORD) + 1
    cheaper = [f"{name} ({money(cost(name))}; flower {mine / cost(name):.2f}x)" for name in order[: rank - 1]]
    return rank, len(order), cheaper, mine


def standings(rows: Sequence[Metrics], workloads: Sequence[Workload]) -> str:
    """One generated line per workload: where flower ranks on cost with each player, and what beats it."""
    lines = []
    for w in workloads:
        parts = []
        for player, scope in (
            ("realistic", "realistic player, median of its seeds"),
            ("ideal", "ideal player, every strategy and setting"),
        ):
            rank, count, cheaper, mine = _cheaper(rows, w.key, player)
            if not rank:
                continue
            text = f"{scope}: flower ranks {rank} of {count} by all-agent cost ({money(mine)})"
            text += f"; **cheaper than flower: {', '.join(cheaper)}**" if cheaper else " (the cheapest)"
            parts.append(text)
        mine = one(rows, w.key, COORD)
        if mine is not None:
            done = [
                r for r in rows if r.workload == w.key and r.player == "ideal" and r.size == 0 and r.finished
            ]
            lowest = min(done, key=lambda r: r.peak)
            parts.append(
                f"main-thread peak {k(mine.peak)}"
                + (
                    " (the lowest)"
                    if lowest.strategy == COORD
                    else f" (lowest: {lowest.strategy}, {k(lowest.peak)})"
                )
            )
        lines.append(f"- **{w.title}**: " + "; ".join(parts) + ".")
    return "\n".join(lines)


def preview_section(rows: Sequence[Metrics]) -> tuple[str, str]:
    """The W1 preview sweep as a table, and the verdict computed from it (text, short verdict)."""
    table = [
        "| preview | mode | facts at once (of asked) | verdicts at once | extra calls | peak main | Σ main "
        "| Σ all agents | cost all |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    found: dict[tuple[tuple[int, int], str], Metrics] = {}
    modes = ("delegated", "main thread alone")
    for shape in (HEAD_ONLY, HEAD_TAIL, LONG_HEAD):
        label = shape_label(shape) + (" (default)" if shape == default_shape() else "")
        for mode, base in zip(modes, (COORD, SOLO), strict=True):
            r = one(rows, "w1", sweep_name(base, shape))
            if r is None:
                continue
            found[(shape, mode)] = r
            table.append(
                f"| {label} | {mode} | {r.at_once} / {r.probes} | {r.verdicts_at_once} / {r.verdicts} "
                f"| {r.extra_calls} | {k(r.peak)} | {k(r.sum_main)} | {k(r.sum_all)} | {money(r.cost_all)} |"
            )
    if not all((shape, m) in found for shape in (HEAD_ONLY, HEAD_TAIL) for m in modes):
        return PREVIEWS_NOT_RUN, "not decided: the sweep did not run (`--previews`)"
    pairs = {m: (found[(HEAD_ONLY, m)], found[(HEAD_TAIL, m)]) for m in modes}  # (head only, head + tail)
    better = all(b.at_once + b.verdicts_at_once >= a.at_once + a.verdicts_at_once for a, b in pairs.values())
    fewer = all(b.extra_calls <= a.extra_calls for a, b in pairs.values())
    ratios = {m: b.cost_all / a.cost_all for m, (a, b) in pairs.items()}
    change = " and ".join(f"{ratios[m] - 1:+.1%} ({m})" for m in modes)
    chosen = HEAD_TAIL if better and fewer and max(ratios.values()) <= 1.02 else HEAD_ONLY
    policy = f"`SpillPolicy(head={chosen[0]}, tail={chosen[1]})`"
    action = "keep the default preview" if chosen == default_shape() else "switch the default preview to"
    if chosen == HEAD_TAIL:
        why = (
            "Against the 400-char head it answers at least as many facts and verdicts at once in both modes, "
            f"with no more extra calls; its all-agent cost changes by {change}."
        )
    else:
        why = (
            "Head + tail did not answer at least as many at once in both modes without more extra calls "
            f"or more than 2 % more cost (its all-agent cost changes by {change})."
        )
    verdict = f"**Verdict: {action} {policy}** ({shape_label(chosen)}). {why}"
    return "\n".join(table) + "\n\n" + verdict + "\n\n" + prose.PREVIEW_WHY, shape_label(chosen)


PREVIEWS_NOT_RUN = """\
The sweep of spill previews (400-char head, 300 head + 100 tail, 2,000 head; delegated and main thread
alone) runs with `python benchmarks/run_suite.py --previews` (W1, the ideal player); it is left out of
the default run for time. Its last run kept the default, `SpillPolicy(head=300, tail=100)`: against the
400-char head it answered at least as many facts and verdicts at once in both modes, with no more extra
calls.
"""


def scaled(workloads: Sequence[Workload]) -> str:
    """The workloads as run: sizes after scaling."""
    from .actions import ReadFile, Run, flatten

    lines = [
        "| workload | actions | tool runs | fact probes | verdict probes | outputs (chars, p50 / max) "
        "| notes |",
        "|---|---:|---:|---:|---:|---|---|",
    ]
    for w in workloads:
        actions = flatten(w.actions)
        sizes = sorted([o.size for o in w.outputs.values() if o.size] + [len(t) for t in w.files.values()])
        runs = sum(isinstance(a, Run | ReadFile) for a in actions)
        facts, verdicts = w.expected
        middle = sizes[len(sizes) // 2] if sizes else 0
        extra = f"residue {w.pad:,} tokens per main-thread turn" if w.pad else ""
        lines.append(
            f"| {w.title} | {len(actions)} | {runs} | {facts} | {verdicts} "
            f"| {middle:,} / {max(sizes, default=0):,} | {extra} |"
        )
    return "\n".join(lines)


def write(
    rows: Sequence[Metrics],
    workloads: Sequence[Workload],
    idle: dict[str, dict[str, str]],
    *,
    docs: Path,
    scale: str,
    minutes: float,
    small: Sequence[Metrics] = (),
) -> str:
    """Write docs/benchmarks.md and its plots; returns the preview verdict in a few words. `small`: a
    `--quick` run's rows, for the small tasks' section (none: no section)."""
    images = docs / "img"
    images.mkdir(parents=True, exist_ok=True)
    keys = [w.key for w in workloads]
    titles = {w.key: w.title for w in workloads}
    picks = chosen_peers(rows, keys)
    shown = {key: {"baseline_raw", "baseline_cc_default", COORD, SOLO, *picks[key]} for key in keys}
    plots.context(rows, titles, images / "benchmarks-context.png", shown)
    plots.pareto(rows, titles, images / "benchmarks-pareto.png")
    preview, short = preview_section(rows)
    if "not decided" not in short:
        plots.previews(rows, images / "benchmarks-preview.png")
    parts = [
        prose.INTRO.format(timing=_timing(scale, minutes, rows)),
        "## Where flower stands\n",
        standings(rows, workloads),
        "",
        prose.HEADLINE,
        ranking.headline(rows, keys, picks),
        "",
        ratios.clock_section(rows, keys),
        "## Tokens and prices\n",
        prose.PRICES,
        ratios.price_table(rows, keys),
        "",
        modes.modes_section(rows, keys),
        modes.small_section(small, sorted({r.workload for r in small})),
        prose.READING,
        findings(rows, keys, picks),
        "## Every strategy, ranked\n",
        prose.RANKED,
    ]
    for w in workloads:
        parts += [f"**{w.title}**\n", ranking.ranking_table(rows, w.key), ""]
    table = levers.levers_table(rows, keys, full=scale == "full")
    parts += ["## The cost of delegating, lever by lever\n", table, ""]
    parts += ["## The billing block, both ways\n", prose.BILLING, ranking.sensitivity(rows, keys, picks), ""]
    scaling = ranking.scaling(rows, {key: s for key, s in SCALES.items() if key in keys}, titles)
    parts += ["## Scaling: W1 and W3 at three sizes\n", prose.SCALING, scaling or "Not run (`--quick`).\n"]
    parts += [
        prose.CALIBRATION,
        "![Main-thread context per request](img/benchmarks-context.png)\n",
        "![All-agent cost against facts answered at once](img/benchmarks-pareto.png)\n",
        "## The spill preview: head, or head + tail (W1)\n",
        preview,
        "\n![Preview sweep](img/benchmarks-preview.png)\n" if "not decided" not in short else "",
        prose.METHOD,
        scaled(workloads),
        "",
        prose.METRICS,
    ]
    for w in workloads:
        detail = [r for r in rows if r.workload == w.key and r.player == "ideal" and r.size == 0]
        parts += [f"## {w.title}\n", prose.NOTES[w.key], "", workload_table(detail, idle.get(w.key, {})), ""]
    parts += [prose.PEERS, prose.LEFT_OUT, prose.FACTS]
    (docs / "benchmarks.md").write_text("\n".join(parts).rstrip() + "\n")
    return short


def _timing(scale: str, minutes: float, rows: Sequence[Metrics]) -> str:
    """The page's timing sentence: measured by the run that wrote it, or the kept recordings' own; and
    how often flower's coordinator Read a cut report, when it did (`--reads-cut`)."""
    cpu = sum(r.cpu for r in rows) / 60
    shares = [share for share in ratios.cut_shares(rows) if share]
    said = ", ".join(f"{share:g}" for share in shares)
    reads = prose.READS_CUT.format(shares=said, reads=sum(r.cut_reads for r in rows)) if shares else ""
    if cpu == 0:  # priced from kept recordings: their CPU time was not kept
        made = [r for r in rows if not r.strategy.endswith(ONE_HOUR)]  # a 1-hour replay is no run
        total = sum(r.wall for r in made) / 60
        return prose.KEPT_TIME.format(scale=scale, runs=len(made), minutes=total) + reads
    load = os.getloadavg()[2]
    runs = len(rows)
    timing = prose.RUN_TIME.format(scale=scale, minutes=minutes, runs=runs, cpu=cpu, idle=cpu / 2, load=load)
    return timing + reads
