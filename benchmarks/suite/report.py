"""docs/benchmarks.md: the numbers of a run as tables, the preview decision, and the method (prose.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from . import plots, prose
from .actions import Workload
from .metrics import Metrics
from .runs import HEAD_ONLY, HEAD_TAIL, LONG_HEAD, default_shape, shape_label, sweep_name

PEERS = ("baseline_raw", "baseline_cc_default", "mask_5", "mask_10", "clear_tool_uses")
COORD, SOLO = "flower", "flower -delegation"


def k(value: float) -> str:
    """Thousands, one decimal: `12.3k`."""
    return f"{value / 1000:,.1f}k"


def _probes(row: Metrics) -> str:
    return (
        f"{row.at_once} / {row.one_more} / {row.more} / {row.failed} (of {row.probes})" if row.probes else "-"
    )


def _extra(row: Metrics) -> str:
    if row.workload == "w2":
        trusted = "yes" if row.stale_trusted else "no"
        return f"stale snapshots after resume: {row.staleness}; acted on a stale state: {trusted}"
    if row.workload == "w5":
        return (
            f"residue peak / end: {k(row.residue_peak)} / {k(row.residue_end)} chars; retries {row.retries}, "
            f"skipped {row.skipped}; script written {row.reuse_writes}x, run {row.reuse_runs}x"
        )
    return ""


def workload_table(rows: Sequence[Metrics], idle: dict[str, str]) -> str:
    """One workload's table: every strategy run or computed, then the ablations not run and why."""
    head = (
        "| strategy | kind | finished | requests main / all | peak main (tokens) | Σ main (tokens) "
        "| Σ all agents (tokens) | cost main / all (units) | cached / breaks "
        "| facts: at once / +1 / +2 / lost | verdicts at once "
        "| compactions, handoffs (context after) "
        "| more |\n|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|---|---|"
    )
    lines = [head]
    for r in rows:
        events = f"{r.events} ({', '.join(f'{p}%' for p in r.residuals)})" if r.events else "0"
        done = "yes" if r.finished else f"**no**: {(r.error or '').splitlines()[0][:60]}"
        verdicts = f"{r.verdicts_at_once} / {r.verdicts}" if r.verdicts else "-"
        lines.append(
            f"| {r.strategy} | {'approximation' if r.source == 'approximation' else 'real'} | {done} "
            f"| {r.main_turns} / {r.all_turns} | {k(r.peak)} | {k(r.sum_main)} | {k(r.sum_all)} "
            f"| {k(r.cost_main)} / {k(r.cost_all)} | {r.stability:.0%} / {r.breaks} | {_probes(r)} "
            f"| {verdicts} "
            f"| {events} | {_extra(r)} |"
        )
    for name, why in idle.items():
        lines.append(f"| {name} | not run | | | | | | | | | | | identical to flower here: {why} |")
    return "\n".join(lines)


def _row(rows: Sequence[Metrics], workload: str, strategy: str) -> Metrics | None:
    return next((r for r in rows if r.workload == workload and r.strategy == strategy), None)


