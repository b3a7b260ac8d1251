"""What flower's hooks cost on a busy main thread: 100 Bash calls with and without them.

Both variants run the same scripted 100-call run through the real CLI; "with" uses the options a
`Runtime` builds for a coordinator (every Bash goes through the delegation wall and glance, plus whatever
other hooks the Runtime installs), "without" the same tools with no hook. Samples are interleaved, each in
a fresh process; the table gives medians and their ratio.

Run: python benchmarks/bench_hooks.py [--samples 5] [--calls 100]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import subprocess
import sys
import tempfile
import time

VARIANTS = ("without hooks", "with flower's hooks")


def sample(variant: str, calls: int) -> float:
    from flower import Runtime, coordinator, worker
    from flower.testing import ScriptedModel, bash

    steps: list[object] = [bash(f"echo call-{i} && ls") for i in range(calls)] + ["done"]
    spec = coordinator("lead", "Look around.", {"helper": worker("Does things.", "You do things.")})
    with tempfile.TemporaryDirectory() as workspace, ScriptedModel(main=steps) as model:  # type: ignore[arg-type]
        options = Runtime(workspace, configure=model.attach).options(spec)
        if variant == "without hooks":
            options = dataclasses.replace(options, hooks=None)
        start = time.perf_counter()
        run = model.run_sync("Go", options=options, timeout=600)
        elapsed = time.perf_counter() - start
    results = model.request("main", -1).tool_results
    if run.error is not None or len(results) != calls or any(r.is_error for r in results):
        raise SystemExit(f"{variant}: the run did not go as scripted ({run.error})")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--sample", choices=VARIANTS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sample:
        print(json.dumps(sample(args.sample, args.calls)))
        return
    times: dict[str, list[float]] = {v: [] for v in VARIANTS}
    for _ in range(args.samples):
        for variant in VARIANTS:
            out = subprocess.run(
                [sys.executable, __file__, "--sample", variant, "--calls", str(args.calls)],
                capture_output=True,
                text=True,
                check=True,
            )
            times[variant].append(json.loads(out.stdout.strip().splitlines()[-1]))
    base, hooked = (statistics.median(times[v]) for v in VARIANTS)
    print(
        f"{args.calls} main-thread Bash calls through the real CLI, median of {args.samples} (interleaved)\n"
    )
    print("| variant | wall (s) | per call (ms) |")
    print("|---|---:|---:|")
    for variant, median in zip(VARIANTS, (base, hooked), strict=True):
        print(f"| {variant} | {median:.2f} | {median / args.calls * 1000:.1f} |")
    print(
        f"\nratio with/without: {hooked / base:.3f} ({(hooked - base) / args.calls * 1000:+.1f} ms per call)"
    )


if __name__ == "__main__":
    main()
