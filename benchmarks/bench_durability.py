"""Durability campaigns: runners killed with SIGKILL at random points, and PostgreSQL stopped mid-run.

Run from the repository root:

    python benchmarks/bench_durability.py kills [--trials 15] [--seed 26]   # per store: SQLite, PostgreSQL
    python benchmarks/bench_durability.py restarts [--cycles 10] [--seed 26]
    python benchmarks/bench_durability.py latency [--runs 3]               # per store
    python benchmarks/bench_durability.py                                    # all three

Every trial drives the real CLI on the scripted model in a runner process of its own
(`tests/durability/runner.py`), against a real store: SQLite in a temp directory, PostgreSQL on a
throwaway cluster with fsync on (`kills` uses `$FLOWER_BENCH_POSTGRES_DSN` when set; `restarts` always
owns its cluster, since it stops it).

- kills: the runner does 3 Bash calls (half the trials then delegate to a worker that does 2), and its
  process group is killed with SIGKILL after a random tool result, at a random moment of the next call.
  Then, file by file against the CLI's local transcript, the criterion the suite asserts
  (`tests/durability/harness.Cut`, no clock): the store holds the file's first lines, the killed
  runner's outbox the committed lines after them, and only the tail after is missing (a kill that breaks
  it is counted: must be 0). What the store lacks is reported both ways: committed (in the outbox) or
  not (the tail), and by time (written more than a second before the kill, or in the last second: the
  window the kill hit). Then another runner resumes the session (PostgreSQL: another workspace, another
  config directory; SQLite: the same workspace, a new process and config directory, whose start
  recovers what the outbox held and what the CLI wrote) and its model must see every tool result the
  store had (SQLite: the CLI wrote).
- restarts: 4 Bash calls; after a random tool result PostgreSQL is stopped with `pg_ctl stop -m immediate`
  for 1 to 4 s, then started again (crash recovery). Each run must end with a StepResult, `ok=True`,
  nothing the CLI wrote missing from the store, and the session resumed from another workspace.

- latency: in one process, 6 Bash calls per run; for each tool result, the time from the SDK handing it
  over (the `ToolResult` event) until its line is in the CLI's local transcript, and until it is in the
  store: the store's delay after the CLI wrote the line is the window a kill can lose.

Prints one markdown table per campaign, then the per-trial rows.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import signal
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests import postgres
from tests.durability.harness import Runner, cut, loss, stored_results, written_results


def resume_check(store: str, schema: str, workspace: Path, session: str, had: list[str]) -> tuple[bool, bool]:
    """(the resume ended ok, its model saw the Bash results of `had`, in order)."""
    result = Runner.start(store, schema, workspace, f"resume:{session}", 1, 0).finish()
    seen = [text.split("\n")[0] for text in result.get("seen") or []]
    steps = [text for text in seen if text.startswith("step-")]  # the Bash calls' (an Agent's is reframed)
    return bool(result.get("ok")), bool(result.get("ok")) and steps == [
        t for t in had if t.startswith("step-")
    ]


def kill_trial(kind: str, dsn: str, root: Path, number: int, rng: random.Random) -> dict[str, Any]:
    trial = root / f"{kind}-{number}"
    store = dsn if kind == "postgresql" else str(trial / "sessions.db")
    schema = f"kill_{uuid.uuid4().hex[:10]}" if kind == "postgresql" else "-"
    subagent = number % 2 == 1
    # the final answer comes 600 s late: a kill after the last result lands mid-run on a busy machine too
    runner = Runner.start(store, schema, trial / "a" / "repo", "start", 3, 0.4, subagent=subagent, linger=600)
    config, sid = runner.follow()
    k = runner.kill_at_random(6 if subagent else 3, 0.4, rng)
    at = cut(store, schema, config, sid, trial / "a" / "repo" / ".flower" / "outbox.db")
    lost = loss(store, schema, config, sid, runner.seen, runner.killed_at)
    had = stored_results(store, schema, config, sid)
    if kind == "sqlite":  # the next start in the workspace first recovers what the CLI wrote
        had = written_results(config, sid)
    elsewhere = trial / ("b" if kind == "postgresql" else "a") / "repo"
    ok, saw = resume_check(store, schema, elsewhere, sid, had)
    after = loss(store, schema, config, sid).missing if kind == "sqlite" else None
    return {
        "store": kind,
        "trial": number,
        "subagent": subagent,
        "killed after result": k,
        "lines written": lost.written,
        "faults": list(at.faults),
        "kept in the outbox": at.kept,
        "uncommitted tail": at.lost,
        "lost beyond": lost.beyond,
        "lost in flight": lost.missing - lost.beyond,
        "missing after the next start": after,
        "resumed": ok,
        "saw all": saw,
    }


def kills(trials: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    given = os.environ.get("FLOWER_BENCH_POSTGRES_DSN")
    cluster = None if given else postgres.start(durable=True)
    if isinstance(cluster, str):
        raise SystemExit(f"bench_durability needs PostgreSQL: set FLOWER_BENCH_POSTGRES_DSN ({cluster})")
    dsn = given or (cluster.dsn if cluster is not None else "")
    try:
        with tempfile.TemporaryDirectory(prefix="flower-kills-") as root:
            for number in range(trials):
                for kind in ("sqlite", "postgresql"):
                    row = kill_trial(kind, dsn, Path(root), number, rng)
                    print(row, flush=True)
                    rows.append(row)
    finally:
        if cluster is not None:
            cluster.stop()
    return rows


def restart_cycle(cluster: postgres.Cluster, root: Path, number: int, rng: random.Random) -> dict[str, Any]:
    trial, schema = root / f"restart-{number}", f"restart_{number}"
    config = trial / "config-a"  # the CLI's transcript outlives the run, to be compared with the store
    runner = Runner.start(cluster.dsn, schema, trial / "a" / "repo", "start", 4, 0.4, drain=60, config=config)
    config, sid = runner.follow()
    k, down = rng.randint(1, 4), rng.uniform(1.0, 4.0)
    runner.until(lambda e: e["ev"] == "tool_result" and e["n"] >= k)
    time.sleep(rng.uniform(0, 0.4))
    cluster.halt("immediate")
    stopped = time.monotonic()
    restarted = threading.Timer(down, cluster.resume)
    restarted.start()
    result = runner.finish()
    ended = time.monotonic() - stopped
    restarted.join()
    if runner.tail is not None:
        runner.tail.stop()
    lost = loss(cluster.dsn, schema, config, sid)
    had = stored_results(cluster.dsn, schema, config, sid)
    ok, saw = resume_check(cluster.dsn, schema, trial / "b" / "repo", sid, had)
    warnings = [e for e in runner.events if e["ev"] == "warning"]
    return {
        "cycle": number,
        "stopped after result": k,
        "down s": round(down, 1),
        "run ended in s": round(ended, 1),
        "StepResult ok": result.get("ok"),
        "error": result.get("error"),
        "warnings": sum(1 for w in warnings if not w["resolved"]),
        "recovered": sum(1 for w in warnings if w["resolved"]),
        "lines written": lost.written,
        "missing": lost.missing,
        "resumed elsewhere": ok and saw and len(had) == 4,
    }


def restarts(cycles: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    cluster = postgres.start(durable=True)
    if isinstance(cluster, str):
        raise SystemExit(f"bench_durability restarts needs PostgreSQL binaries ({cluster})")
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="flower-restarts-") as root:
            for number in range(cycles):
                row = restart_cycle(cluster, Path(root), number, rng)
                print(row, flush=True)
                rows.append(row)
    finally:
        cluster.stop()
    return rows


async def latency_run(kind: str, dsn: str, root: Path, number: int) -> list[tuple[float, float]]:
    """(event -> local file, event -> store) in seconds, for each tool result of one run."""
    import anyio
    import asyncpg

    from flower import PostgresSessionStore, Runtime, SqliteSessionStore, worker
    from flower.events import ToolResult
    from flower.testing import ScriptedModel, bash

    workspace = root / f"latency-{kind}-{number}"
    workspace.mkdir(parents=True)
    schema = f"latency_{uuid.uuid4().hex[:8]}"
    store: Any = PostgresSessionStore(dsn, schema=schema) if kind == "postgresql" else str(workspace / "s.db")
    found: list[tuple[float, float]] = []
    script = [bash(f"echo call-{k}; sleep 0.4") for k in range(6)] + ["done"]
    async with ScriptedModel(main=script) as model:
        rt = Runtime(workspace, store=store, configure=model.attach)
        reader = SqliteSessionStore(workspace / "s.db") if kind == "sqlite" else await asyncpg.connect(dsn)

        async def present_in_store(tool_use_id: str) -> bool:
            needle = f'"tool_use_id":"{tool_use_id}"'
            if kind == "sqlite":
                return any(
                    needle in str(row) for row in await anyio.to_thread.run_sync(_sqlite_rows, reader.path)
                )
            try:
                return bool(
                    await reader.fetchval(
                        f"SELECT count(*) FROM {schema}.entries WHERE payload LIKE $1", f"%{needle}%"
                    )
                )
            except asyncpg.UndefinedTableError:
                return False

        def present_in_file(tool_use_id: str) -> bool:
            files = list(Path(model.config_dir).glob("projects/*/*.jsonl"))
            return bool(files) and any(
                tool_use_id in line and "tool_result" in line for line in files[0].open()
            )

        async def watch(tool_use_id: str, started: float) -> None:
            file_at = store_at = 0.0
            while not (file_at and store_at):
                now = time.monotonic() - started
                file_at = file_at or (now if present_in_file(tool_use_id) else 0.0)
                store_at = store_at or (now if await present_in_store(tool_use_id) else 0.0)
                await anyio.sleep(0.005)
            found.append((file_at, store_at))

        async with anyio.create_task_group() as group:

            def on_event(event: object) -> None:
                if isinstance(event, ToolResult):
                    group.start_soon(watch, event.tool_use_id, time.monotonic())

            await rt.run(
                worker("Runs commands.", "You run commands.", tools=["Bash"]), "Go.", on_event=on_event
            )
        if kind == "postgresql":
            await reader.close()
            await store.aclose()
        await rt.store.aclose()
    return found


def _sqlite_rows(path: str) -> list[str]:
    import sqlite3

    with sqlite3.connect(path) as conn:
        return [payload for (payload,) in conn.execute("SELECT payload FROM entries")]


def latency(runs: int) -> list[dict[str, Any]]:
    import anyio

    cluster = postgres.start(durable=True)
    if isinstance(cluster, str):
        raise SystemExit(f"bench_durability latency needs PostgreSQL binaries ({cluster})")
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="flower-latency-") as root:
            for kind in ("sqlite", "postgresql"):
                samples = [
                    s for n in range(runs) for s in anyio.run(latency_run, kind, cluster.dsn, Path(root), n)
                ]
                rows.append({"store": kind, "samples": samples})
                print({"store": kind, "samples": samples}, flush=True)
    finally:
        cluster.stop()
    return rows


def latency_table(rows: list[dict[str, Any]]) -> str:
    def stats(values: list[float]) -> str:
        ordered = sorted(values)
        pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
        return f"{pick(0.5):.3f} | {pick(0.9):.3f} | {ordered[-1]:.3f}"

    lines = [
        "| store | tool results | SDK -> CLI's file p50 s | p90 | max "
        "| CLI's file -> store p50 s | p90 | max |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        samples = row["samples"]
        written = stats([file_at for file_at, _ in samples])
        stored = stats([max(0.0, store_at - file_at) for file_at, store_at in samples])
        lines.append(f"| {row['store']} | {len(samples)} | {written} | {stored} |")
    return "\n".join(lines)


def kill_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| store | kills | with a subagent | lines the CLI wrote | kills breaking the criterion "
        "| store lacks: committed, in the outbox | store lacks: the uncommitted tail "
        "| store lacks: written > 1 s before the kill | written in the last second "
        "| missing after the next start here | resumed | saw every result |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for kind in ("sqlite", "postgresql"):
        mine = [r for r in rows if r["store"] == kind and "error" not in r]
        where = "same workspace, new process" if kind == "sqlite" else "another workspace"
        names = ("subagent", "lines written", "kept in the outbox", "uncommitted tail", "lost beyond")
        total = {n: sum(r[n] for r in mine) for n in (*names, "lost in flight")}
        after = sum(r["missing after the next start"] for r in mine) if kind == "sqlite" else "-"
        lines.append(
            f"| {kind} | {len(mine)} | {total['subagent']} | {total['lines written']} "
            f"| {sum(bool(r['faults']) for r in mine)} | {total['kept in the outbox']} "
            f"| {total['uncommitted tail']} | {total['lost beyond']} | {total['lost in flight']} | {after} "
            f"| {sum(r['resumed'] for r in mine)} ({where}) | {sum(r['saw all'] for r in mine)} |"
        )
    return "\n".join(lines)


def restart_table(rows: list[dict[str, Any]]) -> str:
    ended = [r for r in rows if r["StepResult ok"] is not None]
    return "\n".join(
        [
            "| cycles | ended with a StepResult | ok | lines written | missing from the store "
            "| StoreWarning while down | resumed elsewhere | server down s (range) |",
            "|---:|---:|---:|---:|---:|---:|---:|---|",
            f"| {len(rows)} | {len(ended)} | {sum(bool(r['StepResult ok']) for r in rows)} "
            f"| {sum(r['lines written'] for r in rows)} | {sum(r['missing'] for r in rows)} "
            f"| {sum(r['warnings'] > 0 for r in rows)} | {sum(bool(r['resumed elsewhere']) for r in rows)} "
            f"| {min(r['down s'] for r in rows)}-{max(r['down s'] for r in rows)} |",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("campaign", nargs="?", choices=["kills", "restarts", "latency", "all"], default="all")
    parser.add_argument("--trials", type=int, default=15, help="kills per store")
    parser.add_argument("--cycles", type=int, default=10, help="PostgreSQL stop/restart cycles")
    parser.add_argument("--runs", type=int, default=3, help="latency runs per store")
    parser.add_argument("--seed", type=int, default=26)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a stopped campaign still stops its cluster
    python = f"{platform.python_implementation()} {platform.python_version()}"
    print(f"# bench_durability: {python}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}\n")
    started = time.monotonic()
    tables = []
    if args.campaign in ("kills", "all"):
        tables.append(("kill -9 of the runner's process group", kill_table(kills(args.trials, args.seed))))
    if args.campaign in ("latency", "all"):
        tables.append(("From the SDK to the store, per tool result", latency_table(latency(args.runs))))
    if args.campaign in ("restarts", "all"):
        tables.append(
            (
                "PostgreSQL stopped (-m immediate) and restarted mid-run",
                restart_table(restarts(args.cycles, args.seed)),
            )
        )
    print(f"\n{time.monotonic() - started:.0f} s, load average {os.getloadavg()[0]:.1f} at the end\n")
    for title, table in tables:
        print(f"## {title}\n\n{table}\n")


if __name__ == "__main__":
    main()
