"""The processes a run started, read from /proc: the runner's tree before a kill, and which still live.

A process is named by its pid and its start time (a pid the kernel hands out again is another process),
and one that is a zombie is dead: its parent has only not collected it yet.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from flower.testing import hang_guard

LINUX = sys.platform.startswith("linux")


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    start: int
    """Clock ticks after boot (field 22 of /proc/PID/stat)."""
    state: str
    command: str


def table() -> dict[int, Proc]:
    """Every process of the machine."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_bytes()
            raw = Path(f"/proc/{name}/cmdline").read_bytes()
        except OSError:
            continue  # gone meanwhile
        fields = stat.rsplit(b")", 1)[1].split()
        command = raw.replace(b"\0", b" ").decode(errors="replace").strip()
        found[int(name)] = Proc(int(name), int(fields[1]), int(fields[19]), fields[0].decode(), command)
    return found


def tree(root: int) -> list[Proc]:
    """`root` and every process below it (those not dead yet)."""
    everything = table()
    children: dict[int, list[int]] = {}
    for proc in everything.values():
        children.setdefault(proc.ppid, []).append(proc.pid)
    out: list[Proc] = []
    todo = [root]
    while todo:
        pid = todo.pop()
        found = everything.get(pid)
        if found is not None and found.state != "Z":
            out.append(found)
        todo.extend(children.get(pid, []))
    return out


def alive(procs: list[Proc]) -> list[Proc]:
    """Those of `procs` still running (the same pid and start time, not a zombie)."""
    now = table()
    return [p for p in procs if (q := now.get(p.pid)) is not None and q.start == p.start and q.state != "Z"]


def wait_for(root: int, test: Callable[[Proc], bool], ended: Callable[[], bool]) -> list[Proc]:
    """Wait until a process below `root` passes `test`; the tree then. The hang guard bounds the wait, and
    a runner that `ended` first fails it."""
    deadline = time.monotonic() + hang_guard()
    while time.monotonic() < deadline:
        procs = tree(root)
        if any(test(p) for p in procs):
            return procs
        assert not ended(), "the runner ended before the process awaited started"
        time.sleep(0.05)
    raise AssertionError(f"no process below {root} passed the test within the hang guard")


def wait_gone(procs: list[Proc], *, poll: float = 0.05) -> float:
    """Wait until none of `procs` runs; the seconds it took. The hang guard bounds the wait."""
    started = time.monotonic()
    deadline = started + hang_guard()
    while (left := alive(procs)) and time.monotonic() < deadline:
        time.sleep(poll)
    assert not left, "still running after the hang guard: " + "; ".join(
        f"{p.pid} {p.command[:80]}" for p in left
    )
    return time.monotonic() - started
