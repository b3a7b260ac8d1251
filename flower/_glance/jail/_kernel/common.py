"""What the Linux and macOS launchers share: arguments, shell, environment, and the supervising relay.

The relay runs in the launcher, outside the jail. It copies the command's pipe(s) to the launcher's own
standard output and error, cuts them at the output limit, answers the process counter (Linux), sums the
memory of the command's processes (Linux), and kills the command's whole process group with SIGKILL when
the shell ends (so that no background job outlives its glance), at the deadline, once the output is cut,
or when the processes together hold more memory than the budget. How the command ended is then said in a
note from the launcher's own account (`[glance: …]`, the last line), never read from an exit status the
command could choose (`exit 124`).
"""

from __future__ import annotations

import binascii
import os
import select
import time

from .confine import Limits
from .reads import ENVIRONMENT

TYPE_CHECKING = False  # not `typing`: importing it costs the launcher milliseconds at every glance

if TYPE_CHECKING:
    import signal
    from collections.abc import Callable
else:  # `signal` imports `enum`, which costs the launcher 10-20 ms at every glance
    import _signal as signal

__all__ = [
    "EXIT_MEMORY", "EXIT_OUTPUT", "EXIT_REFUSED", "EXIT_TIMEOUT", "REPORT", "Account", "Options", "Shell",
    "environment", "exited", "kill_group", "parse", "refuse", "same_file", "shell_argv", "stop_on_signals",
    "supervise", "write_all",
]  # fmt: skip

EXIT_TIMEOUT, EXIT_REFUSED, EXIT_MEMORY, EXIT_OUTPUT = 124, 125, 137, 141
REPORT = "glance jail report: "
"""The start of each line of `--report` (how the command is isolated), on standard error."""
GIT = {  # read by every git the command starts (GIT_CONFIG_COUNT): no hook, no lock, no transport
    "core.fsmonitor": "",
    "diff.autoRefreshIndex": "false",
    "safe.bareRepository": "explicit",
    "protocol.allow": "never",
    "gc.auto": "0",
    "maintenance.auto": "false",
}
MEMORY_CHECK_SECONDS = 0.05
"""How often the memory of the command's processes is summed."""
_URLSAFE = bytes.maketrans(b"-_", b"+/")
_FLAGS = {
    "--wall": ("wall_seconds", float), "--cpu": ("cpu_seconds", int), "--data": ("data_bytes", int),
    "--memory": ("memory_bytes", int), "--processes": ("processes", int), "--threads": ("threads", int),
    "--output": ("output_bytes", int), "--shell": ("shell", str), "--abi": ("max_abi", int),
    "--stack": ("stack_bytes", int), "--address": ("address_bytes", int), "--namespaces": ("namespaces", int),
    "--report": ("report", int), "--b64": ("b64", str),
}  # fmt: skip


class Options:
    """The launcher's parsed command line."""

    def __init__(self, command: str, shell: str, limits: Limits, max_abi: int, namespaces: bool = True,
                 report: bool = False) -> None:  # fmt: skip
        self.command, self.shell, self.limits, self.max_abi = command, shell, limits, max_abi
        self.report = report
        """Whether to say on standard error, in lines starting with `REPORT`, how the command is isolated
        (the availability probe's trial run asks)."""
        self.namespaces = namespaces
        """Whether to run the command in namespaces of its own where the system allows (`--namespaces 0`:
        never, as on a system without them; for tests)."""


def parse(argv: list[str]) -> Options:
    """`--name value` pairs (no argparse: it imports `re` and `gettext`); `--b64` is required."""
    if len(argv) % 2:
        raise ValueError("every option needs a value")
    found: dict[str, object] = {}
    for flag, value in zip(argv[::2], argv[1::2], strict=True):
        if flag not in _FLAGS:
            raise ValueError(f"unknown option {flag}")
        name, kind = _FLAGS[flag]
        found[name] = kind(value)
    if "b64" not in found:
        raise ValueError("--b64 COMMAND is required")
    command = binascii.a2b_base64(str(found.pop("b64")).encode("ascii").translate(_URLSAFE)).decode("utf-8")
    shell = _shell(str(found.pop("shell", "auto")))
    max_abi = int(str(found.pop("max_abi", 1 << 30)))
    namespaces, report = bool(found.pop("namespaces", 1)), bool(found.pop("report", 0))
    for key, number in found.items():
        if number <= 0:  # type: ignore[operator]
            raise ValueError(f"{key} must be positive")
    return Options(command, shell, Limits(**found), max_abi, namespaces, report)  # type: ignore[arg-type]


