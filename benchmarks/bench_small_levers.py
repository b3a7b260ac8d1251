"""Small tasks: flower and a lever's variant of it against the cheapest peer, on both price rows, in one
command.

    python benchmarks/bench_small_levers.py --keep DIR --peers PEERS --lever "flower +batch" --only w1,w3
    python benchmarks/bench_small_levers.py --keep DIR --peers PEERS --lever "flower +batch" --priced

The first runs `flower` and the lever's strategy (or several, comma-separated) on the quick workloads
(`run_suite.py --quick --strategies "flower,<lever>" --seeds 1 --keep DIR`, the realistic player) and
prices them; `--priced` only prices what DIR already holds. The fair peers (`runner.QUICK_REALISTIC`
runs that finished, each also with a 1-hour cache, as the suite prices them; realistic seed 1) are read
from PEERS, a directory a quick run kept (`run_suite.py --quick --keep PEERS`): plain runs do not change with
flower's code. Every recording is priced as the suite prices it (`trace.from_recording`): Sonnet 4.6 and
the CLI's default model (Opus 5), each at its tokens per character (`suite.pricing.RATES`), under the
calibrated and the 35 s clock.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from suite import pricing  # noqa: E402
from suite.runner import QUICK_REALISTIC, load_recording  # noqa: E402
from suite.trace import from_recording  # noqa: E402

PLAYER = "realistic1"
CLOCKS = ("calibrated", "35")


def _file(name: str) -> str:
    return f"{name.replace(' ', '_')}--{PLAYER}.pkl.gz"


def costs(path: Path) -> dict[str, float]:
    """All-agent dollars of one kept recording under every price row and clock (`Trace.costs`)."""
    return from_recording(load_recording(path), run_clock="35").costs


def peer_costs(peers: Path, key: str) -> dict[str, dict[str, float]]:
    """The fair quick peers of workload `key` (finished runs), each also with a 1-hour cache
    (`trace.from_recording(one_hour=True)`, as the suite prices that variant): name -> `Trace.costs`."""
    found: dict[str, dict[str, float]] = {}
    for name in (n for n in QUICK_REALISTIC if not n.startswith("flower")):
        path = peers / key / _file(name)
        if not path.exists():
            continue
        rec = load_recording(path)
        if not rec.finished:
            continue
        found[name] = from_recording(rec, run_clock="35").costs
        found[f"{name} (1h cache)"] = from_recording(rec, run_clock="35", one_hour=True).costs
    return found


def table(keep: Path, peers: Path, levers: list[str], keys: list[str]) -> str:
    """flower's and each lever's dollars and their ratios to the cheapest peer, per workload and row."""
    names = ["flower", *levers]
    lines = [
        "| workload | price row | clock | cheapest peer | "
        + " | ".join(names)
        + " | "
        + " | ".join(f"{n} ÷ peer" for n in names)
        + " |",
        "|---|---|---|---|" + "---:|" * (2 * len(names)),
    ]
    for key in keys:
        mine = {name: keep / key / _file(name) for name in names}
        found = peer_costs(peers, key)
        ours = {n: costs(p) for n, p in mine.items() if p.exists()}
        for row in pricing.ROWS:
            for clock in CLOCKS:
                k = pricing.key(clock, row)
                peer = min(found, key=lambda n: found[n][k])
                low = found[peer][k]
                spent = [ours.get(n, {}).get(k) for n in names]
                cells = [f"${c:.3f}" if c else "-" for c in spent]
                cells += [f"{c / low:.2f}" if c else "-" for c in spent]
                name = row.name.split(" (")[0]
                head = f"| {key.upper()} | {name} | {clock} | {peer} ${low:.3f} | "
                lines.append(head + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, required=True, help="where flower's recordings are kept")
    parser.add_argument("--peers", type=Path, required=True, help="a quick run's kept recordings")
    parser.add_argument(
        "--lever",
        required=True,
        help="the variant's strategy name, e.g. 'flower +batch' (several: comma-separated, "
        "'flower +inline 30k,flower +inline 60k')",
    )
    parser.add_argument("--only", default="w1,w2,w3,w4,w5")
    parser.add_argument("--priced", action="store_true", help="price what --keep holds; run nothing")
    args = parser.parse_args()
    keys = [k.strip() for k in args.only.split(",") if k.strip()]
    levers = [n.strip() for n in args.lever.split(",") if n.strip()]
    if not args.priced:
        command = [sys.executable, str(HERE / "run_suite.py"), "--quick", "--only", ",".join(keys)]
        command += ["--strategies", ",".join(["flower", *levers]), "--seeds", "1", "--clock", "35"]
        command += ["--keep", str(args.keep), "--jobs", "1"]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    print(table(args.keep, args.peers, levers, keys))


if __name__ == "__main__":
    main()
