"""The CLI processes still running, to prove a run leaves none behind."""

from __future__ import annotations

import os
from pathlib import Path


def processes_of(root: int) -> dict[int, str]:
    """The descendants of `root` now: pid -> its command line."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    found: dict[int, str] = {}
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            try:
                found[child] = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            todo.append(child)
    return found


def cli_processes() -> list[int]:
    """Descendants of this test process that run the bundled CLI."""
    return [pid for pid, command in processes_of(os.getpid()).items() if "claude" in command]