def _shell(choice: str) -> str:
    """`auto`: the program that started the launcher (the CLI's own shell), else $SHELL, bash, zsh."""
    candidates = [choice] if choice != "auto" else []
    if choice == "auto":
        try:  # noqa: SIM105 - contextlib costs the launcher an import
            candidates.append(os.readlink(f"/proc/{os.getppid()}/exe"))
        except OSError:
            pass
        candidates += [os.environ.get("SHELL", ""), "/bin/bash", "/bin/zsh", "/usr/bin/zsh"]
    for path in candidates:
        name = os.path.basename(path)
        if os.path.isabs(path) and name.startswith(("bash", "zsh")) and os.access(path, os.X_OK):
            return path
    raise ValueError(f"no bash or zsh to run the command with (tried {', '.join(map(repr, candidates))})")


def shell_argv(shell: str, command: str) -> list[str]:
    """`<shell> -c <command>`, started as the CLI starts its own: bash reads $BASH_ENV, zsh its zshenv
    files (inside the jail, where they can do no harm). The CLI's snapshot of aliases and functions is
    not sourced: a glance runs the programs themselves."""
    return [shell, "-c", command]


def environment() -> dict[str, str]:
    """The command's environment: the launcher's variables named in `ENVIRONMENT` (nothing else: no
    credential of the CLI or the app), and git's read-only settings."""
    env = {key: os.environ[key] for key in ENVIRONMENT if key in os.environ}
    for index, (key, value) in enumerate(GIT.items()):
        env[f"GIT_CONFIG_KEY_{index}"], env[f"GIT_CONFIG_VALUE_{index}"] = key, value
    env["GIT_CONFIG_COUNT"] = str(len(GIT))
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def refuse(reason: str) -> int:
    os.write(2, f"glance jail: {reason}; the command was not run.\n".encode())
    return EXIT_REFUSED


def same_file(a: int, b: int) -> bool:
    try:
        first, second = os.fstat(a), os.fstat(b)
    except OSError:
        return False
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


def kill_group(pid: int) -> None:
    """SIGKILL the group `pid` leads (every process of the command), and `pid` itself if not yet a leader."""
    try:  # noqa: SIM105 - contextlib costs the launcher an import
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    try:  # noqa: SIM105 - contextlib costs the launcher an import
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def stop_on_signals(pid: int) -> None:
    """If the launcher is told to stop (the CLI interrupting the call), the command stops with it."""

    def stop(number: int, _frame: object) -> None:
        kill_group(pid)
        os._exit(128 + number)

    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, stop)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BrokenPipeError:
            return


def exited(pid: int) -> bool:
    """Whether `pid` has exited, leaving it a zombie: its process group id stays reserved for `killpg`."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


class Shell:
    """The command's shell as the launcher's own child: whether it ended, and how (wait status, CPU s)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def ended(self) -> bool:
        return exited(self.pid)

    def status(self) -> tuple[int, float]:
        """Its wait status and the CPU seconds it and the children it waited for used (blocks)."""
        _, status, usage = os.wait4(self.pid, 0)
        return status, usage.ru_utime + usage.ru_stime


_NOTES = {
    EXIT_TIMEOUT: "[glance: stopped after {wall:g} s, the time limit of a glance: delegate a longer command]",
    EXIT_OUTPUT: "[glance: output cut at {output:,} bytes and the command stopped: narrow it or delegate it]",
    EXIT_MEMORY: "[glance: stopped at {memory:,} MiB of memory, the memory limit of a glance: delegate it]",
}
_CPU = "[glance: stopped at {cpu} s of CPU, the CPU limit of a glance: delegate it]"
_CRASH = (
    "[glance: the command was killed by {name}, which is how a process ends past a memory limit of a glance "
    "({stack:,} MiB of stack, {data:,} MiB of data, {address:,} MiB of address space): delegate it]"
)
_SIGNAL = "[glance: the command was killed by {name}]"
_SIGNALS = {getattr(signal, name, -1): name for name in (
    "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS", "SIGFPE", "SIGKILL", "SIGUSR1",
    "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM", "SIGXCPU", "SIGXFSZ", "SIGSYS",
)}  # fmt: skip


