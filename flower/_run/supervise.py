"""The supervisor: starts the Claude Code CLI, and ends it with every process it started when its runner dies.

Run by the launcher `flower._run.tether` writes (the SDK's `cli_path`), as `python -I -S`, with the SDK's
arguments; only the standard library and ctypes. Killed with `kill -9`, a runner does not take its CLI with
it: the CLI goes on calling the model, and each Bash call's command runs in a session of its own, so even a
kill of the runner's whole process group leaves that command running to its end. Here:

- the supervisor puts itself in a process group of its own (a kill of the runner's group leaves it alive to
  clean up) and forks the CLI, which goes back into the runner's process group (Ctrl-C reaches it as
  before) and is exec'd with the same arguments, environment, standard streams and signal dispositions
  it would have had from the SDK; the supervisor keeps none of its standard input or output;
- while the CLI starts, the supervisor becomes the child subreaper of what it starts (Linux: a command
  that left its parent, or whose parent died, comes back under it) and asks for a signal when its parent
  dies (Linux, `PR_SET_PDEATHSIG`);
- it watches its parent (the signal, else a look every `POLL` seconds: macOS) and its children. When the
  runner is gone, or the CLI died of a signal, or a stop it was asked for (SIGTERM, SIGINT, SIGHUP,
  SIGQUIT, forwarded to the CLI) is not over within `GRACE` seconds, it freezes then kills every process
  below it, reaps them and exits. When the CLI exits by itself, what the CLI left running is left as it
  would have been, and the supervisor exits with the CLI's status (a signal's death is passed on as one).

If anything fails before the CLI starts, the CLI is exec'd in the supervisor's place: the run goes on, as
it did without one. On macOS there is no subreaper and no parent-death signal: the runner is looked at
every `POLL` seconds and the processes are found with `ps`; a command that already left the CLI's tree
(a double fork) is out of reach there. The supervisor itself killed with SIGKILL (nothing of flower's
does that: it ends a stop within `GRACE`) leaves the CLI to run on.
"""

import os
import select
import sys
import time

TYPE_CHECKING = False  # not `typing`'s: the supervisor starts before every CLI, and each import counts
if TYPE_CHECKING:
    import signal
    from types import TracebackType
    from typing import NoReturn
else:
    try:
        import _signal as signal  # not `signal`: it imports enum, slower than Python's start on a busy host
    except ImportError:
        import signal

POLL = 0.5
"""Seconds between two looks at the parent when no signal wakes the supervisor."""
GRACE = 3.0
"""Seconds a stop the supervisor was asked for leaves the CLI before it is killed with what it started
(under the 5 s the SDK's close waits after its SIGTERM before it sends SIGKILL)."""
SWEEP = 5.0
"""Seconds the supervisor keeps killing and reaping what it started before it gives up on a process."""
STOPS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)
"""Signals passed on to the CLI that ask it to end."""
PASSED = (*STOPS, signal.SIGUSR1, signal.SIGUSR2, signal.SIGWINCH)
"""Signals sent to the supervisor that are passed on to the CLI."""
_PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36
_LINUX = sys.platform.startswith("linux")
_ORPHANED = getattr(signal, "SIGRTMIN", signal.SIGUSR1) + 3 if _LINUX else None
"""The signal the kernel sends when the parent thread ends (Linux)."""


class _suppress:
    """`contextlib.suppress`, without its imports."""

    def __init__(self, *kinds: type[BaseException]) -> None:
        self.kinds = kinds

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: "TracebackType | None"
    ) -> bool:
        return kind is not None and issubclass(kind, self.kinds)


