"""Side-by-side benchmarks: five workloads, flower against the plain SDK, the CLI and peers' strategies.

Run from the repository root:

    python benchmarks/run_suite.py                    # the full suite (about an hour on 2 idle cores)
    python benchmarks/run_suite.py --quick            # a smoke run (under 5 minutes on 2 cores)
    python benchmarks/run_suite.py --clock 35         # priced at 35 s a request (default: calibrated)
    python benchmarks/run_suite.py --json out.json    # flower ÷ the cheapest fair peer, and its ablations
    python benchmarks/run_suite.py --write-docs       # docs/benchmarks.md and docs/img/benchmarks-*.png
    python benchmarks/run_suite.py --check            # exit 1 if flower regressed (benchmarks/baseline.json)
    python benchmarks/run_suite.py --update-baseline  # store this run's numbers
    python benchmarks/run_suite.py --previews         # also W1's spill preview sweep
    python benchmarks/run_suite.py --strategies "flower,flower -keep_warm" --no-scaling --keep DIR
                                                      # only these strategies' runs (e.g. after a change
                                                      # to flower), to price beside kept peer recordings
    python benchmarks/run_suite.py --strategies "clear_tool_uses tuned" --seeds 4,5 --keep DIR
                                                      # only those strategies, realistic player, seeds 4
                                                      # and 5 (a kept recording's missing seeds)
    python benchmarks/run_suite.py --strategies flower --reads-cut 1 --no-scaling --keep DIR
                                                      # flower's realistic coordinator Reads every report
                                                      # its cap cut (default 0.2, as real callers did)
    python benchmarks/run_suite.py --side peers --keep DIR --resume
                                                      # only the runs that are not flower's (they do not
                                                      # depend on flower's code); --resume prices a run
                                                      # already kept in DIR instead of running it again
    python benchmarks/run_suite.py --from-recordings PEERS FLOWER --json out.json
                                                      # price recordings kept in several directories

Every run is priced on Sonnet 4.6 and on the CLI's default model, each at the tokens per character measured
for it on real transcripts (`suite/pricing.py`); `--json` carries both (`"price"`), and characters / 4.

Every number comes from real runs of the bundled CLI against flower's scripted model (`flower.testing`):
baselines, peers (their edits applied by the scripted model, the CLI's compaction behind them) and flower,
each played by an ideal scripted agent and by a realistic one (five seeds), each run recorded once and
its requests priced under every clock (`suite/timing.py`). See docs/benchmarks.md.
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

from suite import baseline, ratios, report  # noqa: E402
from suite.actions import Workload  # noqa: E402
from suite.metrics import Metrics  # noqa: E402
from suite.realistic import READS_CUT  # noqa: E402
from suite.runner import EVERY, SEEDS, Selection, acts, run_suite  # noqa: E402
from suite.runs import idle_layers  # noqa: E402
from suite.timing import CLOCKS  # noqa: E402
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


def _clock(value: str) -> str:
    """`calibrated`, `stress`, or a number of seconds a request (one of the priced clocks)."""
    if value in CLOCKS:
        return value
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a clock is calibrated, stress or seconds, not {value!r}") from None
    name = f"{seconds:g}"
    if name not in CLOCKS:
        raise argparse.ArgumentTypeError(f"priced clocks: {', '.join(CLOCKS)}")
    return name


def _seeds(value: str) -> frozenset[int]:
    """`--seeds`: some of the suite's realistic seeds, comma-separated."""
    allowed = ", ".join(map(str, SEEDS))
    seeds = set()
    for part in filter(None, (p.strip() for p in value.split(","))):
        if not part.isdigit() or int(part) not in SEEDS:
            raise argparse.ArgumentTypeError(
                f"{part!r} is not one of the suite's realistic seeds ({allowed})"
            )
        seeds.add(int(part))
    if not seeds:
        raise argparse.ArgumentTypeError(f"no seed given (the suite's realistic seeds: {allowed})")
    return frozenset(seeds)


