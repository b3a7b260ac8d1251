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
import os
import signal
import sys
import time

from .._run.supervise import PR_SET_CHILD_SUBREAPER, prctl, processes
from .._run.supervise import descendants as tree

__all__ = ["become_subreaper", "descendants", "end_all"]


def become_subreaper() -> bool:
    """Adopt the orphans of this process's descendants (Linux); False where that is not possible."""
    return sys.platform.startswith("linux") and prctl(PR_SET_CHILD_SUBREAPER, 1)


def descendants(root: int | None = None) -> dict[int, str]:
    """Every descendant of `root` (default: this process): pid -> its start time."""
    found = tree(os.getpid() if root is None else root)
    return {pid: started for pid, (_, _, started) in found.items()}


def _alive(pids: dict[int, str]) -> dict[int, str]:
    """Those of `pids` still running as the same process (a zombie child of ours is reaped here)."""
    table = processes()
    left = {}
    for pid, started in pids.items():
        with contextlib.suppress(ChildProcessError, OSError):
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                continue
        if pid in table and table[pid][2] == started and table[pid][1] != "Z":
            left[pid] = started
    return left


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
