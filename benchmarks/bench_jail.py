"""What the glance jail costs a glance: wall time of a command run as the CLI runs it, jailed and not.

Run from the repository root: `python benchmarks/bench_jail.py [--runs 30]`. Each row runs `<shell> -c
TEXT` the way the CLI's Bash tool does, with TEXT the command itself (`bash -c`, no jail) or
`jail_command(command)` (what the delegation wall hands the CLI): the launcher starts, confines itself and
runs the same shell on the command. The two runs of a row alternate, so that the load of the machine falls
on both alike, and the row's **ratio** is the jailed median over the plain one, measured in the same run.
The last section splits the launcher's own start (`python -I -S`, its imports) from the rest.

A benchmark, not a test: it asserts nothing. It needs a machine with a jail (`flower doctor` says).
"""

from __future__ import annotations

import argparse
import base64
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from flower.glance import jail_command, jail_support
from flower.glance.jail import LAUNCHER

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = {
    "true": "true",
    "git status --short": "git status --short",
    "ls -la | head -5": "ls -la | head -5",
    "grep -rn TODO flower | wc -l": "grep -rn TODO flower | wc -l",
}


def _once(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)  # fmt: skip
    return (time.perf_counter() - started) * 1000


def paired(first: list[str], second: list[str], runs: int) -> tuple[list[float], list[float]]:
    """`runs` wall times in milliseconds of each argv, run one after the other in turn."""
    a, b = [], []
    for _ in range(runs):
        a.append(_once(first))
        b.append(_once(second))
    return a, b


def _cell(times: list[float]) -> str:
    return f"{statistics.median(times):.1f} ({statistics.quantiles(times, n=10)[-1]:.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    runs = parser.parse_args().runs
    support = jail_support()
    if not support.available:
        raise SystemExit(f"no glance jail on this machine: {support.reason}")
    shells = [path for path in (shutil.which("bash"), shutil.which("zsh")) if path]
    python = sys.version.split()[0]
    print(f"{runs} runs each; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} at the start; "
          f"{support.describe()}; Python {python}")  # fmt: skip
    print("\n| command | shell | `bash -c`: median ms (p90) | jailed: median ms (p90) | ratio |")
    print("|---|---|---:|---:|---:|")
    ratios = []
    for label, command in COMMANDS.items():
        for shell in shells:
            jailed_argv = [shell, "-c", jail_command(command) + " && :"]
            plain, jailed = paired([shell, "-c", command + " && :"], jailed_argv, runs)
            ratio = statistics.median(jailed) / statistics.median(plain)
            ratios.append(ratio)
            name = os.path.basename(shell)
            print(f"| `{label}` | {name} | {_cell(plain)} | {_cell(jailed)} | {ratio:.1f} |")
    load = os.getloadavg()[0]
    print(f"\nMedian ratio over the rows: {statistics.median(ratios):.1f}; load {load:.1f} at the end.")
    encoded = base64.urlsafe_b64encode(b"true").decode()
    bare, launcher = paired([sys.executable, "-I", "-S", "-c", "pass"],
                            [sys.executable, "-I", "-S", str(LAUNCHER), "--b64", encoded], runs)  # fmt: skip
    print("\n| the launcher alone | median ms (p90) | min ms |")
    print("|---|---:|---:|")
    print(f"| `python -I -S -c pass` (the interpreter's start) | {_cell(bare)} | {min(bare):.1f} |")
    print(f"| the launcher running `true` (no outer shell) | {_cell(launcher)} | {min(launcher):.1f} |")


if __name__ == "__main__":
    main()
