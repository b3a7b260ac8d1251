"""The coordinator's cache lifetime, priced on kept recordings of flower's runs: 1 hour, 5 minutes, and 5
minutes kept warm the way `flower._warm` keeps it.

    python benchmarks/run_suite.py --strategies flower --no-scaling --keep DIR   # record (1-hour marks:
                                                                                 # see below)
    python benchmarks/bench_keep_warm.py DIR [--only w1,w4] [--json out.json]

Nothing runs again: each kept recording of `flower` whose coordinator asked for 1-hour marks (a run
with `keep_warm=False`, or with `CLAUDE_CODE_PROMPT_CACHE_TTL=1h` in the environment) is priced under
each clock of the suite's replays (calibrated, 35 s, stress) with the send times drawn for its seed, the
requests unchanged but for their coordinator marks:

- `1h`: as run;
- `5m`: every coordinator mark at 5 minutes, nothing else;
- `warm (page)`: the page's replay (`suite.bounds.kept_warm`): a copy of the coordinator's last request
  for one output token every 270 s, only while more than 5 minutes of the wait are left;
- `warm (flower)`: what `flower._warm` sends, on the suite's simulated clock: pings at flower's own
  schedule (`flower._warm.schedule.ping_times`: 270 s after the last request or ping, as long as the
  coordinator waits on a worker, whatever is left of the wait, at most `ping_limit` a wait), as the suite
  prices flower's own runs (`suite.warm.as_flower`).

A wall-clock run cannot show pings here: the scripted workers answer at once, and the suite's clock is
simulated. Prints one table per clock: each workload's median dollars (over its recordings and seeds)
and the ratios.

    python benchmarks/bench_keep_warm.py --probe

records one real ping through the CLI with the scripted model under each priced model's name (a
coordinator glances, delegates, its worker is held until a ping went out) and prints what the ping read
and wrote in the scripted model's cache beside what the suite's `warm.ping` prices for the same
coordinator request: the two must agree (`suite/warm.py` says what the CLI sends on each model).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from suite import bounds, timing  # noqa: E402
from suite.probes import View  # noqa: E402
from suite.runner import load_recording  # noqa: E402
from suite.trace import Sent, cut, dollars, usages  # noqa: E402
from suite.warm import as_flower  # noqa: E402

from flower._cost import TTL_5M  # noqa: E402
from flower._warm import KeepWarmPolicy  # noqa: E402

VARIANTS = ("1h", "5m", "warm (page)", "warm (flower)")


def _sent(rec: object) -> list[Sent]:
    out = []
    for r in rec.requests:  # type: ignore[attr-defined]
        caller = r.caller if r.caller in ("main", "compact") else "worker"
        view = View(r.body) if caller == "main" else None
        out.append(cut(r.body, caller, r.output_tokens, rec.workload.pad, view))  # type: ignore[attr-defined]
    return out


def price_recording(path: Path, policy: KeepWarmPolicy) -> dict[str, dict[str, float]] | None:
    """Per clock, each variant's median dollars over the recording's drawn send times; None when the
    recording is not a 1-hour flower run."""
    rec = load_recording(path)
    sent = _sent(rec)
    if not bounds.asks_one_hour(sent):
        return None
    idle = [rec.ledger.idle.get(r.seq, 0.0) for r in rec.requests]
    tokens = [s.context for s in sent]
    label = rec.behaviour.label
    seeds = (int(label.split("#")[1]),) if "#" in label else timing.SEEDS
    mains = [i for i, s in enumerate(sent) if s.caller == "main"]
    out: dict[str, dict[str, float]] = {}
    for clock in bounds.CLOCKS:
        per: dict[str, list[float]] = {v: [] for v in VARIANTS}
        for seed in seeds if clock in timing.DRAWN else (0,):
            times = timing.send_times(rec.requests, rec.ledger.idle, clock, seed, tokens)
            five = bounds.with_lifetimes(sent, dict.fromkeys(mains, TTL_5M))
            for name, (found, at) in {
                "1h": (sent, times),
                "5m": (five, times),
                "warm (page)": bounds.kept_warm(sent, times, idle),
                "warm (flower)": as_flower(sent, times, idle, policy),
            }.items():
                per[name].append(dollars(found, usages(found, at)))
        out[clock] = {name: statistics.median(found) for name, found in per.items()}
    return out


async def probe(model_name: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """One real ping under `model_name`: ((read, written) by the CLI's ping, (read, written) by the suite's
    `warm.ping` of the same coordinator request), through one simulated cache each."""
    import tempfile
    import threading

    import anyio
    from suite import warm

    from flower import Runtime, coordinator, worker
    from flower._cost import PromptCache
    from flower.events import Event, KeepWarmPing
    from flower.testing import RecordedRequest, ScriptedModel, agent, bash, reply

    go = threading.Event()
    steps: list[object] = [bash("ls", description="look"), agent("analyst", "count"), "done"]

    def main(request: RecordedRequest) -> object:
        if request.body.get("max_tokens") == 1:
            return reply(".", stop_reason="max_tokens")
        return steps.pop(0) if steps else None

    async def analyst(request: RecordedRequest) -> str:
        await anyio.to_thread.run_sync(lambda: go.wait(600))
        return "REPORT: 42"

    def on_event(event: Event) -> None:
        if isinstance(event, KeepWarmPing):
            go.set()

    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        model = ScriptedModel()
        model.start()
        try:
            model.cache = PromptCache()
            model.script("main", main)
            model.script("analyst", analyst)
            helper = worker(
                "Runs commands and reports.", "You run what you are asked.", tools=["Bash", "Read"]
            )
            lead = coordinator("lead", "Goal: count.", {"analyst": helper}, model=model_name)
            policy = KeepWarmPolicy(interval=1.0, max_pings=1)
            rt = Runtime(workspace, configure=model.attach, keep_warm=policy)
            await rt.run(lead, "Start.", on_event=on_event)
            every = model.requests()
        finally:
            model.stop()
    first = next(r for r in every if r.body.get("max_tokens") == 1)
    cache = PromptCache()
    sent = [
        cut(r.body, r.caller if r.caller == "main" else "worker", 0, 0, None)
        for r in every
        if r.seq < first.seq
    ]
    for s in sent:
        cache.send_blocks(s.blocks, at=0.0, model=s.model)
    mine = warm.ping([s for s in sent if s.caller == "main"][-1], 1)
    used = cache.send_blocks(mine.blocks, at=0.0, model=mine.model)
    real = first.usage or {}
    cli = (int(real.get("cache_read_input_tokens", 0)), int(real.get("cache_creation_input_tokens", 0)))
    return cli, (used.cache_read, used.cache_creation + used.input)


def _probe() -> None:
    import anyio
    from suite.pricing import ROWS

    for row in ROWS:
        cli, suite = anyio.run(probe, row.model)
        agree = "agree" if cli == suite else "DIFFER"
        print(
            f"{row.model}: the CLI's ping read {cli[0]:,} and wrote {cli[1]:,} tokens; the suite's "
            f"{suite[0]:,} and {suite[1]:,} ({agree})"
        )


def main() -> None:
    if "--probe" in sys.argv[1:]:
        _probe()
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("recordings", type=Path, help="a directory kept by run_suite.py --keep")
    parser.add_argument("--only", default="", help="comma-separated workload keys (w1..w5)")
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args()
    policy = KeepWarmPolicy()
    only = {w.strip().lower() for w in args.only.split(",") if w.strip()}
    found: dict[str, list[dict[str, dict[str, float]]]] = {}
    for path in sorted(args.recordings.glob("*/flower--*.pkl.gz")):
        workload = path.parent.name
        if only and workload not in only:
            continue
        priced = price_recording(path, policy)
        if priced is None:
            print(f"{path.relative_to(args.recordings)}: not a 1-hour flower run, left out", file=sys.stderr)
            continue
        found.setdefault(workload, []).append(priced)
        print(f"{path.relative_to(args.recordings)}: priced", file=sys.stderr)
    table: dict[str, dict[str, dict[str, float]]] = {}
    for clock in bounds.CLOCKS:
        print(f"\nclock {clock}: median $ over the recordings (n); ratios of the medians")
        head = " ".join(f"{v:>14s}" for v in VARIANTS)
        print(f"{'workload':9s} {'n':>2s} {head}  flower/1h (max) flower/5m (max)")
        for workload, runs in sorted(found.items()):
            med = {v: statistics.median(run[clock][v] for run in runs) for v in VARIANTS}
            table.setdefault(clock, {})[workload] = med
            row = " ".join(f"{med[v]:>14.4f}" for v in VARIANTS)
            flower = med["warm (flower)"]
            worst = {
                v: max(run[clock]["warm (flower)"] / run[clock][v] for run in runs) for v in ("1h", "5m")
            }
            print(
                f"{workload:9s} {len(runs):>2d} {row}  {flower / med['1h']:>9.3f} ({worst['1h']:.3f})"
                f" {flower / med['5m']:>9.3f} ({worst['5m']:.3f})"
            )
    if args.json:
        args.json.write_text(json.dumps(table, indent=1) + "\n")


if __name__ == "__main__":
    main()
