"""flower's variants against the cheapest fair peer, seed by seed, from kept recordings at any scale.

    python benchmarks/run_suite.py --only w1 --seeds 1,2 --keep DIR \\
        --strategies "flower,flower +inline,flower -delegation,baseline_raw (SDK prompt),<its peer>"
    python benchmarks/bench_inline.py DIR --only w1,w2,w3,w4,w5

Every recording in `DIR/<workload>/` is priced as the suite prices it (`trace.from_recording`: Sonnet 4.6
and the CLI's default model, each at its tokens per character, under the calibrated and the 35 s clock);
each plain one also with a 1-hour cache (`one_hour=True`), as the suite prices that variant. The cheapest
fair peer of a workload, per price row and clock, is the non-flower run that finished on every seed and
cost least on the median of its seeds (`ratios.cheapest_peer`); each flower strategy's ratio to it is taken
seed by seed, then the median and the largest.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from suite import pricing  # noqa: E402
from suite.runner import load_recording  # noqa: E402
from suite.trace import from_recording  # noqa: E402

CLOCKS = ("calibrated", "35")
KEPT = re.compile(r"^(?P<name>.+)--realistic(?P<seed>\d+)\.pkl\.gz$")

Costs = dict[str, dict[int, dict[str, float]]]
"""strategy -> seed -> `Trace.costs` (only runs that finished)."""


def priced(folder: Path) -> tuple[Costs, dict[str, set[int]]]:
    """Every kept realistic recording of one workload, priced; and the seeds each strategy ran (finished
    or not: a peer must finish on every seed it ran to compete)."""
    costs: Costs = {}
    ran: dict[str, set[int]] = {}
    for path in sorted(folder.glob("*--realistic*.pkl.gz")):
        match = KEPT.match(path.name)
        if match is None:
            continue
        rec = load_recording(path)
        name, seed = rec.strategy.name, int(match["seed"])
        variants = (
            [(name, False)] if name.startswith("flower") else [(name, False), (f"{name} (1h cache)", True)]
        )
        for label, hour in variants:
            ran.setdefault(label, set()).add(seed)
            if rec.finished:
                trace = from_recording(rec, run_clock="35", one_hour=hour)
                costs.setdefault(label, {})[seed] = trace.costs
    return costs, ran


def cheapest(costs: Costs, ran: dict[str, set[int]], key: str) -> str | None:
    """The non-flower strategy that finished every seed it ran and cost least on their median."""
    pool = [
        (statistics.median(c[key] for c in costs[n].values()), n)
        for n in costs
        if not n.startswith("flower") and set(costs[n]) == ran[n]
    ]
    return min(pool)[1] if pool else None


def table(keep: Path, keys: list[str]) -> str:
    """Per workload, price row and clock: the cheapest peer, and each flower strategy's per-seed ratios
    to it (median, largest) with its dollars."""
    lines = [
        "| workload | price row | clock | cheapest peer | strategy | ÷ peer: median (max) | seeds |",
        "|---|---|---|---|---|---:|---|",
    ]
    for key in keys:
        costs, ran = priced(keep / key)
        ours = sorted(n for n in costs if n.startswith("flower"))
        for row in pricing.ROWS:
            for clock in CLOCKS:
                k = pricing.key(clock, row)
                peer = cheapest(costs, ran, k)
                if peer is None:
                    continue
                low = statistics.median(c[k] for c in costs[peer].values())
                head = f"| {key.upper()} | {row.name.split(' (')[0]} | {clock} | {peer} ${low:.3f} |"
                for name in ours:
                    seeds = sorted(s for s in costs[name] if s in costs[peer])
                    ratios = [costs[name][s][k] / costs[peer][s][k] for s in seeds]
                    if not ratios:
                        continue
                    each = ", ".join(
                        f"s{s} {r:.2f} (${costs[name][s][k]:.3f} ÷ ${costs[peer][s][k]:.3f})"
                        for s, r in zip(seeds, ratios, strict=True)
                    )
                    missing = sorted(ran[name] - set(costs[name]))
                    if missing:
                        each += ", unfinished: " + ", ".join(f"s{s}" for s in missing)
                    median = statistics.median(ratios)
                    lines.append(f"{head} {name} | {median:.2f} ({max(ratios):.2f}) | {each} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("keep", type=Path, help="a directory `run_suite.py --keep` filled")
    parser.add_argument("--only", default="w1,w2,w3,w4,w5")
    args = parser.parse_args()
    keys = [k.strip() for k in args.only.split(",") if (args.keep / k.strip()).is_dir()]
    print(table(args.keep, keys))


if __name__ == "__main__":
    main()