def _share(value: str) -> float:
    """`--reads-cut`: a probability, 0 to 1."""
    try:
        share = float(value)
    except ValueError:
        share = -1.0
    if not 0.0 <= share <= 1.0:
        raise argparse.ArgumentTypeError(f"--reads-cut is a probability from 0 to 1, not {value!r}")
    return share


def _selection(
    names: str,
    scaling: bool,
    seeds: frozenset[int] | None,
    quick: bool,
    only: set[str],
    side: str | None = None,
) -> Selection:
    """`--strategies`, `--no-scaling` and `--seeds` as a `Selection`: a name no workload runs is an error
    (a typo), one some selected workload does not run is said."""
    wanted = frozenset(name.strip() for name in names.split(",") if name.strip())
    keys = [w.key for w in build(quick)]
    for name in sorted(wanted):
        runs = [key for key in keys if acts(key, name, quick)]
        if not runs:
            raise SystemExit(f"--strategies: no workload runs a strategy named {name!r}")
        idle = sorted(set(only or keys) - set(runs))
        if idle:
            print(f"--strategies: {name!r} runs only in {', '.join(runs)} (not in {', '.join(idle)})")
    return Selection(wanted or None, scaling, seeds, side)


def _run(
    quick: bool,
    only: set[str],
    jobs: int,
    previews: bool,
    clock: str,
    keep: Path | None,
    select: Selection = EVERY,
    reads_cut: float = READS_CUT,
    resume: bool = False,
) -> tuple[list[Metrics], list[Workload], dict[str, dict[str, str]]]:
    workloads = [w for w in build(quick) if not only or w.key in only]
    keys = [w.key for w in workloads]
    rows = run_suite(
        keys,
        quick=quick,
        jobs=jobs,
        previews=previews,
        clock=clock,
        keep=keep,
        select=select,
        progress=lambda line: print(line, flush=True),
        reads_cut=reads_cut,
        resume=resume,
    )
    _print_table(rows)
    idle = {w.key: {} if quick else idle_layers(w) for w in workloads}
    return rows, workloads, idle


def _repriced(roots: list[Path], clock: str, only: set[str], jobs: int) -> list[Metrics]:
    """Every recording under `roots` priced under `clock` (no CLI runs), `jobs` at a time."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    paths = [p for root in roots for p in sorted(root.glob("w*/*.pkl.gz"))]
    paths = [p for p in paths if not only or p.parent.name in only]
    print(f"pricing {len(paths)} kept recordings from {', '.join(map(str, roots))}", flush=True)
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        found = pool.map(_price_kept, paths, [clock] * len(paths))
        return [row for rows in found for row in rows]


def _price_kept(path: Path, clock: str) -> list[Metrics]:
    """One kept recording's rows (`replays.priced`), in a worker process."""
    from suite.replays import priced
    from suite.runner import load_recording

    size = int(path.name.split("@")[1].split(".")[0]) if "@" in path.name else 0
    return priced(load_recording(path), size=size, clock=clock)


