"""What the glance jail costs a glance: wall time of a command run as the CLI runs it, jailed and not.

Run from the repository root: `python benchmarks/bench_jail.py [--runs 30]`. Each row runs `<shell> -c
TEXT` the way the CLI's Bash tool does, with TEXT the command itself (`bash -c`, no jail) or
`jail_command(command)` (what the delegation wall hands the CLI): the launcher starts, confines itself and
runs the same shell on the command. The two runs of a row alternate, so that the load of the machine falls
on both alike, and the row's **ratio** is the jailed median over the plain one, measured in the same run;
so is the ratio of their CPU time (user and system, of the process tree), which the machine's load
disturbs less than wall time. Then the launcher's own start (`python -I -S`, its imports) apart from the
rest, and how long the command's processes outlive a launcher killed with SIGKILL (`sleep 600 & sleep
600 & wait`), in a PID namespace and with the watcher (`--namespaces 0`), polled every millisecond.

A benchmark, not a test: it asserts nothing. It needs a machine with a jail (`flower doctor` says).
"""

from __future__ import annotations

import argparse
import base64
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from flower._glance import JailLimits, jail_command, jail_support
from flower._glance.jail import LAUNCHER

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = {
    "true": "true",
    "git status --short": "git status --short",
    "ls -la | head -5": "ls -la | head -5",
    "grep -rn TODO flower | wc -l": "grep -rn TODO flower | wc -l",
}


def _once(argv: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user and system of it and every process it waited for), in milliseconds."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)  # fmt: skip
    _, status, usage = os.wait4(process.pid, 0)
    if status:
        raise SystemExit(f"{argv!r} failed ({status})")
    return (time.perf_counter() - started) * 1000, (usage.ru_utime + usage.ru_stime) * 1000


def paired(first: list[str], second: list[str], runs: int) -> tuple[list[tuple[float, float]], ...]:
    """`runs` (wall, CPU) times in milliseconds of each argv, run one after the other in turn."""
    a, b = [], []
    for _ in range(runs):
        a.append(_once(first))
        b.append(_once(second))
    return a, b


GIVE_UP = 10.0
"""Seconds after which processes still left by a killed launcher are counted as left running."""


def _session(sid: int) -> list[int]:
    """The live processes of the session `sid` (the command's: every process of it stays there)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] != "Z":
                found.append(int(entry))
    return found


def _children(pid: int) -> list[int]:
    return [int(word) for word in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def survival_ms(namespaces: bool) -> float:
    """Milliseconds from SIGKILL of the launcher until no process of its command is left."""
    command = jail_command("sleep 600 & sleep 600 & wait", limits=JailLimits(wall_seconds=60))
    command += "" if namespaces else " --namespaces '0'"
    outer = subprocess.Popen(["bash", "-c", command + " && :"], cwd=ROOT, stdin=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)  # fmt: skip
    started = time.perf_counter()
    while True:  # the launcher's child leads the command's session: the shell and its two sleeps
        if outer.poll() is not None or time.perf_counter() - started > GIVE_UP:
            return float("nan")  # the launcher refused (an older flower, without `--namespaces`)
        launchers = _children(outer.pid)
        sessions = [child for launcher in launchers for child in _children(launcher)]
        if sessions and len(_session(sessions[0])) >= 3:
            break
        time.sleep(0.01)
    os.kill(launchers[0], signal.SIGKILL)
    killed = time.perf_counter()
    while (left := _session(sessions[0])) and time.perf_counter() - killed < GIVE_UP:
        time.sleep(0.001)
    gone = time.perf_counter()
    for pid in left:  # a jail that leaves them running (an older flower): end them here
        os.kill(pid, signal.SIGKILL)
    outer.wait()
    return (gone - killed) * 1000 if not left else float("inf")


def _cell(times: list[float]) -> str:
    return f"{statistics.median(times):.1f} ({statistics.quantiles(times, n=10)[-1]:.1f})"


def _ratio(jailed: list[float], plain: list[float]) -> float:
    return statistics.median(jailed) / statistics.median(plain)


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
    print("\n| command | shell | `bash -c`: median ms (p90) | jailed: median ms (p90) | ratio "
          "| CPU ms: plain, jailed | CPU ratio |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|---:|")
    ratios, cpu_ratios = [], []
    for label, command in COMMANDS.items():
        for shell in shells:
            jailed_argv = [shell, "-c", jail_command(command) + " && :"]
            plain, jailed = paired([shell, "-c", command + " && :"], jailed_argv, runs)
            walls = [[wall for wall, _ in times] for times in (plain, jailed)]
            cpus = [[cpu for _, cpu in times] for times in (plain, jailed)]
            ratios.append(_ratio(walls[1], walls[0]))
            cpu_ratios.append(_ratio(cpus[1], cpus[0]))
            name = os.path.basename(shell)
            cpu = f"{statistics.median(cpus[0]):.1f}, {statistics.median(cpus[1]):.1f}"
            cell = label.replace("|", "\\|")  # a pipe in a Markdown table cell
            print(f"| `{cell}` | {name} | {_cell(walls[0])} | {_cell(walls[1])} | {ratios[-1]:.1f}"
                  f" | {cpu} | {cpu_ratios[-1]:.1f} |")  # fmt: skip
    load = os.getloadavg()[0]
    print(f"\nMedian ratio over the rows: {statistics.median(ratios):.1f} (wall), "
          f"{statistics.median(cpu_ratios):.1f} (CPU); load {load:.1f} at the end.")  # fmt: skip
    encoded = base64.urlsafe_b64encode(b"true").decode()
    bare, launcher = paired([sys.executable, "-I", "-S", "-c", "pass"],
                            [sys.executable, "-I", "-S", str(LAUNCHER), "--b64", encoded], runs)  # fmt: skip
    print("\n| the launcher alone | wall: median ms (p90) | min ms | CPU ms (median) |")
    print("|---|---:|---:|---:|")
    for what, pairs in (("`python -I -S -c pass` (the interpreter's start)", bare),
                        ("the launcher running `true` (no outer shell)", launcher)):  # fmt: skip
        elapsed = [wall for wall, _ in pairs]
        used = statistics.median(each for _, each in pairs)
        print(f"| {what} | {_cell(elapsed)} | {min(elapsed):.1f} | {used:.1f} |")
    print("\n| the launcher killed (SIGKILL) | runs | processes left after: median ms | max ms |")
    print("|---|---:|---:|---:|")
    for mechanism, namespaces in (("PID namespace", True), ("watcher (`--namespaces 0`)", False)):
        kept = [survival_ms(namespaces) for _ in range(max(3, runs // 3))]
        print(f"| {mechanism} | {len(kept)} | {statistics.median(kept):.1f} | {max(kept):.1f} |")


if __name__ == "__main__":
    main()
