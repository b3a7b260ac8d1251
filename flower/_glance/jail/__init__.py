"""The glance jail: a command the coordinator runs itself is harmless because the kernel says so.

Glance's parser decides which Bash commands the coordinator may run itself; the jail makes a command it
wrongly accepts harmless anyway. The delegation wall hands the CLI, through the PreToolUse hook's
`updatedInput`, not the model's command but `jail_command(command)`: a call of the launcher (`run.py`,
standard library only), which confines itself and then runs `<the CLI's shell> -c <command>`:

- Linux: an environment by allow-list (`ENVIRONMENT`: no credential of the CLI or the app), Landlock (no
  write, create, remove, rename or link anywhere but /dev/null; reads only of the workspace, the program
  and library trees and the few /etc files programs need, never a home directory or a credential store;
  no TCP; no signal or abstract socket outside), seccomp (no socket at all, no identity, capability,
  namespace, mount, metadata, IPC, keyring, io_uring, ptrace or `setsid` call), every capability
  dropped, no_new_privs, limits on CPU, memory (data, stack, address space, all processes together, a
  control group where the system delegates one), live processes, output and wall time, the whole
  process group killed at the end, and nothing left running if the launcher is killed (a PID namespace
  with a /proc of its own where the system allows, else a watcher);
- macOS: `sandbox-exec` with a deny-writes, deny-network profile that also denies reading home
  directories (but the workspace) and the same credential stores, the same environment and limits
  (untested);
- elsewhere, or when a step cannot be applied: the launcher refuses to run the command (exit 125).

Example::

    >>> support = jail_support()
    >>> support.available, support.mechanism
    (True, 'landlock+seccomp')
    >>> print(jail_command("git status"))  # doctest: +ELLIPSIS
    '/usr/bin/python3' '-I' '-S' '/.../run.py' --wall '5' ... --b64 'Z2l0IHN0YXR1cw=='
"""

from __future__ import annotations

import base64
import functools
import os
import subprocess
import sys
from dataclasses import dataclass, fields
from pathlib import Path

from ._kernel.common import EXIT_MEMORY, EXIT_OUTPUT, EXIT_REFUSED, EXIT_TIMEOUT, REPORT
from ._kernel.confine import landlock_abi
from ._kernel.reads import ENVIRONMENT

__all__ = [
    "ENVIRONMENT",
    "EXIT_MEMORY",
    "EXIT_OUTPUT",
    "EXIT_REFUSED",
    "EXIT_TIMEOUT",
    "LAUNCHER",
    "JailLimits",
    "JailSupport",
    "jail_command",
    "jail_support",
]

LAUNCHER = Path(__file__).resolve().with_name("run.py")
"""The launcher script, run by path with `python -I -S` (no site-packages, no user environment)."""


@dataclass(frozen=True, kw_only=True)
class JailLimits:
    """The bounds of one glance. A glance is a look around: seconds, not minutes; kilobytes, not gigabytes."""

    wall_seconds: float = 5.0
    """Wall time until the whole process group is killed (exit 124). The CLI does not bound a main-thread
    command itself: past its timeout it moves the command to the background, where it may run on."""
    cpu_seconds: int = 5
    """CPU time of each process (RLIMIT_CPU)."""
    data_bytes: int = 512 << 20
    """Memory of each process (RLIMIT_DATA on Linux: heap, thread stacks and private writable mappings, so
    that mapped files and reserved address space, which git and node use, do not count)."""
    stack_bytes: int = 8 << 20
    """The main stack of each process (RLIMIT_STACK, hard too: a command cannot raise it, and the data
    limit does not count a stack). Past it, the process is killed by SIGSEGV (Linux, macOS)."""
    address_bytes: int = 4 << 30
    """Address space of each process (RLIMIT_AS, Linux): whatever a mapping is, a process holds no more."""
    memory_bytes: int = 1 << 30
    """Anonymous memory of all the command's processes together, summed by the launcher every 50 ms (exit
    137); where the system delegates a cgroup v2 memory controller, also the limit of the command's own
    control group, which the kernel enforces on everything it charges (Linux)."""
    processes: int = 128
    """Processes of the command alive at once, its shell included: a creation past it fails (EPERM). A
    loop that starts and ends thousands, one after another, is not refused."""
    threads: int = 256
    """Threads alive at once, over all its processes (Linux), beyond each process's first."""
    output_bytes: int = 24_000
    """Standard output and error together, after which the command is stopped (exit 141). Below the CLI's
    inline window (30,000 characters by default): of a longer output the model sees only the start (a 2 KB
    preview, or 5k + 5k of a failed call's first 30k), so the note that says it was cut would be lost."""

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ValueError(f"JailLimits.{item.name} must be a positive number, not {value!r}")

    def arguments(self) -> list[str]:
        """The launcher's options for these limits."""
        return ["--wall", f"{self.wall_seconds:g}", "--cpu", str(int(self.cpu_seconds)),
                "--data", str(int(self.data_bytes)), "--stack", str(int(self.stack_bytes)),
                "--address", str(int(self.address_bytes)), "--memory", str(int(self.memory_bytes)),
                "--processes", str(int(self.processes)), "--threads", str(int(self.threads)),
                "--output", str(int(self.output_bytes))]  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class JailSupport:
    """What confinement this machine gives a glance, and why not when it gives none."""

    available: bool
    """A trial command ran in the jail: glances run jailed."""
    platform: str
    """`sys.platform`."""
    mechanism: str
    """`landlock+seccomp`, `sandbox-exec`, or '' when unavailable."""
    landlock_abi: int = 0
    """The Landlock ABI version of the running kernel (0: none, or not Linux)."""
    notes: tuple[str, ...] = ()
    """What this machine's jail does differently: what an older kernel covers by a stand-in (signals
    limited by seccomp below Landlock ABI 6...), whether the command gets a PID namespace and a /proc of
    its own, whether a cgroup v2 memory limit applies and why not."""
    reason: str = ""
    """Why there is no jail ('' when there is one): the launcher's own message from a trial run."""

    def describe(self) -> str:
        """One line for `flower doctor` and the log."""
        if not self.available:
            return f"none ({self.reason}): glance accepts only its core commands"
        abi = f" (Landlock ABI {self.landlock_abi})" if self.landlock_abi else ""
        return f"{self.mechanism}{abi}" + "".join(f"; {note}" for note in self.notes)


