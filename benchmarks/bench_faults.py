"""The crash campaign: runners killed at random points and resumed twice, a full disk under the outbox,
another DSN for the same database, and a 20-second network partition.

Run from the repository root (under `nice -n 10` on a shared machine):

    python benchmarks/bench_faults.py [--kills 20] [--disks 3] [--dsns 3] [--partitions 3] [--seed 36]

Every trial drives the real CLI on the scripted model in runner processes of their own
(`tests/durability/runner.py`), against real stores: SQLite in a temp directory, PostgreSQL on a throwaway
cluster with fsync on (`$FLOWER_BENCH_POSTGRES_DSN` when set, on 127.0.0.1).

- kills (per store): the runner makes 3 Bash calls of 0.4 s (half the trials then delegate to a worker
  that makes 2), and its process group is killed with SIGKILL after a random tool result, at a random
  moment of the next call. The session is then resumed (one more Bash call), then resumed again (a
  reply): on SQLite by new processes in the same workspace, on PostgreSQL from two other workspaces and
  config directories. At the second resume, its model must see every main-thread result of the killed
  run but the call in flight (SQLite: every result its CLI wrote, which the next start recovers;
  PostgreSQL: every result the store had when the runner died, since another machine cannot read the
  dead runner's outbox) and the first resume's; the stored main transcript must be one chain: no entry
  whose parent it lacks, one leaf. A kill that cut a call in flight shows at the second resume as the
  note layer 4 answered that call with (counted).
- disks: the outbox on a 1 MiB tmpfs, filled up as the session starts; the SQLite store elsewhere is
  healthy. The run must end `ok`, warn, and the store must hold every line the CLI wrote.
- dsns: a PostgreSQL run through a local TCP proxy that is stopped for good after the first tool result
  (the run ends `ok=False`, its entries waiting in the outbox); then the session is resumed in the same
  workspace through the database's own address. What waited must be delivered, and the resume must see
  every result.
- partitions: the proxy holds every packet for 20 s from the first tool result (a partition: nothing
  fails, everything waits). A `StoreWarning` must come within 5 s, then one with `resolved=True`; the run
  must end `ok` with every line stored.

Prints one table per campaign, then the per-trial rows. Needs root for the tmpfs (skipped otherwise).
"""

from __future__ import annotations

import argparse
import json
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
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import anyio

from flower.stores import PrunePolicy
from tests import postgres
from tests.durability.harness import (
    Runner,
    fill,
    loss,
    main_key,
    mount_tmpfs,
    shape,
    stored,
    stored_results,
    unmount,
    written_results,
)
from tests.durability.proxy import Proxy

STEP, MORE = "step-", "more-"
CUT = PrunePolicy().orphan_note[:12]
"""How the answer layer 4 gives a call the kill cut begins (the model sees it in the call's place)."""


def steps_of(texts: list[str], tag: str) -> list[str]:
    """The first lines of the Bash results with `tag` (an Agent's result is reframed by the CLI)."""
    return [text.split("\n")[0] for text in texts if text.startswith(tag)]


def kill_trial(kind: str, dsn: str, root: Path, number: int, rng: random.Random) -> dict[str, Any]:
    trial = root / f"{kind}-{number}"
    store = dsn if kind == "postgresql" else str(trial / "sessions.db")
    schema = f"kill_{uuid.uuid4().hex[:10]}" if kind == "postgresql" else "-"
    subagent = number % 2 == 1
    first = trial / "a" / "repo"
    runner = Runner.start(
        store, schema, first, "start", 3, 0.4, subagent=subagent, linger=2, config=trial / "config-a"
    )
    config, sid = runner.follow()
    k = runner.kill_at_random(6 if subagent else 3, 0.4, rng)
    written = steps_of(written_results(config, sid), STEP)
    had = steps_of(stored_results(store, schema, config, sid), STEP)
    expected = written if kind == "sqlite" else had
    places = ("a", "a") if kind == "sqlite" else ("b", "c")
    once = Runner.start(store, schema, trial / places[0] / "repo", f"resume:{sid}", 1, 0).finish()
    twice = Runner.start(store, schema, trial / places[1] / "repo", f"resume:{sid}", 0, 0).finish()
    seen = [text.split("\n")[0] for text in twice.get("seen") or []]
    chain = shape(anyio.run(stored, store, schema, main_key(config, sid)))
    missed = [text for text in written if text not in seen]
    return {
        "store": kind,
        "trial": number,
        "subagent": subagent,
        "killed after result": k,
        "cut a call": any(text.startswith(CUT) for text in seen),
        "results written": len(written),
        "results stored at the kill": len(had),
        "resumes ok": bool(once.get("ok")) and bool(twice.get("ok")),
        "saw the killed run": steps_of(seen, STEP) == expected,
        "missed": missed,
        "in flight only": missed in ([], written[-1:]),
        "saw the first resume": steps_of(seen, MORE) == ["more-1"],
        "broken links": len(chain.broken),
        "leaves": len(chain.leaves),
        "errors": [r.get("error") for r in (once, twice) if not r.get("ok")],
    }


