"""How long a killed runner's processes take to go: the CLI and the Bash call it was running.

Run from the repository root (Linux: it reads /proc):

    python benchmarks/bench_leftovers.py [--trials 3] [--observe 30] [--baseline]

Each trial is a runner process of its own (`tests/durability/runner.py`) driving the real CLI on the
scripted model, held in a Bash call (`sleep 600`) of its main thread or of a worker; once that call runs,
the runner's process (or its whole process group) gets SIGKILL, and every process of its tree then is
watched (every 10 ms) until the last one ends: the time from the kill to that end is the figure, for
each entry (`Runtime`, an app's `query()` with `instrument()`ed options), store (SQLite, PostgreSQL on a
throwaway cluster, or `$FLOWER_BENCH_POSTGRES_DSN`), kill and place of the call. The issue's criterion: 5 s.

`--baseline` runs the same cells without flower's supervisor (the CLI as the SDK starts it): what is still
running `--observe` seconds after the kill is counted, then killed by the benchmark (by pid).
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import signal
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests import postgres
from tests.durability.harness import Runner
from tests.durability.processes import LINUX, alive, tree, wait_for

ENTRIES = ("runtime", "app")
STORES = ("sqlite", "postgresql")
KILLS = ("process", "group")
PLACES = ("main", "worker")


def trial(
    root: Path, dsn: str, entry: str, kind: str, kill: str, where: str, *, baseline: bool, observe: float
) -> dict[str, Any]:
    """One kill; the seconds until the run's last process ended (None past `observe`), what was left."""
    name = uuid.uuid4().hex[:10]
    store = dsn if kind == "postgresql" else str(root / name / "sessions.db")
    schema = f"left_{name}" if kind == "postgresql" else "-"
    flags = ("--app",) * (entry == "app") + ("--hold-sub",) * (where == "worker")
    flags += ("--untethered",) * baseline
    worker = where == "worker"
    runner = Runner.start(
        store, schema, root / name / "repo", "start", 1, 0.1, subagent=worker, hold=0 if worker else 1,
        flags=flags,
    )  # fmt: skip
    pid = runner.process.pid
    wait_for(pid, lambda proc: proc.command == "sleep 600", lambda: runner.process.poll() is not None)
    procs = tree(pid)
    runner.kill(group=kill == "group")
    started = runner.killed_at or time.monotonic()
    while (left := alive(procs)) and time.monotonic() - started < observe:
        time.sleep(0.01)
    gone = None if left else time.monotonic() - started
    for proc in left:  # the baseline's leftovers: ours, ended by pid
        os.kill(proc.pid, signal.SIGKILL)
    return {
        "entry": entry,
        "store": kind,
        "kill": kill,
        "call in": where,
        "processes": len(procs),
        "gone after s": None if gone is None else round(gone, 3),
        "left": [proc.command[:60] for proc in left],
    }


def campaign(trials: int, baseline: bool, observe: float) -> list[dict[str, Any]]:
    given = os.environ.get("FLOWER_BENCH_POSTGRES_DSN")
    cluster = None if given else postgres.start()
    if isinstance(cluster, str):
        raise SystemExit(f"bench_leftovers needs PostgreSQL: set FLOWER_BENCH_POSTGRES_DSN ({cluster})")
    dsn = given or (cluster.dsn if cluster is not None else "")
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="flower-leftovers-") as root:
            for _ in range(trials):
                for cell in itertools.product(ENTRIES, STORES, KILLS, PLACES):
                    row = trial(Path(root), dsn, *cell, baseline=baseline, observe=observe)
                    print(row, flush=True)
                    rows.append(row)
    finally:
        if cluster is not None:
            cluster.stop()
    return rows


def table(rows: list[dict[str, Any]], observe: float) -> str:
    lines = [
        "| entry | store | kill | call in | kills | processes in the tree | all gone after (median, max) "
        f"| kills leaving some past {observe:g} s |",
        "|---|---|---|---|---:|---:|---|---:|",
    ]
    for cell in itertools.product(ENTRIES, STORES, KILLS, PLACES):
        mine = [r for r in rows if (r["entry"], r["store"], r["kill"], r["call in"]) == cell]
        times = [r["gone after s"] for r in mine if r["gone after s"] is not None]
        spread = f"{statistics.median(times):.2f} s, {max(times):.2f} s" if times else "-"
        counts = sorted({r["processes"] for r in mine})
        left = sum(r["gone after s"] is None for r in mine)
        lines.append(
            f"| {' | '.join(cell)} | {len(mine)} | {'/'.join(map(str, counts))} | {spread} | {left} |"
        )
    times = [r["gone after s"] for r in rows if r["gone after s"] is not None]
    if times:
        lines.append(f"\nAll kills: median {statistics.median(times):.2f} s, max {max(times):.2f} s.")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3, help="kills per cell (16 cells)")
    parser.add_argument("--observe", type=float, default=30.0, help="seconds a kill's leftovers are watched")
    parser.add_argument("--baseline", action="store_true", help="without flower's supervisor")
    args = parser.parse_args()
    if not LINUX:
        raise SystemExit("bench_leftovers reads /proc: Linux only")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a stopped campaign still stops its cluster
    python = f"{platform.python_implementation()} {platform.python_version()}"
    print(f"# bench_leftovers: {python}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}\n")
    started = time.monotonic()
    rows = campaign(args.trials, args.baseline, args.observe)
    print(f"\n{time.monotonic() - started:.0f} s, load average {os.getloadavg()[0]:.1f} at the end\n")
    what = "without the supervisor (baseline)" if args.baseline else "with flower's supervisor"
    print(f"## kill -9 during a Bash call, {what}\n\n{table(rows, args.observe)}\n")


if __name__ == "__main__":
    main()