def jail_command(command: str, *, limits: JailLimits | None = None, python: str | None = None) -> str:
    """The command line the CLI's shell runs instead of `command`: the launcher, with `command` inside.

    The command travels base64-encoded (URL-safe alphabet) inside single quotes, so the CLI's shell, bash
    or zsh whatever its options, never parses it: only the jailed shell does. The interpreter is this
    process's own (`sys.executable`, a venv's `bin/python` included), named by absolute path, so the
    CLI's PATH does not matter; each word is single-quoted (paths with blanks or quotes). Raises
    `ValueError` without an absolute interpreter path.
    """
    interpreter = python or sys.executable
    if not interpreter or not os.path.isabs(interpreter):
        raise ValueError("jail_command needs the absolute path of a Python interpreter")
    encoded = base64.urlsafe_b64encode(command.encode("utf-8")).decode("ascii")
    bounds = (limits or JailLimits()).arguments()
    words = [interpreter, "-I", "-S", str(LAUNCHER), *bounds, "--b64", encoded]
    return " ".join(word if word.startswith("--") else _quote(word) for word in words)


def _quote(word: str) -> str:
    """Single quotes always (not only when `shlex` sees a need): zsh reads a leading `=` or `~` even in
    words `shlex` leaves bare. A `'` inside is closed, escaped and reopened, which bash and zsh (with or
    without RC_QUOTES) read alike."""
    return "'" + word.replace("'", "'\\''") + "'"


_TRIAL = b"echo jail-ok"


@functools.cache
def jail_support(python: str | None = None) -> JailSupport:
    """Probe once per process: the kernel's features, then a trial run of the launcher (`echo`).

    The trial goes the whole way a glance goes (interpreter, launcher file, every confinement step), so
    an installation the launcher cannot run from (a zip import, an interpreter without ctypes) reads as
    no jail. Never raises.
    """
    platform = sys.platform
    abi = landlock_abi() if platform.startswith("linux") else 0
    notes: list[str] = []
    if platform.startswith("linux"):
        mechanism = "landlock+seccomp"
        if 0 < abi < 3:
            notes.append(
                f"Landlock ABI {abi}: truncation is refused by seccomp (open with O_TRUNC, truncate)"
            )
        if 0 < abi < 4:
            notes.append(f"Landlock ABI {abi}: TCP is refused by seccomp alone (every socket() is)")
        if 0 < abi < 6:
            notes.append(f"Landlock ABI {abi}: signals by seccomp (kill only within the group)")
    elif platform == "darwin":
        mechanism = "sandbox-exec"
        notes.append("macOS: untested profile; no memory limit (macOS enforces none for mmap)")
    else:
        return JailSupport(available=False, platform=platform, mechanism="", reason=f"no jail for {platform}")
    unavailable = functools.partial(
        JailSupport, available=False, platform=platform, mechanism="", landlock_abi=abi, notes=tuple(notes)
    )
    interpreter = python or sys.executable
    if not interpreter or not os.path.isabs(interpreter):
        return unavailable(reason="no absolute path of a Python interpreter to run the launcher with")
    if not LAUNCHER.is_file():
        return unavailable(reason=f"the launcher is not a file ({LAUNCHER})")
    encoded = base64.urlsafe_b64encode(_TRIAL).decode()
    try:
        trial = subprocess.run(
            [interpreter, "-I", "-S", str(LAUNCHER), "--wall", "20", "--report", "1", "--b64", encoded],
            capture_output=True, timeout=60, stdin=subprocess.DEVNULL, cwd="/", check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError) as error:
        return unavailable(reason=f"the launcher did not start: {error}")
    if trial.returncode != 0 or trial.stdout.strip() != b"jail-ok":
        why = (trial.stderr or trial.stdout).decode(errors="replace").strip().splitlines()
        return unavailable(reason=why[-1] if why else f"the trial run exited {trial.returncode}")
    report = [line.removeprefix(REPORT) for line in trial.stderr.decode(errors="replace").splitlines()
              if line.startswith(REPORT)]  # fmt: skip
    return JailSupport(
        available=True, platform=platform, mechanism=mechanism, landlock_abi=abi, notes=(*notes, *report)
    )
