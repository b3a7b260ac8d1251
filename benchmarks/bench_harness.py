"""Cost of a scripted run through the real CLI: wall time and peak RSS, cold one-turn vs 50 tool calls.

Each sample runs in a fresh Python process (so the CLI start is cold and `RUSAGE_CHILDREN` measures that
run's CLI alone); samples of the two scenarios are interleaved so machine noise hits both alike.

Run: python benchmarks/bench_harness.py [--samples 5]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time

SCENARIOS = ("one-turn", "50-tool-calls")


def sample(scenario: str) -> dict[str, float]:
    """One run in this process; returns wall seconds and peak RSS (MB) of the CLI and of Python."""
    from flower.testing import ScriptedModel, bash

    steps: list[object] = ["hello"] if scenario == "one-turn" else [bash(f"echo call-{i}") for i in range(50)]
    if scenario != "one-turn":
        steps.append("done")
    with tempfile.TemporaryDirectory() as workspace, ScriptedModel(main=steps) as model:  # type: ignore[arg-type]
        start = time.perf_counter()
        run = model.run_sync("Go", cwd=workspace, timeout=300)
        wall = time.perf_counter() - start
    if run.error is not None or len(model.requests()) != len(steps):
        raise SystemExit(f"{scenario}: unexpected run: {run.error} / {len(model.requests())} requests")
    return {
        "wall_s": wall,
        "cli_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
        "python_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--sample", choices=SCENARIOS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sample:
        print(json.dumps(sample(args.sample)))
        return
    results: dict[str, list[dict[str, float]]] = {s: [] for s in SCENARIOS}
    for _ in range(args.samples):
        for scenario in SCENARIOS:
            out = subprocess.run(
                [sys.executable, __file__, "--sample", scenario], capture_output=True, text=True, check=True
            )
            results[scenario].append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"Scripted runs through the real CLI, median of {args.samples} (fresh process each)\n")
    print("| scenario | wall (s) | CLI peak RSS (MB) | Python peak RSS (MB) |")
    print("|---|---:|---:|---:|")
    for scenario, rows in results.items():
        med = {key: statistics.median(r[key] for r in rows) for key in rows[0]}
        print(f"| {scenario} | {med['wall_s']:.2f} | {med['cli_rss_mb']:.0f} | {med['python_rss_mb']:.0f} |")
    one = statistics.median(r["wall_s"] for r in results["one-turn"])
    fifty = statistics.median(r["wall_s"] for r in results["50-tool-calls"])
    print(f"\nper extra tool round: {(fifty - one) / 50 * 1000:.0f} ms")


if __name__ == "__main__":
    main()
