"""Speed, as ratios measured in one run: what the test suite leaves out (its tests assert behaviour only).

- **The demo**: the wall time of `flower demo` over the wall time of one scripted one-turn run through the
  real CLI, measured here one after the other, so the load of the machine weighs on both: the demo costs
  about that many CLI runs on any machine.
- **The SQLite store and the event loop**: a task ticking every 2 ms while 20,000 entries are appended and
  loaded, over the ticks it makes in the same time on an idle loop: the share of the loop the store's
  calls leave to the rest of the program (the calls run in worker threads).

`--check` exits with status 1 when the demo costs more than `DEMO_RUNS` one-turn runs or the store leaves
less than `LOOP_SHARE` of the loop.

Run: python benchmarks/bench_speed.py [--check]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import anyio

DEMO_RUNS = 40.0
"""The most one-turn CLI runs the demo may cost (24 on a 2-core machine at load average 17)."""
LOOP_SHARE = 0.1
"""The least share of the event loop the store's calls must leave free."""
TICK = 0.002


async def one_turn() -> float:
    """Seconds of one scripted run of one turn through the real CLI (its start included)."""
    from flower.testing import ScriptedModel

    with tempfile.TemporaryDirectory() as workspace:
        async with ScriptedModel(main=["done"]) as model:
            started = time.perf_counter()
            run = await model.run("Go.", cwd=workspace)
            seconds = time.perf_counter() - started
    if run.text != "done":
        raise SystemExit(f"the one-turn run did not go as scripted: {run.error}")
    return seconds


async def demo() -> float:
    """Seconds of the whole demo, both runs, the reports and the verdict (its output discarded)."""
    from flower._demo import run_demo

    started = time.perf_counter()
    result = await run_demo(out=lambda line: None)
    if not result.ok:
        raise SystemExit("the demo failed")
    return time.perf_counter() - started


async def ticks_while(idle: float | None = None) -> tuple[int, float]:
    """Ticks of a 2 ms heartbeat during 20,000 appends and a load, or during an idle sleep of `idle`
    seconds, and the seconds they spanned."""
    from flower.stores import SqliteSessionStore

    key = {"project_key": "proj", "session_id": "sess"}
    batch = [{"type": "user", "uuid": f"u{n}", "body": "x" * 200} for n in range(20_000)]
    ticks = 0

    async def heartbeat() -> None:
        nonlocal ticks
        while True:
            await anyio.sleep(TICK)
            ticks += 1

    with tempfile.TemporaryDirectory() as tmp:
        async with SqliteSessionStore(Path(tmp) / "sessions.db") as store, anyio.create_task_group() as tg:
            tg.start_soon(heartbeat)
            started = time.perf_counter()
            if idle is None:
                await store.append(key, batch)  # type: ignore[arg-type]
                await store.load(key)  # type: ignore[arg-type]
            else:
                await anyio.sleep(idle)
            elapsed = time.perf_counter() - started
            tg.cancel_scope.cancel()
    return ticks, elapsed


async def measure() -> tuple[float, float, float, int, int]:
    """The one-turn run, the demo, the store's work and its ticks, then as many idle ticks."""
    turn = await one_turn()
    whole = await demo()
    busy, work = await ticks_while()
    idle, _ = await ticks_while(idle=work)
    return turn, whole, work, busy, idle


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 past DEMO_RUNS or under LOOP_SHARE")
    args = parser.parse_args()
    turn, whole, work, busy, idle = anyio.run(measure)
    runs, share = whole / turn, busy / max(idle, 1)
    print("| measure | value | ratio |")
    print("|---|---:|---:|")
    print(f"| one scripted one-turn run through the CLI | {turn:.1f} s | 1 |")
    print(f"| `flower demo` | {whole:.1f} s | {runs:.1f} one-turn runs (at most {DEMO_RUNS:g}) |")
    print(
        f"| heartbeat ticks while 20,000 entries are appended and loaded ({work:.2f} s) | {busy} of {idle} "
        f"on an idle loop | {share:.2f} of the loop free (at least {LOOP_SHARE:g}) |"
    )
    if args.check and (runs > DEMO_RUNS or share < LOOP_SHARE):
        raise SystemExit("bench_speed: past a bound (see the table)")


if __name__ == "__main__":
    main()
