"""Where the money goes: kept recordings' dollars by category, strategy beside strategy.

Run from the repository root, on recordings kept by `run_suite.py --keep DIR`:

    python benchmarks/spend.py DIR                          # flower and flower -delegation, every workload
    python benchmarks/spend.py DIR --clock 35 --only w1,w4  # at 35 s a request, two workloads
    python benchmarks/spend.py DIR OTHER --strategies "flower,mask n10 p10"

Each recording is priced as the suite prices it (`suite/spend.py` says how its tokens are laid over
categories); a strategy's column is the mean over the realistic player's seeds 1-5 (its total is then
its mean cost), so the categories add up.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from suite.runner import SEEDS, load_recording  # noqa: E402
from suite.spend import spend  # noqa: E402


def table(roots: list[Path], key: str, names: list[str], clock: str) -> str:
    """One workload's markdown table: categories by strategy (mean dollars over the seeds found)."""
    columns: dict[str, dict[str, float]] = {}
    counts: dict[str, int] = {}
    for name in names:
        found = [
            path
            for root in roots
            for seed in SEEDS
            for path in [root / key / f"{name.replace(' ', '_')}--realistic{seed}.pkl.gz"]
            if path.exists()
        ]
        per: dict[str, list[float]] = defaultdict(list)
        for path in found:
            for category, dollars in spend(load_recording(path), clock).items():
                per[category].append(dollars)
        if found:
            columns[name] = {c: sum(v) / len(found) for c, v in per.items()}
            counts[name] = len(found)
    if not columns:
        return f"{key.upper()}: no realistic recording of {', '.join(names)}\n"
    categories = sorted(
        {c for col in columns.values() for c in col},
        key=lambda c: -max(col.get(c, 0.0) for col in columns.values()),
    )
    head = " | ".join(f"{n} ({counts[n]} seeds)" for n in columns)
    lines = [
        f"**{key.upper()}**, {clock} clock",
        "",
        f"| category | {head} |",
        "|---|" + "---:|" * len(columns),
    ]
    for category in categories:
        cells = [f"${col.get(category, 0.0):.3f}" for col in columns.values()]
        lines.append(f"| {category} | " + " | ".join(cells) + " |")
    totals = [f"**${sum(col.values()):.3f}**" for col in columns.values()]
    lines.append("| total | " + " | ".join(totals) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", type=Path, nargs="+", help="directories of kept recordings")
    parser.add_argument("--strategies", default="flower,flower -delegation", help="comma-separated names")
    parser.add_argument("--only", default="w1,w2,w3,w4,w5", help="comma-separated workload keys")
    parser.add_argument("--clock", default="calibrated", help="calibrated, stress, or 10, 20, 35, 60")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.strategies.split(",") if n.strip()]
    for key in [k.strip() for k in args.only.split(",") if k.strip()]:
        print(table(args.roots, key, names, args.clock))
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["main", "table"]