def prctl(option: int, value: int) -> bool:
    """`prctl(option, value)` (Linux); False when it failed or is not there."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _say(text: str) -> None:
    with _suppress(OSError):  # its runner's end may have taken the stream with it
        os.write(2, f"flower supervisor: {text}\n".encode())


def processes() -> "dict[int, tuple[int, str, str]]":
    """Every process visible: pid -> (parent pid, state letter, start time), from /proc (Linux), else
    from `ps`. The start time tells a process from a later one that got its pid (`flower run`'s reaper)."""
    table: dict[int, tuple[int, str, str]] = {}
    if _LINUX:
        try:
            names = [name for name in os.listdir("/proc") if name.isdigit()]
        except OSError:
            names = []  # no /proc mounted here: ask `ps`
        for name in names:
            try:
                with open(f"/proc/{name}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
                table[int(name)] = (int(fields[1]), fields[0].decode(), fields[19].decode())
            except (OSError, IndexError, ValueError):
                continue  # gone meanwhile
        if table:
            return table
    import subprocess

    try:
        listing = subprocess.run(
            ["ps", "-A", "-o", "pid=", "-o", "ppid=", "-o", "stat=", "-o", "lstart="],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return table
    for line in listing.splitlines():
        words = line.split(None, 3)
        if len(words) == 4 and words[0].isdigit() and words[1].isdigit():
            table[int(words[0])] = (int(words[1]), words[2][:1], words[3].strip())
    return table


def descendants(root: int) -> "dict[int, tuple[int, str, str]]":
    """Every process below `root`, as `processes()` lists it (its state "Z" for a zombie)."""
    table = processes()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: dict[int, tuple[int, str, str]] = {}
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        if pid not in found:
            found[pid] = table[pid]
            todo.extend(children.get(pid, []))
    return found


def _signal(pid: int, sig: int) -> None:
    with _suppress(OSError):  # gone
        os.kill(pid, sig)


def reap() -> list[tuple[int, int]]:
    """Collect every child that ended (the CLI, and what came back to the subreaper): (pid, status)."""
    ended: list[tuple[int, int]] = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return ended
        if pid == 0:
            return ended
        ended.append((pid, status))


def sweep(me: int, cli: int) -> list[tuple[int, int]]:
    """Freeze, then kill, every process below `me` (the CLI `cli` first, even when no process list can be
    read; 0 once it was reaped: its pid may be another process's now), and reap what comes back; what was
    reaped."""
    first = [cli] if cli > 0 else []
    for pid in first:
        _signal(pid, signal.SIGSTOP)
    frozen: set[int] = set()
    for _ in range(100):  # stopped, a process starts no other: the tree stops growing
        new = [pid for pid, (_, state, _) in descendants(me).items() if pid not in frozen and state != "Z"]
        if not new:
            break
        for pid in new:
            _signal(pid, signal.SIGSTOP)
        frozen.update(new)
    for pid in (*first, *frozen):
        _signal(pid, signal.SIGKILL)
    ended: list[tuple[int, int]] = []
    deadline = time.monotonic() + SWEEP
    while time.monotonic() < deadline:
        ended += reap()
        alive = [pid for pid, (_, state, _) in descendants(me).items() if state != "Z"]
        for pid in alive:  # an orphan that came back to the subreaper, a process started meanwhile
            _signal(pid, signal.SIGKILL)
        if not alive and not descendants(me):
            break
        time.sleep(0.02)
    return ended + reap()


def _exit_as(status: int) -> "NoReturn":
    """Exit as the CLI did: its code, or the signal that killed it."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        with _suppress(OSError, ValueError):  # SIGKILL has no disposition to set
            signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        with _suppress(OSError):
            os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _exec(cli: str, args: list[str], ignored: list[int]) -> "NoReturn":
    """Become the CLI, with the signal dispositions the SDK's `Popen` gives it."""
    for sig in (signal.SIGPIPE, getattr(signal, "SIGXFSZ", None)):
        if sig is not None:  # Python ignores these; `Popen(restore_signals=True)` gives them back
            signal.signal(sig, signal.SIG_DFL)
    for sig in ignored:  # the runner's choice, kept (exec resets only what has a handler)
        signal.signal(sig, signal.SIG_IGN)
    os.execv(cli, [cli, *args])


class Supervisor:
    """One CLI under watch (see the module's docstring)."""

    def __init__(self, cli: str, args: list[str]) -> None:
        self.cli, self.args = cli, args
        self.me = os.getpid()
        self.runner = os.getppid()
        self.group = os.getpgrp()  # the runner's: the CLI goes back into it
        self.pending: list[int] = []
        self.child = 0
        self.status: int | None = None
        self.stop_at: float | None = None
        self.wake = -1
        self.ignored: list[int] = []

    def _on_signal(self, sig: int, _frame: object) -> None:
        self.pending.append(sig)

    def prepare(self) -> None:
        """What must hold before the CLI starts; raises `OSError` when something cannot be set up."""
        if os.getppid() != self.runner:
            os._exit(137)  # the runner ended before its CLI started: there is no run to serve
        # a kill of the runner's group leaves the supervisor to clean up (a session leader, started with
        # setsid, cannot move: it is alone in its group already)
        with _suppress(OSError):
            os.setpgid(0, 0)
        read, write = os.pipe()
        os.set_blocking(read, False)
        os.set_blocking(write, False)
        self.wake = read
        signal.set_wakeup_fd(write)
        catch = [*PASSED, signal.SIGCHLD, *([_ORPHANED] if _ORPHANED is not None else [])]
        for sig in catch:
            if signal.getsignal(sig) == signal.SIG_IGN and sig in PASSED:
                self.ignored.append(sig)  # the runner's choice (nohup...): the supervisor ignores it too
                continue
            signal.signal(sig, self._on_signal)

    def start(self) -> None:
        pid = os.fork()
        if pid == 0:
            try:
                signal.set_wakeup_fd(-1)
                with _suppress(OSError):  # a group gone with the runner: the CLI dies below
                    os.setpgid(0, self.group)
                _exec(self.cli, self.args, self.ignored)
            except BaseException as exc:
                _say(f"cannot start {self.cli}: {type(exc).__name__}: {exc}")
            os._exit(127)
        self.child = pid
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)  # the CLI's standard streams are its own: end of file when it ends
        os.dup2(null, 1)
        os.close(null)

    def tie(self) -> None:
        """Linux: be the subreaper of what the CLI starts, and be told when the runner's thread ends. Done
        while the CLI starts (loading ctypes takes longer than Python itself on a busy machine); the CLI
        starts no command before it is done, and a runner that died meanwhile is seen by `watch`."""
        if _LINUX:
            prctl(PR_SET_CHILD_SUBREAPER, 1)
            if _ORPHANED is not None:
                prctl(_PR_SET_PDEATHSIG, _ORPHANED)

    def watch(self) -> "NoReturn":
        while True:
            with _suppress(InterruptedError):
                select.select([self.wake], [], [], POLL)
            try:
                while os.read(self.wake, 512):
                    pass
            except OSError:
                pass
            self._pass_signals()
            for pid, status in reap():
                if pid == self.child:
                    self.status = status
            if os.getppid() != self.runner:  # the runner is gone: nothing it started stays
                sweep(self.me, self.child if self.status is None else 0)
                os._exit(137 if self.status is None else 0)
            if self.status is not None:
                if self.stop_at is not None or os.WIFSIGNALED(self.status):
                    sweep(self.me, self.child if self.status is None else 0)
                _exit_as(self.status)
            if self.stop_at is not None and time.monotonic() >= self.stop_at:
                for pid, status in sweep(self.me, self.child if self.status is None else 0):
                    if pid == self.child:
                        self.status = status
                _exit_as(self.status if self.status is not None else signal.SIGKILL)

    def _pass_signals(self) -> None:
        pending, self.pending = self.pending, []
        for sig in pending:
            if sig not in PASSED:
                continue  # SIGCHLD, the parent's death: looked at by the loop
            if self.status is None:
                _signal(self.child, sig)
            if sig in STOPS and self.stop_at is None:
                self.stop_at = time.monotonic() + GRACE


def main(cli: str, args: list[str]) -> "NoReturn":
    """Supervise `cli` run with `args`; exec it unsupervised when the supervisor cannot be set up."""
    supervisor = Supervisor(cli, args)
    try:
        supervisor.prepare()
        supervisor.start()
    except Exception as exc:
        if not supervisor.child:  # nothing started yet: the CLI in the supervisor's place
            _say(f"running the CLI without supervision ({type(exc).__name__}: {exc})")
            try:
                signal.set_wakeup_fd(-1)
                os.setpgid(0, supervisor.group)
            except (OSError, ValueError):
                pass
            _exec(cli, args, supervisor.ignored)
    try:
        supervisor.tie()
        supervisor.watch()
    except Exception as exc:  # the CLI runs on: wait for it as a plain parent would
        _say(f"the supervisor stopped watching ({type(exc).__name__}: {exc}); the CLI runs on")
        while supervisor.status is None:
            with _suppress(InterruptedError):
                supervisor.status = os.waitpid(supervisor.child, 0)[1]
        _exit_as(supervisor.status)
