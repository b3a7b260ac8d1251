"""A cgroup v2 memory limit for one glance, where the system delegates the memory controller to the user.

The launcher sums the anonymous memory of the command's processes every 50 ms; a control group counts
everything the kernel charges them (pipe buffers, page tables, kernel objects too) and the kernel enforces
it at once. So where the launcher may create a group with the memory controller (the user's own group
holds `memory` in `cgroup.subtree_control`, or its parent does and is the user's to write, as under
systemd's delegation), each glance gets one: `memory.max` at the memory budget, no swap, and
`memory.oom.group` so that the kernel kills all of the command's processes at once. The command's first
process moves itself in before it is confined. At the end the launcher reads `memory.events` (a kill
there is the memory note) and removes the group.

Where there is none (cgroup v1, or the controller not delegated), `place()` says why, `flower doctor`
shows it, and the launcher's own sum is the bound. Failing to set one up never stops a glance: this is
one more bound, not the only one.
"""

from __future__ import annotations

import os
import time

__all__ = ["enter", "oom_killed", "place", "remove"]

_NAME = "flower-glance-"


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as file:
        return file.read()


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as file:
        file.write(text)


def _own_group() -> str:
    """The directory of this process's cgroup v2 group; raises `OSError` or `LookupError` without one."""
    line = next((line for line in _read("/proc/self/cgroup").splitlines() if line.startswith("0::")), None)
    if line is None:
        raise LookupError("no cgroup v2 hierarchy (cgroup v1 only)")
    for mount in _read("/proc/self/mountinfo").splitlines():
        fields = mount.split(" - ", 1)
        if len(fields) == 2 and fields[1].startswith("cgroup2 "):
            return os.path.normpath(fields[0].split()[4] + "/" + line[3:].strip())
    raise LookupError("the cgroup v2 hierarchy is not mounted")


def place(memory_bytes: int) -> tuple[str | None, str]:
    """Create this glance's group with its memory limit: `(directory, '')`, or `(None, why not)`."""
    try:
        group = _own_group()
    except (OSError, LookupError, IndexError) as error:
        return None, str(error)
    for parent in (group, os.path.dirname(group)):
        try:
            delegated = "memory" in _read(parent + "/cgroup.subtree_control").split()
        except OSError:
            continue
        if not (delegated and os.access(parent + "/cgroup.procs", os.W_OK)):
            continue
        directory = f"{parent}/{_NAME}{os.getpid()}"
        try:
            os.mkdir(directory)
            _write(directory + "/memory.max", str(memory_bytes))
            for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
                if os.path.exists(f"{directory}/{name}"):
                    _write(f"{directory}/{name}", value)
        except OSError as error:
            remove(directory)
            return None, f"a control group could not be set up ({error})"
        return directory, ""
    return None, "the memory controller of cgroup v2 is not delegated to this user's control group"


def enter(directory: str) -> None:
    """Move this process (the command's first) into the group; its children are born there."""
    _write(directory + "/cgroup.procs", "0")


def oom_killed(directory: str) -> bool:
    """Whether the kernel killed a process of the group at its memory limit."""
    try:
        events = dict(line.split() for line in _read(directory + "/memory.events").splitlines())
    except (OSError, ValueError):
        return False
    return int(events.get("oom_kill", "0")) > 0 or int(events.get("oom_group_kill", "0")) > 0


def remove(directory: str) -> None:
    """Remove the group once its processes are gone (killed ones take a moment to be released)."""
    for _ in range(50):
        try:
            os.rmdir(directory)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.002)
