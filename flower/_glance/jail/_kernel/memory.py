"""What the command's processes hold in memory, as the launcher sums it against the memory budget.

Each process is held to its own limits (data, stack, address space), but 128 of them would not be, so
the launcher sums them every 50 ms: the anonymous memory each one holds (`RssAnon`), and the pipes they
hold open. A pipe's buffer is kernel memory that no process limit counts: 100 processes holding 510
full pipes each queued 426 MiB this way. Each distinct pipe counts for 64 KiB, the default size of its
buffer. That is no exact account, but it keeps the bound: a pipe holds more only through
`F_SETPIPE_SZ`, which the kernel grants while the user's pipes stay under `pipe-user-pages-soft` (64 MiB
by default), and past that limit a new pipe gets 8 KiB; so what the sum misses is at most those 64 MiB.

A process whose descriptors cannot be listed (it made itself undumpable, so another process of its user
cannot see them) is counted as if every descriptor it may open held a pipe: fail safe.

Only the standard library: it runs in the launcher before any site-packages are importable.
"""

from __future__ import annotations

import os

__all__ = ["PIPE_BYTES", "held"]

PIPE_BYTES = 64 << 10
"""What one pipe counts for: the default size of its buffer."""


def held(pids: list[int], open_files: int) -> int:
    """The bytes `pids` hold: their anonymous memory, and `PIPE_BYTES` for each pipe they hold open
    (`open_files` descriptors' worth for a process whose descriptors cannot be listed)."""
    total = 0
    pipes: set[str] = set()
    for pid in pids:
        total += _anonymous(pid)
        try:
            names = os.listdir(f"/proc/{pid}/fd")
        except PermissionError:
            total += open_files * PIPE_BYTES
            continue
        except OSError:
            continue  # it just ended
        for name in names:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{name}")
            except OSError:
                continue
            if target.startswith("pipe:"):
                pipes.add(target)
    return total + len(pipes) * PIPE_BYTES


def _anonymous(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", "rb") as file:
            for line in file:
                if line.startswith(b"RssAnon:"):
                    return int(line.split()[1]) << 10
    except (OSError, ValueError):
        pass
    return 0
