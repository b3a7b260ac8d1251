"""The glance jail: a command the coordinator runs itself is harmless because the kernel says so.

Glance's parser decides which Bash commands the coordinator may run itself; the jail makes a command it
wrongly accepts harmless anyway. The delegation wall hands the CLI, through the PreToolUse hook's
`updatedInput`, not the model's command but `jail_command(command)`: a call of the launcher (`run.py`,
standard library only), which confines itself and then runs `<the CLI's shell> -c <command>`:

- Linux: Landlock (no write, create, remove, rename or link anywhere but /dev/null; no read under /dev
  but null and random; no TCP; no signal or abstract socket outside), seccomp (no socket at all, no
  identity, capability, namespace, mount, metadata, IPC, keyring, io_uring, ptrace or `setsid` call),
  capabilities dropped, no_new_privs, and limits on CPU, memory, processes, output and wall time, the
  whole process group killed at the end;
- macOS: `sandbox-exec` with a deny-writes, deny-network profile, and the same limits (untested);
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

from ._kernel.common import EXIT_MEMORY, EXIT_OUTPUT, EXIT_REFUSED, EXIT_TIMEOUT
from ._kernel.confine import landlock_abi

__all__ = [
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
    """Memory of each process (RLIMIT_DATA on Linux: heap, stacks and private writable mappings, so that
    mapped files and reserved address space, which git and node use, do not count)."""
    memory_bytes: int = 1 << 30
    """Anonymous memory of all the command's processes together, summed by the launcher every 50 ms once
    the command has more than one process (exit 137)."""
    processes: int = 128
    """Processes the command may start in all (each `fork`, or `clone` without CLONE_THREAD)."""
    threads: int = 256
    """Threads, over all its processes (Linux). Each thread's stack counts in its process's data limit."""
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
                "--data", str(int(self.data_bytes)), "--memory", str(int(self.memory_bytes)),
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
    """What an older kernel covers by a stand-in (signals limited by seccomp below Landlock ABI 6...)."""
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
            [interpreter, "-I", "-S", str(LAUNCHER), "--wall", "20", "--b64", encoded],
            capture_output=True, timeout=60, stdin=subprocess.DEVNULL, cwd="/", check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError) as error:
        return unavailable(reason=f"the launcher did not start: {error}")
    if trial.returncode != 0 or trial.stdout.strip() != b"jail-ok":
        why = (trial.stderr or trial.stdout).decode(errors="replace").strip().splitlines()
        return unavailable(reason=why[-1] if why else f"the trial run exited {trial.returncode}")
    return JailSupport(
        available=True, platform=platform, mechanism=mechanism, landlock_abi=abi, notes=tuple(notes)
    )