def kills(dsn: str, trials: int, rng: random.Random, root: Path) -> list[dict[str, Any]]:
    rows = []
    for number in range(trials):
        for kind in ("sqlite", "postgresql"):
            row = kill_trial(kind, dsn, root, number, rng)
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


def kill_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| store | kills | with a subagent | that cut a call in flight | resumed twice, ok "
        "| 2nd resume saw the killed run "
        "| missed beyond the call in flight | 2nd resume saw the 1st | broken links "
        "| stores with 2+ leaves |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for kind in ("sqlite", "postgresql"):
        mine = [r for r in rows if r["store"] == kind]
        lines.append(
            f"| {kind} | {len(mine)} | {sum(r['subagent'] for r in mine)} "
            f"| {sum(r['cut a call'] for r in mine)} "
            f"| {sum(r['resumes ok'] for r in mine)} "
            f"| {sum(r['saw the killed run'] for r in mine)} | {sum(not r['in flight only'] for r in mine)} "
            f"| {sum(r['saw the first resume'] for r in mine)} | {sum(r['broken links'] for r in mine)} "
            f"| {sum(r['leaves'] != 1 for r in mine)} |"
        )
    return "\n".join(lines)


def disk_trial(root: Path, number: int) -> dict[str, Any]:
    trial = root / f"disk-{number}"
    small = trial / "small"
    why = mount_tmpfs(small)
    if why is not None:
        raise SystemExit(f"bench_faults disks: {why}")
    try:
        store = str(trial / "sessions.db")
        config = trial / "config"
        runner = Runner.start(
            store, "-", trial / "repo", "start", 4, 0.2, config=config, outbox=small / "outbox.db"
        )
        runner.until(lambda e: e["ev"] == "session")
        fill(small)
        result = runner.finish()
        lost = loss(store, "-", str(config), result.get("session_id") or "")
    finally:
        unmount(small)
    warnings = [e for e in runner.events if e["ev"] == "warning" and "straight to the store" in e["message"]]
    return {
        "trial": number,
        "ok": result.get("ok"),
        "warned": bool(warnings),
        "lines written": lost.written,
        "missing": lost.missing,
        "error": result.get("error"),
    }


def disk_table(rows: list[dict[str, Any]]) -> str:
    return "\n".join(
        [
            "| runs | ok | warned (straight to the store) | lines the CLI wrote | missing from the store |",
            "|---:|---:|---:|---:|---:|",
            f"| {len(rows)} | {sum(bool(r['ok']) for r in rows)} | {sum(r['warned'] for r in rows)} "
            f"| {sum(r['lines written'] for r in rows)} | {sum(r['missing'] for r in rows)} |",
        ]
    )


def pending(outbox: Path) -> int:
    import sqlite3

    with sqlite3.connect(outbox) as conn:
        return int(conn.execute("SELECT count(*) FROM pending").fetchone()[0])


def dsn_trial(dsn: str, root: Path, number: int) -> dict[str, Any]:
    trial, schema = root / f"dsn-{number}", f"dsn_{uuid.uuid4().hex[:10]}"
    proxy = Proxy(int(urlsplit(dsn).port or 5432))
    config = trial / "config"
    workspace = trial / "repo"
    runner = Runner.start(proxy.dsn(dsn), schema, workspace, "start", 3, 0.4, drain=1, config=config)
    runner.until(lambda e: e["ev"] == "tool_result")
    proxy.stop()
    first = runner.finish()
    waited = pending(workspace / ".flower" / "outbox.db")
    sid = first.get("session_id") or ""
    again = Runner.start(dsn, schema, workspace, f"resume:{sid}", 0, 0, config=trial / "config-b").finish()
    lost = loss(dsn, schema, str(config), sid)
    return {
        "trial": number,
        "first run ok": first.get("ok"),
        "entries waiting": waited,
        "left after the other DSN": pending(workspace / ".flower" / "outbox.db"),
        "resume ok": again.get("ok"),
        "resume saw every result": steps_of(again.get("seen") or [], STEP) == ["step-1", "step-2", "step-3"],
        "missing": lost.missing,
        "lines written": lost.written,
    }


def dsn_table(rows: list[dict[str, Any]]) -> str:
    return "\n".join(
        [
            "| runs | first run ok=False | entries left waiting | delivered through the other DSN "
            "| resumes that saw every result | missing from the store |",
            "|---:|---:|---:|---:|---:|---:|",
            f"| {len(rows)} | {sum(r['first run ok'] is False for r in rows)} "
            f"| {sum(r['entries waiting'] for r in rows)} "
            f"| {sum(r['entries waiting'] - r['left after the other DSN'] for r in rows)} "
            f"| {sum(bool(r['resume ok']) and r['resume saw every result'] for r in rows)} "
            f"| {sum(r['missing'] for r in rows)} |",
        ]
    )