class Account:
    """What the launcher knows of the command beyond its pipes (Linux): each callable may be None.

    `memory()`: the bytes of memory the command's processes hold now (`memory.held`); `oom()`: whether the
    kernel killed one of them at the memory limit of a control group; `refused()`: how many process or
    thread creations the budget refused.
    """

    def __init__(self, memory: Callable[[], int] | None = None, oom: Callable[[], bool] | None = None,
                 refused: Callable[[], int] | None = None) -> None:  # fmt: skip
        self.memory, self.oom, self.refused = memory, oom, refused


def supervise(group: int, pipes: list[int], err_r: int | None, limits: Limits, started: float, *,
              shell: Shell, watch: dict[int, Callable[[], bool]], tick: float | None,
              account: Account | None = None) -> int:  # fmt: skip
    """Relay `pipes` until `shell` ended and they closed, within the limits; return the exit status.

    `group` is the command's process group (every process of it is killed at the end). `watch` maps
    more descriptors to a call made when they are readable, which returns whether to keep watching (the
    Linux process counter; a pidfd or a pipe that wakes the loop when the shell exits). Without such a
    descriptor, `tick` seconds bound each wait so that the shell's end is noticed. The last line written
    is the launcher's note when it ended the command, or saw it end by a signal or at a budget.
    """
    account = account or Account()
    memory = account.memory
    poller = select.poll()
    for fd in [*pipes, *watch]:
        poller.register(fd, select.POLLIN)
    open_pipes, written, outcome, finished = set(pipes), 0, 0, False
    deadline = started + limits.wall_seconds
    checked = started
    while open_pipes or not finished:
        now = time.monotonic()
        left = deadline - now
        if left <= 0:
            outcome = EXIT_TIMEOUT
            break
        if memory is not None and now - checked >= MEMORY_CHECK_SECONDS:
            checked = now
            if memory() > limits.memory_bytes:
                outcome = EXIT_MEMORY
                break
        wait = left if tick is None else min(left, tick)
        if memory is not None:
            wait = min(wait, MEMORY_CHECK_SECONDS)
        for fd, _event in poller.poll(wait * 1000):
            if fd in watch:
                if not watch[fd]():
                    poller.unregister(fd)
                    del watch[fd]
            elif fd in open_pipes:
                data = os.read(fd, 1 << 16)
                if not data:
                    open_pipes.discard(fd)
                    poller.unregister(fd)
                    continue
                room = limits.output_bytes - written
                write_all(2 if fd == err_r else 1, data[:room])
                written += min(len(data), room)
                if len(data) > room:
                    outcome = EXIT_OUTPUT
                    break
        if outcome:
            break
        if not finished and shell.ended():
            finished = True
            kill_group(group)  # its leader is a zombie, its group id still ours: end the background jobs
    kill_group(group)
    status, cpu = shell.status()
    code, note = _ending(outcome, status, cpu, limits, account)
    refused = account.refused() if account.refused is not None else 0
    if refused and not outcome:
        note = (f"[glance: {refused} process or thread creation{'s' * (refused > 1)} refused, past the "
                f"{limits.processes} processes and {limits.threads} threads at once of a glance]") + (
                    f"\n{note}" if note else "")  # fmt: skip
    if note:
        write_all(2, f"\n{note}\n".encode())
    return code


def _ending(outcome: int, status: int, cpu: float, limits: Limits, account: Account) -> tuple[int, str]:
    """The launcher's exit status and its note: its own limits first, then a signal, then the shell's
    exit status (with no note: the command chose it)."""
    if not outcome and account.oom is not None and account.oom():
        outcome = EXIT_MEMORY
    if outcome:
        mib = 1 << 20
        note = _NOTES[outcome].format(
            wall=limits.wall_seconds, output=limits.output_bytes, memory=limits.memory_bytes // mib
        )
        return outcome, note
    code = os.waitstatus_to_exitcode(status)
    if code >= 0:
        return code, ""
    number = -code
    name = _SIGNALS.get(number, f"signal {number}")
    if number == signal.SIGXCPU or (number == signal.SIGKILL and cpu >= limits.cpu_seconds):
        return 128 + number, _CPU.format(cpu=int(limits.cpu_seconds))
    if number in (signal.SIGSEGV, signal.SIGBUS):
        mib = 1 << 20
        sizes = {"stack": limits.stack_bytes // mib, "data": limits.data_bytes // mib}
        return 128 + number, _CRASH.format(name=name, address=limits.address_bytes // mib, **sizes)
    return 128 + number, _SIGNAL.format(name=name)
