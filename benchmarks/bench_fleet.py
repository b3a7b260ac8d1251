"""The fleet's store beside SQLite: append throughput, load + rewrite, and 8 runners appending at once.

Run from the repository root: `python benchmarks/bench_fleet.py` (a PostgreSQL server: the DSN in
`$FLOWER_BENCH_POSTGRES_DSN`, else a throwaway cluster with fsync on is started and stopped). Prints one
markdown table per measure, SQLite and PostgreSQL side by side. Transcripts are bench_stores.py's.

- append: one runner appends a 10,000-entry transcript in batches of 100 (the SDK flushes once a turn).
- load + rewrite: `load()` alone, and through `PruningSessionStore` with its defaults, at 1k/10k/50k.
- 8 runners: 8 processes, each appending 1,000 entries in batches of 10 to its own session of one store
  at the same time; wall time from the first append to the last, and the latency of each append.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_stores import TRANSCRIPTS, transcript
from flower.stores import PostgresSessionStore, PruningSessionStore, SqliteSessionStore
from tests import postgres

SIZES = (1_000, 10_000, 50_000)
APPEND_ENTRIES = 10_000
BATCH = 100
RUNNERS = 8
RUNNER_ENTRIES = 1_000
RUNNER_BATCH = 10
ROUNDS = 3
KEY = {"project_key": "bench", "session_id": "5e55a0e0-0000-4000-8000-000000000000"}


def open_store(kind: str, where: str, schema: str) -> Any:
    return SqliteSessionStore(where) if kind == "sqlite" else PostgresSessionStore(where, schema=schema)


async def append_rate(kind: str, where: str, schema: str, entries: list[dict[str, Any]]) -> float:
    async with open_store(kind, where, schema) as store:
        await store.append({**KEY, "session_id": "warm"}, entries[:1])  # schema, connection
        started = time.perf_counter()
        for start in range(0, len(entries), BATCH):
            await store.append(KEY, entries[start : start + BATCH])
        return len(entries) / (time.perf_counter() - started)


async def load_times(
    kind: str, where: str, schema: str, entries: list[dict[str, Any]]
) -> tuple[float, float]:
    """Median seconds of load() alone and of load + rewrite (`PruningSessionStore` defaults)."""
    async with open_store(kind, where, schema) as store:
        for start in range(0, len(entries), 1000):
            await store.append(KEY, entries[start : start + 1000])
        stack = PruningSessionStore(store)
        stack.clock = lambda: TRANSCRIPTS.WRITTEN_BY  # loaded as just written: no idle pause
        loads, totals = [], []
        await stack.load(KEY)  # warm: glance parser, connection
        for _ in range(ROUNDS):
            started = time.perf_counter()
            await store.load(KEY)
            loads.append(time.perf_counter() - started)
            started = time.perf_counter()
            await stack.load(KEY)
            totals.append(time.perf_counter() - started)
        return statistics.median(loads), statistics.median(totals)


async def runner(kind: str, where: str, schema: str, number: int, start_at: float) -> None:
    """One of the concurrent runners (run in a process of its own): prints its append latencies."""
    entries = transcript(RUNNER_ENTRIES, seed=number).entries[:RUNNER_ENTRIES]
    key = {"project_key": "bench", "session_id": f"runner-{number}"}
    async with open_store(kind, where, schema) as store:
        await store.append({**key, "session_id": f"warm-{number}"}, entries[:1])
        await anyio.sleep(max(0.0, start_at - time.time()))
        latencies = []
        first = time.time()
        for start in range(0, len(entries), RUNNER_BATCH):
            began = time.perf_counter()
            await store.append(key, entries[start : start + RUNNER_BATCH])
            latencies.append(time.perf_counter() - began)
        print(json.dumps({"first": first, "last": time.time(), "latencies": latencies}), flush=True)


def concurrent(kind: str, where: str, schema: str) -> tuple[float, float, float]:
    """(wall seconds, p50 ms, p95 ms) of RUNNERS processes appending at once."""
    start_at = time.time() + 8.0  # every process imported and connected before the first append
    processes = [
        subprocess.Popen(
            [sys.executable, __file__, "--runner", kind, where, schema, str(n), str(start_at)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(RUNNERS)
    ]
    reports = []
    for process in processes:
        out, _ = process.communicate(timeout=600)
        if process.returncode:
            raise SystemExit(f"a runner failed (exit {process.returncode})")
        reports.append(json.loads(out.strip().splitlines()[-1]))
    wall = max(r["last"] for r in reports) - min(r["first"] for r in reports)
    latencies = sorted(x for r in reports for x in r["latencies"])
    p95 = latencies[int(0.95 * (len(latencies) - 1))]
    return wall, statistics.median(latencies) * 1000, p95 * 1000


def header(*names: str) -> None:
    row(*names)
    print("|---|" + "---:|" * (len(names) - 1))


def row(*cells: object) -> None:
    print("| " + " | ".join(str(c) for c in cells) + " |")


async def main(dsn: str) -> None:
    load = os.getloadavg()[0]
    python = f"{platform.python_implementation()} {platform.python_version()}"
    print(f"# bench_fleet: {python}, {os.cpu_count()} CPUs, load average {load:.1f} at the start\n")
    with tempfile.TemporaryDirectory() as tmp:
        places = {"sqlite": lambda name: str(Path(tmp) / f"{name}.db"), "postgres": lambda name: dsn}
        schema = lambda name: f"bench_{name}_{os.getpid()}"  # noqa: E731

        print(f"## Append: one runner, {APPEND_ENTRIES:,} entries in batches of {BATCH}\n")
        header("store", "entries/s")
        entries = transcript(APPEND_ENTRIES).entries[:APPEND_ENTRIES]
        for kind, where in places.items():
            rate = await append_rate(kind, where("append"), schema("append"), entries)
            row(kind, f"{rate:,.0f}")

        print(f"\n## Load and load + rewrite (`PruningSessionStore` defaults), medians of {ROUNDS}\n")
        header(
            "entries",
            "SQLite load s",
            "PostgreSQL load s",
            "SQLite load + rewrite s",
            "PostgreSQL load + rewrite s",
        )
        for size in SIZES:
            entries = transcript(size).entries
            got = {
                kind: await load_times(kind, where(f"load{size}"), schema(f"load{size}"), entries)
                for kind, where in places.items()
            }
            row(
                f"{len(entries):,}",
                *(f"{got[k][0]:.3f}" for k in places),
                *(f"{got[k][1]:.3f}" for k in places),
            )

        print(
            f"\n## {RUNNERS} runners at once, {RUNNER_ENTRIES:,} entries each in batches of {RUNNER_BATCH} "
            "(processes, one session each)\n"
        )
        header("store", "wall s", "entries/s (all runners)", "append p50 ms", "append p95 ms")
        for kind, where in places.items():
            wall, p50, p95 = concurrent(kind, where("runners"), schema("runners"))
            row(kind, f"{wall:.2f}", f"{RUNNERS * RUNNER_ENTRIES / wall:,.0f}", f"{p50:.1f}", f"{p95:.1f}")
    print(f"\n(load average {os.getloadavg()[0]:.1f} at the end)")


def run() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--runner":
        kind, where, schema, number, start_at = sys.argv[2:7]
        anyio.run(runner, kind, where, schema, int(number), float(start_at))
        return
    given = os.environ.get("FLOWER_BENCH_POSTGRES_DSN")
    if given:
        anyio.run(main, given)
        return
    cluster = postgres.start(durable=True)
    if isinstance(cluster, str):
        raise SystemExit(f"bench_fleet needs PostgreSQL: set FLOWER_BENCH_POSTGRES_DSN ({cluster})")
    try:
        print(f"(a throwaway PostgreSQL cluster, fsync on, on {cluster.dsn})\n")
        anyio.run(main, cluster.dsn)
    finally:
        cluster.stop()


if __name__ == "__main__":
    run()
