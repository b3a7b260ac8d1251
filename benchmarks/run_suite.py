"""Side-by-side benchmarks: five workloads, flower against the plain SDK, the CLI and peers' strategies.

Run from the repository root:

    python benchmarks/run_suite.py                    # the full suite (under 20 minutes on 2 cores)
    python benchmarks/run_suite.py --quick            # a smoke run (under 3 minutes)
    python benchmarks/run_suite.py --write-docs       # docs/benchmarks.md and docs/img/benchmarks-*.png
    python benchmarks/run_suite.py --check            # exit 1 if flower regressed (benchmarks/baseline.json)
    python benchmarks/run_suite.py --update-baseline  # store this run's numbers
    python benchmarks/run_suite.py --previews         # also W1's spill preview sweep

Every number comes from real runs of the bundled CLI against flower's scripted model (`flower.testing`):
baselines, peers (their edits applied by the scripted model, the CLI's compaction behind them) and flower,
each played by an ideal scripted agent and by a realistic one (three seeds). See docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from suite import baseline, report  # noqa: E402
from suite.actions import Workload  # noqa: E402
from suite.metrics import Metrics  # noqa: E402
from suite.runner import run_suite  # noqa: E402
from suite.runs import idle_layers  # noqa: E402
from suite.workloads import build  # noqa: E402

BASELINE = HERE / "baseline.json"
DOCS = HERE.parent / "docs"


def _print_table(rows: list[Metrics]) -> None:
    print(f"{'strategy':34s} {'player':12s} fin  peak     Σall      cost_all   facts(at once/asked)")
    for r in sorted(rows, key=lambda r: (r.workload, r.size, r.player, r.cost_all)):
        print(
            f"{r.workload}{f'@{r.size}' if r.size else '':5s} {r.strategy:34s} {r.player:12s} "
            f"{'yes' if r.finished else 'NO ':3s} {r.peak:>8,} {r.sum_all:>9,} ${r.cost_all:>8.3f}  "
            f"{r.at_once + r.verdicts_at_once}/{r.probes + r.verdicts}"
        )


def _run(
    quick: bool, only: set[str], jobs: int, previews: bool
) -> tuple[list[Metrics], list[Workload], dict[str, dict[str, str]]]:
    workloads = [w for w in build(quick) if not only or w.key in only]
    keys = [w.key for w in workloads]
    rows = run_suite(
        keys, quick=quick, jobs=jobs, previews=previews, progress=lambda line: print(line, flush=True)
    )
    _print_table(rows)
    idle = {w.key: {} if quick else idle_layers(w) for w in workloads}
    return rows, workloads, idle


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small workloads, fewer strategies")
    parser.add_argument(
        "--write-docs", action="store_true", help="regenerate docs/benchmarks.md and its plots"
    )
    parser.add_argument("--check", action="store_true", help="compare with benchmarks/baseline.json")
    parser.add_argument("--update-baseline", action="store_true", help="store this run's numbers")
    parser.add_argument("--only", default="", help="comma-separated workload keys (w1..w5), for development")
    parser.add_argument(
        "--results", type=Path, help="also save every row (with its series) to this JSON file"
    )
    parser.add_argument("--from-results", type=Path, help="use rows saved by --results instead of running")
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time (default 2: one per core)")
    parser.add_argument("--previews", action="store_true", help="also run W1's spill preview sweep")
    args = parser.parse_args()
    only = {key.strip() for key in args.only.split(",") if key.strip()}
    scale = "quick" if args.quick else "full"
    started = time.perf_counter()
    if args.from_results:
        saved = json.loads(args.from_results.read_text())
        rows = [Metrics(**row) for row in saved["rows"]]
        keys = {row.workload for row in rows}
        workloads = [w for w in build(args.quick) if w.key in keys]
        idle = {w.key: {} if args.quick else idle_layers(w) for w in workloads}
        minutes = float(saved["minutes"])
    else:
        rows, workloads, idle = _run(args.quick, only, args.jobs, args.previews)
        minutes = (time.perf_counter() - started) / 60
        cpu = sum(r.cpu for r in rows) / 60
        print(f"\nsuite ({scale}) finished in {minutes:.1f} min; {len(rows)} runs, {cpu:.1f} CPU-minutes")
    if args.results:
        payload = {"scale": scale, "minutes": minutes, "rows": [dataclasses.asdict(r) for r in rows]}
        args.results.write_text(json.dumps(payload))
    if args.write_docs:
        verdict = report.write(rows, workloads, idle, docs=DOCS, scale=scale, minutes=minutes)
        print(f"wrote {DOCS / 'benchmarks.md'}; spill preview verdict: {verdict}")
    if args.update_baseline:
        if only:
            print("refusing to store a baseline from a partial run (--only)")
            return 2
        baseline.update(BASELINE, scale, rows)
        print(f"stored the {scale} baseline in {BASELINE}")
    if args.check:
        regressions, drift = baseline.check(BASELINE, scale, rows)
        for line in drift:
            print(f"drift (not a failure): {line}")
        for line in regressions:
            print(f"REGRESSION: {line}")
        if regressions:
            return 1
        print("no regression against the baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