def partition_trial(dsn: str, root: Path, number: int, seconds: float) -> dict[str, Any]:
    trial, schema = root / f"partition-{number}", f"part_{uuid.uuid4().hex[:10]}"
    proxy = Proxy(int(urlsplit(dsn).port or 5432))
    config = trial / "config"
    runner = Runner.start(proxy.dsn(dsn), schema, trial / "repo", "start", 6, 0.4, drain=60, config=config)
    runner.until(lambda e: e["ev"] == "tool_result")
    proxy.pause()
    paused = time.time()
    healed: dict[str, float] = {}

    def heal() -> None:
        proxy.resume()
        healed["at"] = time.time()

    timer = threading.Timer(seconds, heal)
    timer.start()
    result = runner.finish()
    timer.join()
    proxy.stop()
    warnings = [e for e in runner.events if e["ev"] == "warning"]
    told = [e["t"] - paused for e in warnings if not e["resolved"] and e["t"] >= paused]
    back = [e["t"] - healed["at"] for e in warnings if e["resolved"] and e["t"] >= healed["at"] - 0.5]
    lost = loss(dsn, schema, str(config), result.get("session_id") or "")
    return {
        "trial": number,
        "ok": result.get("ok"),
        "warning after s": round(min(told), 2) if told else None,
        "resolved after the heal s": round(min(back), 2) if back else None,
        "lines written": lost.written,
        "missing": lost.missing,
    }


def partition_table(rows: list[dict[str, Any]], seconds: float) -> str:
    told = [r["warning after s"] for r in rows if r["warning after s"] is not None]
    back = [r["resolved after the heal s"] for r in rows if r["resolved after the heal s"] is not None]
    span = lambda values: f"{min(values):.2f}-{max(values):.2f}" if values else "-"  # noqa: E731
    return "\n".join(
        [
            f"| partitions of {seconds:g} s | ok | warned | within 5 s | first warning after s "
            "| resolved after the heal s | lines written | missing |",
            "|---:|---:|---:|---:|---|---|---:|---:|",
            f"| {len(rows)} | {sum(bool(r['ok']) for r in rows)} | {len(told)} | {sum(t <= 5 for t in told)} "
            f"| {span(told)} | {span(back)} | {sum(r['lines written'] for r in rows)} "
            f"| {sum(r['missing'] for r in rows)} |",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20, help="kills per store, each resumed twice")
    parser.add_argument("--disks", type=int, default=3, help="runs with a full disk under the outbox")
    parser.add_argument("--dsns", type=int, default=3, help="runs delivered through another DSN")
    parser.add_argument("--partitions", type=int, default=3, help="network partitions")
    parser.add_argument("--partition", type=float, default=20.0, help="seconds each partition lasts")
    parser.add_argument("--seed", type=int, default=36)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a stopped campaign still stops its cluster
    python = f"{platform.python_implementation()} {platform.python_version()}"
    print(f"# bench_faults: {python}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}\n")
    given = os.environ.get("FLOWER_BENCH_POSTGRES_DSN")
    cluster = None if given else postgres.start(durable=True)
    if isinstance(cluster, str):
        raise SystemExit(f"bench_faults needs PostgreSQL: set FLOWER_BENCH_POSTGRES_DSN ({cluster})")
    dsn = given or (cluster.dsn if cluster is not None else "")
    rng = random.Random(args.seed)
    started = time.monotonic()
    tables: list[tuple[str, str]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="flower-faults-") as name:
            root = Path(name)
            if args.kills:
                rows = kills(dsn, args.kills, rng, root)
                tables.append(("kill -9 at a random point, then two resumes", kill_table(rows)))
            if args.disks and os.geteuid() == 0:
                rows = [disk_trial(root, n) for n in range(args.disks)]
                print(*map(json.dumps, rows), sep="\n", flush=True)
                tables.append(("The outbox's file system full (a 1 MiB tmpfs filled up)", disk_table(rows)))
            elif args.disks:
                tables.append(("The outbox's file system full", "skipped: mounting a tmpfs needs root"))
            if args.dsns:
                rows = [dsn_trial(dsn, root, n) for n in range(args.dsns)]
                print(*map(json.dumps, rows), sep="\n", flush=True)
                tables.append(("Entries left waiting, delivered through another DSN", dsn_table(rows)))
            if args.partitions:
                rows = [partition_trial(dsn, root, n, args.partition) for n in range(args.partitions)]
                print(*map(json.dumps, rows), sep="\n", flush=True)
                tables.append(
                    ("A network partition (every packet held)", partition_table(rows, args.partition))
                )
    finally:
        if cluster is not None:
            cluster.stop()
    print(f"\n{time.monotonic() - started:.0f} s, load average {os.getloadavg()[0]:.1f} at the end\n")
    for title, table in tables:
        print(f"## {title}\n\n{table}\n")


if __name__ == "__main__":
    main()