def summary_tables(rows: Sequence[Metrics], keys: Sequence[str]) -> str:
    """flower against each strategy, workload by workload: cost ratio, peak ratio, facts, finishing."""
    heads = " | ".join(k_.upper() for k_ in keys)
    out = []
    for title, metric in (
        (
            "All-agent input cost (cache-weighted units), flower ÷ strategy (below 1: flower is cheaper)",
            "cost_all",
        ),
        ("Main-thread peak context, flower ÷ strategy (below 1: flower's main thread is smaller)", "peak"),
    ):
        out += [f"**{title}.** † = that strategy did not finish (it stopped early, so it spent less).", ""]
        out += [f"| strategy | kind | {heads} |", "|---|---|" + "---:|" * len(keys)]
        for strategy in PEERS:
            cells = []
            for key in keys:
                mine, theirs = _row(rows, key, COORD), _row(rows, key, strategy)
                if mine is None or theirs is None or not getattr(theirs, metric):
                    cells.append("-")
                    continue
                ratio = getattr(mine, metric) / getattr(theirs, metric)
                cells.append(f"{ratio:.2f}" + ("" if theirs.finished else " †"))
            kind = "approximation" if strategy.startswith(("mask", "clear")) else "real"
            out.append(f"| {strategy} | {kind} | " + " | ".join(cells) + " |")
        out.append("")
    out += [
        "**Facts and test verdicts answerable with no extra call** (answered at once / asked; lost = not "
        "answerable even with extra calls; ✗ = did not finish).",
        "",
        f"| strategy | kind | {heads} |",
        "|---|---|" + "---:|" * len(keys),
    ]
    names = list(dict.fromkeys(r.strategy for r in rows if not r.strategy.startswith("flower,")))
    for strategy in names:
        cells, kind = [], "real"
        for key in keys:
            r = _row(rows, key, strategy)
            if r is None:
                cells.append("-")
                continue
            kind = "approximation" if r.source == "approximation" else "real"
            lost = r.failed + r.verdicts_lost
            cell = f"{r.at_once + r.verdicts_at_once} / {r.probes + r.verdicts}" + (
                f", {lost} lost" if lost else ""
            )
            cells.append((cell if r.probes + r.verdicts else "-") + ("" if r.finished else " ✗"))
        out.append(f"| {strategy} | {kind} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def _best(ordered: Sequence[Metrics], mine: Metrics, what: str, value: str) -> str:
    """`lowest of 6 (12.3k)` or `3rd of 6 (12.3k; lowest: mask_5, 10.1k)`."""
    rank = ordered.index(mine) + 1 if mine in ordered else 0
    if rank == 1:
        return f"the lowest {what} of the {len(ordered)} strategies that finish ({value})"
    best = ordered[0]
    shown = k(best.cost_all if what == "all-agent cost" else best.peak)
    return f"{what} ranked {rank or '-'} of {len(ordered)} ({value}; lowest: {best.strategy}, {shown})"


def standings(rows: Sequence[Metrics], workloads: Sequence[Workload]) -> str:
    """One generated line per workload: where flower ranks on cost, peak and facts, against the others."""
    lines = []
    for w in workloads:
        mine = _row(rows, w.key, COORD)
        if mine is None:
            continue
        pool = [r for r in rows if r.workload == w.key and (r.strategy in PEERS or r.strategy == COORD)]
        done = [r for r in pool if r.finished]
        cost = _best(sorted(done, key=lambda r: r.cost_all), mine, "all-agent cost", k(mine.cost_all))
        peak = _best(sorted(done, key=lambda r: r.peak), mine, "main-thread peak", k(mine.peak))
        parts = [f"- **{w.title}**: {cost}; {peak}"]
        asked = mine.probes + mine.verdicts
        if asked:
            best = max(done, key=lambda r: (r.at_once + r.verdicts_at_once, -r.cost_all))
            lost = mine.failed + mine.verdicts_lost
            parts.append(
                f"{mine.at_once + mine.verdicts_at_once} of {asked} facts answered at once, {lost} lost "
                f"(most at once: {best.strategy}, {best.at_once + best.verdicts_at_once})"
            )
        raw = _row(rows, w.key, "baseline_raw")
        if w.key == "w2" and raw is not None:
            stays = "snapshot stays" if mine.staleness == 1 else "snapshots stay"
            trusted = "a stale" if mine.stale_trusted else "the current"
            parts.append(
                f"after the resume {mine.staleness} stale state {stays} visible "
                f"(baseline_raw: {raw.staleness}) and it acts on {trusted} state"
            )
        if w.key == "w5" and raw is not None:
            parts.append(
                f"residue left by failed calls in the main thread {k(mine.residue_end)} chars "
                f"(baseline_raw: {k(raw.residue_end)}), {mine.retries} denied command(s) retried"
            )
        unfinished = [r.strategy for r in pool if not r.finished]
        if unfinished:
            parts.append(f"did not finish: {', '.join(unfinished)}")
        lines.append("; ".join(parts) + ".")
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
            r = _row(rows, "w1", sweep_name(base, shape))
            if r is None:
                continue
            found[(shape, mode)] = r
            table.append(
                f"| {label} | {mode} | {r.at_once} / {r.probes} | {r.verdicts_at_once} / {r.verdicts} "
                f"| {r.extra_calls} | {k(r.peak)} | {k(r.sum_main)} | {k(r.sum_all)} | {k(r.cost_all)} |"
            )
    if not all((shape, m) in found for shape in (HEAD_ONLY, HEAD_TAIL) for m in modes):
        return "\n".join(table), "not decided: the sweep did not run (it runs in the full suite only)"
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
    short = shape_label(chosen)
    return "\n".join(table) + "\n\n" + verdict + "\n\n" + prose.PREVIEW_WHY, short


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
) -> str:
    """Write docs/benchmarks.md and its plots; returns the preview verdict in a few words."""
    images = docs / "img"
    images.mkdir(parents=True, exist_ok=True)
    titles = {w.key: w.title for w in workloads}
    plots.context(rows, titles, images / "benchmarks-context.png")
    plots.pareto(rows, titles, images / "benchmarks-pareto.png")
    preview, short = preview_section(rows)
    if "not decided" not in short:
        plots.previews(rows, images / "benchmarks-preview.png")
    keys = [w.key for w in workloads]
    parts = [
        prose.INTRO.format(scale=scale, minutes=minutes),
        "## Where flower stands\n",
        standings(rows, workloads),
        "",
        summary_tables(rows, keys),
        "",
        prose.READING if scale == "full" else "",
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
        parts += [
            f"## {w.title}\n",
            prose.NOTES[w.key],
            "",
            workload_table([r for r in rows if r.workload == w.key], idle.get(w.key, {})),
            "",
        ]
    parts += [prose.APPROXIMATIONS, prose.LEFT_OUT, prose.FACTS]
    (docs / "benchmarks.md").write_text("\n".join(parts).rstrip() + "\n")
    return short
