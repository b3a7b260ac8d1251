"""What the glance jail costs a glance: median wall time of a command run as the CLI runs it, jailed and not.

Run from the repository root: `python benchmarks/bench_jail.py [--runs 30]`. Each row runs `<shell> -c
TEXT` the way the CLI's Bash tool does, with TEXT the command itself (no jail) or `jail_command(command)`
(what the delegation wall hands the CLI): the launcher starts, confines itself and runs the same shell on
the command. Prints one markdown table; the jail's overhead is the difference of the medians. A benchmark,
not a test: it asserts nothing. It needs a machine with a jail (`flower doctor` says).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from flower.glance import jail_command, jail_support

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = {
    "true": "true",
    "git status --short": "git status --short",
    "ls -la | head -5": "ls -la | head -5",
    "grep -rn TODO flower | wc -l": "grep -rn TODO flower | wc -l",
}


def median_ms(argv: list[str], runs: int) -> tuple[float, float]:
    """Median and 90th percentile, in milliseconds, of `runs` runs of `argv` from the repository root."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)  # fmt: skip
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), statistics.quantiles(times, n=10)[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    runs = parser.parse_args().runs
    support = jail_support()
    if not support.available:
        raise SystemExit(f"no glance jail on this machine: {support.reason}")
    shells = [path for path in (shutil.which("bash"), shutil.which("zsh")) if path]
    load = os.getloadavg()[0]
    python = sys.version.split()[0]
    print(f"{runs} runs each; {os.cpu_count()} CPUs, load {load:.1f}; {support.describe()}; Python {python}")
    print("\n| command | shell | plain: median ms (p90) | jailed: median ms (p90) | overhead ms |")
    print("|---|---|---:|---:|---:|")
    baseline = median_ms([sys.executable, "-I", "-S", "-c", "pass"], runs)[0]
    for label, command in COMMANDS.items():
        for shell in shells:
            plain = median_ms([shell, "-c", command + " && :"], runs)
            jailed = median_ms([shell, "-c", jail_command(command) + " && :"], runs)
            name = os.path.basename(shell)
            print(
                f"| `{label}` | {name} | {plain[0]:.1f} ({plain[1]:.1f}) | {jailed[0]:.1f} ({jailed[1]:.1f})"
                f" | {jailed[0] - plain[0]:.1f} |"
            )
    print(f"\nFor scale: `python -I -S -c pass` alone, {baseline:.1f} ms (the launcher's interpreter start).")


if __name__ == "__main__":
    main()