def _cpu_seconds() -> float:
    """CPU seconds of this process and every child it waited for (the pool's workers, the CLIs and their
    tools): what `/usr/bin/time` reports as user + system."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _print_summary(summary: dict[str, object], clock: str) -> None:
    print(f"\nflower ÷ the cheapest fair peer ({clock} clock, realistic player) and ÷ its ablations (ideal):")
    for key, value in summary.items():
        if key in ("clock", "demo", "cpu_seconds", "price", "rates") or not isinstance(value, dict):
            continue
        best = value["flower_vs_best"]
        head = f"{best['median']:.2f} (max {best['max']:.2f}) vs {best['peer']}" if best else "-"
        if best and best.get("reads_cut") is not None:
            head += f" (coordinator Reads cut reports: P={best['reads_cut']})"
        lever = ", ".join(f"{k} {v:.2f}" for k, v in value["ablations"].items())
        print(f"  {key}: {head}; ablations: {lever or '-'}")
        bound = value.get("lower_bound") or {}
        others = (
            [f"÷ the lower bound {bound['median']:.2f} (max {bound['max']:.2f})"] if "median" in bound else []
        )
        inline = value.get("inline_realistic")
        if inline:
            others.append(f"÷ -delegation, realistic {inline['median']:.2f} (max {inline['max']:.2f})")
        start = value.get("inline_start_vs_best")
        if start:
            others.append(f"flower +inline ÷ the peer {start['median']:.2f} (max {start['max']:.2f})")
        for name in ("peers_as_before", "unbriefed", "reads 0.5"):
            found = value.get(name)
            if found:
                others.append(f"{name.replace('_', ' ')} {found['median']:.2f} (max {found['max']:.2f})")
        if others:
            print(f"      {'; '.join(others)}")


def _demo() -> dict[str, float]:
    """`flower demo` run once (its output discarded): both sides' dollars and flower ÷ its plain side."""
    from flower._demo import run_demo_sync

    print("running `flower demo` (flower, then the plain SDK side)", flush=True)
    found = run_demo_sync(out=lambda line: None).verdict
    if found is None or not found.plain_cost:
        return {}
    ratio = round(found.flower_cost / found.plain_cost, 3)
    print(f"flower demo: ${found.flower_cost:.2f} against ${found.plain_cost:.2f} (flower ÷ plain {ratio})")
    return {"flower": round(found.flower_cost, 4), "plain": round(found.plain_cost, 4), "ratio": ratio}


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
        "--strategies",
        default="",
        help="comma-separated strategy names (e.g. 'flower,flower -keep_warm'): run only theirs, every "
        "player (with --seeds, the realistic one)",
    )
    parser.add_argument(
        "--no-scaling", action="store_true", help="leave out the scaling table's runs at other sizes"
    )
    parser.add_argument(
        "--seeds",
        type=_seeds,
        help=(
            "comma-separated realistic seeds, of "
            + ",".join(map(str, SEEDS))
            + ": the realistic player runs only these (the held-out seed a peer's best setting is chosen "
            "on still runs); with --strategies, only those strategies by the realistic player at these "
            "seeds: no ideal, held-out or scaling run, and a peer setting named runs whether or not it "
            "would be chosen"
        ),
    )
    parser.add_argument(
        "--results", type=Path, help="also save every row (with its series) to this JSON file"
    )
    parser.add_argument("--from-results", type=Path, help="use rows saved by --results instead of running")
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time (default 2: one per core)")
    parser.add_argument("--previews", action="store_true", help="also run W1's spill preview sweep")
    parser.add_argument(
        "--clock",
        type=_clock,
        default="calibrated",
        help="how long a request takes: calibrated (default), stress, or seconds (10, 20, 35, 60)",
    )
    parser.add_argument(
        "--json", type=Path, help="write flower ÷ the cheapest fair peer and its ablations per workload"
    )
    parser.add_argument(
        "--reads-cut",
        type=_share,
        default=READS_CUT,
        metavar="P",
        help="how often the realistic coordinator Reads the saved whole of a report flower's cap cut, "
        f"once per report, before its next move (0 to 1; default {READS_CUT}: real callers opened a "
        "document a report pointed to in 5 of 23 cases); the full suite also runs 0.5 (a sensitivity row)",
    )
    parser.add_argument("--keep", type=Path, help="keep every recording (request bodies) in this directory")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="with --keep: a run whose recording is already kept there is priced from it, not run again",
    )
    parser.add_argument(
        "--side",
        choices=("peers", "flower"),
        help="only the runs that are not flower's (peers, baselines), or only flower's and its ablations'",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="also run `flower demo` and put flower ÷ its plain side in the summary (--json)",
    )
    parser.add_argument(
        "--from-recordings",
        type=Path,
        nargs="+",
        help="price the recordings kept by --keep (one directory or more) again instead of running",
    )
    parser.add_argument(
        "--small",
        type=Path,
        nargs="+",
        help="with --write-docs: a --quick run's kept recordings (one directory or more), for the page's "
        "small tasks",
    )
    args = parser.parse_args()
    if args.small and not args.write_docs:
        parser.error("--small: the small tasks are a section of the page; give --write-docs too")
    if args.seeds and args.quick and (set(args.seeds) != {1} or not args.strategies):
        parser.error("--seeds: --quick runs one realistic seed (1); it takes --seeds 1 with --strategies")
    if args.resume and not args.keep:
        parser.error("--resume needs --keep DIR (where the recordings already made are)")
    only = {key.strip() for key in args.only.split(",") if key.strip()}
    scale = "quick" if args.quick else "full"
    started = time.perf_counter()
    if args.from_recordings:
        rows = _repriced(args.from_recordings, args.clock, only, args.jobs)
        keys = {row.workload for row in rows}
        workloads = [w for w in build(args.quick) if w.key in keys]
        idle = {w.key: {} if args.quick else idle_layers(w) for w in workloads}
        minutes = sum(r.wall for r in rows) / 60 / max(1, args.jobs)
    elif args.from_results:
        saved = json.loads(args.from_results.read_text())
        rows = [Metrics(**row) for row in saved["rows"]]  # the tables under their clock, --json under --clock
        keys = {row.workload for row in rows}
        workloads = [w for w in build(args.quick) if w.key in keys]
        idle = {w.key: {} if args.quick else idle_layers(w) for w in workloads}
        minutes = float(saved["minutes"])
    else:
        select = _selection(args.strategies, not args.no_scaling, args.seeds, args.quick, only, args.side)
        rows, workloads, idle = _run(
            args.quick,
            only,
            args.jobs,
            args.previews,
            args.clock,
            args.keep,
            select,
            args.reads_cut,
            args.resume,
        )
        minutes = (time.perf_counter() - started) / 60
        cpu = sum(r.cpu for r in rows) / 60
        print(f"\nsuite ({scale}) finished in {minutes:.1f} min; {len(rows)} rows, {cpu:.1f} CPU-minutes")
    keys = [w.key for w in workloads]
    summary = ratios.summary(rows, keys, args.clock)
    if args.demo:
        summary["demo"] = _demo()
    said = ", ".join(f"{share:g}" for share in ratios.cut_shares(rows) or [0.0])
    print(f"\n--reads-cut: flower's realistic coordinator Reads a cut report with P = {said}")
    _print_summary(summary, args.clock)
    print(
        "\nflower ÷ the cheapest fair peer on each price row (realistic player: median (largest) of seeds):"
    )
    print(ratios.price_table(rows, keys))
    cpu_seconds = _cpu_seconds()
    summary["cpu_seconds"] = round(cpu_seconds, 1)
    print(f"CPU: {cpu_seconds:.0f} s, this process and its children (user + system, as /usr/bin/time counts)")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1) + "\n")
        print(f"wrote {args.json}")
    if args.results:
        payload = {"scale": scale, "minutes": minutes, "rows": [dataclasses.asdict(r) for r in rows]}
        args.results.write_text(json.dumps(payload))
    if args.write_docs:
        small = _repriced(args.small, args.clock, only, args.jobs) if args.small else []
        verdict = report.write(rows, workloads, idle, docs=DOCS, scale=scale, minutes=minutes, small=small)
        print(f"wrote {DOCS / 'benchmarks.md'}; spill preview verdict: {verdict}")
    if args.update_baseline:
        if only or args.strategies or args.no_scaling or args.seeds:
            partial = "--only, --strategies, --no-scaling, --seeds"
            print(f"refusing to store a baseline from a partial run ({partial})")
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
