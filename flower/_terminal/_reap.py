"""The processes a stopped `flower run` leaves behind, found and ended by pid.

The CLI runs each Bash command in a session of its own, and a CLI stopped by Ctrl-C leaves a command
still running (measured: a worker's `sleep` outlived its CLI's SIGINT, reparented away from it). So
`flower run` makes itself the subreaper of what it starts (Linux: `PR_SET_CHILD_SUBREAPER`, so an orphan
of the CLI becomes its child instead of init's), lists its descendants when the stop comes, and after the
run has shut its CLI down ends every descendant left: SIGTERM, then SIGKILL after `grace` seconds. Only
processes this one started (its descendants) are ever signalled, each by its pid, checked against its
start time so a reused pid is never hit. Elsewhere than Linux, `ps` lists the descendants at the stop.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
import time

__all__ = ["become_subreaper", "descendants", "end_all"]

_PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Adopt the orphans of this process's descendants (Linux); False where that is not possible."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, start time) of every process visible."""
    found: dict[int, tuple[int, str]] = {}
    if os.path.isdir("/proc/self"):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as file:
                    fields = file.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            found[int(entry)] = (int(fields[1]), fields[19].decode())  # ppid, starttime
        return found
    try:
        listing = subprocess.run(
            ["ps", "-A", "-o", "pid=", "-o", "ppid=", "-o", "lstart="],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
    except OSError:
        return found
    for line in listing.splitlines():
        parts = line.split(None, 2)
        if len(parts) == 3 and parts[0].isdigit() and parts[1].isdigit():
            found[int(parts[0])] = (int(parts[1]), parts[2].strip())
    return found


def descendants(root: int | None = None) -> dict[int, str]:
    """Every descendant of `root` (default: this process): pid -> its start time."""
    root = os.getpid() if root is None else root
    table = _table()
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found: dict[int, str] = {}
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found[child] = table[child][1]
                todo.append(child)
    return found


def _alive(pids: dict[int, str]) -> dict[int, str]:
    """Those of `pids` still running as the same process (a zombie child of ours is reaped here)."""
    table = _table()
    left = {}
    for pid, started in pids.items():
        with contextlib.suppress(ChildProcessError, OSError):
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                continue
        if pid in table and table[pid][1] == started and not _zombie(pid):
            left[pid] = started
    return left


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            return file.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return False


def end_all(pids: dict[int, str], *, grace: float = 5.0) -> list[int]:
    """End `pids` and every descendant of this process still running: SIGTERM, then SIGKILL to those left
    after `grace` seconds. Returns the pids that had to be signalled."""
    targets = _alive({**pids, **descendants()})
    for pid in targets:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    left = targets
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = _alive(left)
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + grace  # SIGKILL is not refused: only a process stuck in the kernel stays
    while _alive(left) and time.monotonic() < deadline:
        time.sleep(0.05)
    return sorted(targets)
