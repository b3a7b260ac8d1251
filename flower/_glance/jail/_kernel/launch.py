"""The launcher: run one shell command inside the jail, relay its output, end it at the limits.

    python -I -S .../run.py [--wall S] [--cpu S] [--data BYTES] [--stack BYTES] [--address BYTES]
                            [--memory BYTES] [--processes N] [--threads N] [--output BYTES]
                            [--shell PATH] [--abi N] [--namespaces 0|1] --b64 COMMAND

(`COMMAND` in URL-safe base64.)

On Linux the launcher works out what the command may read (`reads.plan()`), sets up a memory control
group where the system delegates one (`cgroup.py`), makes its next child the first process of a PID
namespace where the system allows (`isolate.py`), and forks. The child starts a session of its own (one
`killpg` then reaches every process the command starts: seccomp refuses `setsid`/`setpgid` after this),
dies with the launcher (`PR_SET_PDEATHSIG`), mounts a /proc of its own in the namespace, confines itself
(`confine.py`), passes the counter filter's descriptor back over a socket pair (which also proves the
launcher still lives), closes every other descriptor and execs `<shell> -c <command>` with the allowed
environment, standard input from /dev/null and standard output and error into a pipe (one pipe when the
launcher's two streams are the same file, as the CLI gives them, so that the interleaving is the
command's). Without a PID namespace the launcher forks a watcher that kills the command's group if the
launcher is killed. On macOS, `macos.py` does the same with `sandbox-exec`.

The launcher stays outside the jail, relays the output (`common.supervise`) and answers each process creation:
it counts the command's processes and threads alive at that moment and fails a creation past `--processes`
(EPERM: bash retries a fork that fails with EAGAIN for 15 s before it gives up) or `--threads` (EAGAIN, as
`pthread_create` documents it; a thread shares its process's memory limit, so it gets a budget of its own). It
is the command's child subreaper, so every process the command starts stays below it, and it sums their
anonymous memory and the pipes they hold (`--memory`, `memory.py`: each process is held to its own limits, but
128 of them would not be). It exits with the shell's status, 124 after the time limit, 137 over the memory
budget, 141 after cutting the output, 128+N when the shell was killed by signal N, and 125 when the jail could
not be set up: then the command did not run at all. Whatever it ended, its note says so.

Only the standard library and ctypes: it runs before any site-packages are importable.
"""

from __future__ import annotations

import _socket as socket  # not `socket`: it imports `enum` (see common.py)
import fcntl
import os
import struct
import sys
import time

from . import cgroup, gitconfig, isolate, memory, reads
from .common import (
    EXIT_REFUSED,
    MEMORY_CHECK_SECONDS,
    REPORT,
    Account,
    Options,
    Shell,
    environment,
    kill_group,
    parse,
    refuse,
    same_file,
    shell_argv,
    stop_on_signals,
    supervise,
)
from .confine import JailError, Limits, confine, prctl
from .tables import NR

TYPE_CHECKING = False  # not `typing`: importing it costs the launcher milliseconds at every glance

if TYPE_CHECKING:
    import signal
else:  # `signal` imports `enum`, which costs the launcher 10-20 ms at every glance
    import _signal as signal

__all__ = ["main"]

_NOTIF_RECV, _NOTIF_SEND = 0xC0502100, 0xC0182101  # SECCOMP_IOCTL_NOTIF_RECV/SEND (x86_64 and aarch64)
_NOTIF_SIZE, _FLAG_CONTINUE, _EAGAIN, _EPERM = 80, 1, 11, 1
_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER = 1, 36
_CLONE, _CLONE_THREAD = NR.get("clone", -1), 0x00010000


def main(argv: list[str]) -> int:
    try:
        options = parse(argv)
    except (ValueError, KeyError, TypeError, OSError) as error:
        return refuse(f"bad launcher arguments ({error})")
    if sys.platform == "darwin":
        from .macos import run_macos

        return run_macos(options)
    if not sys.platform.startswith("linux"):
        return refuse(f"no jail on {sys.platform}")
    try:
        return _run(options)
    except _Stopped as stopped:
        os.write(2, f"glance jail: the launcher failed ({stopped}); the command was stopped.\n".encode())
        return EXIT_REFUSED
    except Exception as error:
        return refuse(f"the launcher could not start ({error})")


class _Stopped(Exception):
    """The relay failed after the command started; the command was killed."""


def _run(options: Options) -> int:
    """What the command may read (refused when that cannot be worked out), git's configuration with its
    secrets hidden (`gitconfig.py`, removed at the end), then the confined run."""
    argv, env = shell_argv(options.shell, options.command), environment()
    try:
        cwd = os.getcwd()
    except OSError:  # the working directory is gone: no workspace to read
        cwd = "/"
    try:
        readable = reads.plan(cwd, dict(os.environ))
    except OSError as error:
        return refuse(str(error))
    git = gitconfig.prepared(dict(os.environ))
    try:
        return _confined(options, argv, env | git.env, [*readable, *git.files])
    finally:
        git.remove()


def _confined(options: Options, argv: list[str], env: dict[str, str], readable: list[str]) -> int:
    merged = same_file(1, 2)
    out_r, out_w = os.pipe()
    err_r, err_w = (out_r, out_w) if merged else os.pipe()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM, 0)
    launcher = os.getpid()
    group, why = cgroup.place(options.limits.memory_bytes)
    if options.report:
        _report(
            f"a cgroup v2 memory limit for each glance, under {os.path.dirname(group)}" if group else
            f"no cgroup memory limit ({why}): the launcher's sum of the processes' anonymous memory and "
            f"pipes every {MEMORY_CHECK_SECONDS * 1000:g} ms bounds them together",
        )  # fmt: skip
    isolated = options.namespaces and isolate.new_pid_namespace()
    report_r, report_w = os.pipe() if isolated else (-1, -1)
    prctl(_PR_SET_CHILD_SUBREAPER, 1)  # orphans of the command come back to us, not to init
    setup = _Setup(readable, group, isolated, launcher)
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: confine, hand the counter back, exec; any failure ends it before exec
        try:
            ours.close()
            if isolated:
                _first(argv, env, options, setup, (out_w, err_w, report_w), theirs)
            else:
                _child(argv, env, options, setup, out_w, err_w, theirs)
        except BaseException as error:
            os.write(2, f"glance jail: {error}; the command was not run.\n".encode())
        os._exit(EXIT_REFUSED)
    if report_w >= 0:
        os.close(report_w)
    try:
        return _supervise(options, pid, ours, theirs, (out_r, out_w, err_r, err_w), merged, started, setup,
                          report_r)  # fmt: skip
    except BaseException as error:
        kill_group(pid)  # the relay failed: the command must not run on unsupervised
        raise _Stopped(str(error)) from error
    finally:
        if group is not None:
            cgroup.remove(group)


_ISOLATED = "the command's processes in a PID namespace of their own, with a /proc of their own"
_WATCHED = (
    "no PID namespace (it needs root or CAP_SYS_ADMIN): a watcher ends the command if the launcher is "
    "killed, and no process's /proc directory is readable (`df` and `ps` fail)"
)


def _report(line: str) -> None:
    os.write(2, f"{REPORT}{line}\n".encode())


class _Setup:
    """What the launcher prepared for the child: its reads, its control group, its PID namespace."""

    def __init__(self, readable: list[str], group: str | None, isolated: bool, launcher: int) -> None:
        self.readable, self.group, self.isolated, self.launcher = readable, group, isolated, launcher


def _supervise(options: Options, pid: int, ours: socket.socket, theirs: socket.socket,
               fds: tuple[int, int, int, int], merged: bool, started: float, setup: _Setup,
               report: int) -> int:  # fmt: skip
    out_r, out_w, err_r, err_w = fds
    theirs.close()
    for fd in {out_w, err_w}:
        os.close(fd)
    stop_on_signals(pid)
    watcher, alive = isolate.watch(pid) if not setup.isolated else (0, -1)
    listener, private = _receive(ours, options.limits)  # None: the child failed before exec, says why
    if options.report and listener is not None:
        _report(_ISOLATED if private else _WATCHED)
    budget = _Budget(options.limits, pid, {watcher, pid} if setup.isolated else {watcher})

    def count() -> bool:
        assert listener is not None
        budget.answer(listener)
        return True

    shell: Shell
    if setup.isolated:  # the namespace's init reports the shell's end
        shell = isolate.Reported(report)
        watch = {report: shell.read}
    else:  # the shell is our child: its pidfd wakes the loop when it ends
        shell = Shell(pid)
        watch = {os.pidfd_open(pid): lambda: False}
    if listener is not None:
        watch[listener] = count
    group = setup.group
    account = Account(
        memory=lambda: memory.held(budget.census()[0], options.limits.open_files),
        oom=(lambda: cgroup.oom_killed(group)) if group is not None else None,
        refused=lambda: budget.refused,
    )
    try:
        return supervise(pid, sorted({out_r, err_r}), None if merged else err_r, options.limits, started,
                         shell=shell, watch=watch, tick=None, account=account)  # fmt: skip
    finally:
        if alive >= 0:
            isolate.release(watcher, alive)  # ended in order: the watcher leaves the group alone


def _child(argv: list[str], env: dict[str, str], options: Options, setup: _Setup, out: int, err: int,
           back: socket.socket) -> None:  # fmt: skip
    """Without a PID namespace: the child confines itself and becomes the shell."""
    os.setsid()
    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # the shell dies with the launcher (the watcher ends the rest)
    if os.getppid() != setup.launcher:
        raise JailError("the launcher ended before the command started")
    _enter(setup)
    _exec(argv, env, options, setup, out, err, back, private=False)


def _first(argv: list[str], env: dict[str, str], options: Options, setup: _Setup,
           fds: tuple[int, int, int], back: socket.socket) -> None:  # fmt: skip
    """The first process of the PID namespace: a /proc of its own, then the shell as its child, whose
    end it reports (`isolate.serve`)."""
    out, err, report = fds
    os.setsid()
    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # it dies with the launcher, and the namespace with it
    _enter(setup)
    private = isolate.private_proc()
    shell = os.fork()
    if shell == 0:
        try:
            _exec(argv, env, options, setup, out, err, back, private=private)
        except BaseException as error:
            os.write(2, f"glance jail: {error}; the command was not run.\n".encode())
        os._exit(EXIT_REFUSED)
    isolate.serve(shell, report)


def _enter(setup: _Setup) -> None:
    if setup.group is not None:
        try:  # noqa: SIM105 - contextlib costs the launcher an import
            cgroup.enter(setup.group)
        except OSError:
            pass  # one bound less: the launcher's own sum of memory still holds


def _exec(argv: list[str], env: dict[str, str], options: Options, setup: _Setup, out: int, err: int,
          back: socket.socket, *, private: bool) -> None:  # fmt: skip
    """Confine this process, hand the counter's descriptor to the launcher, and become the shell."""
    for number in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)  # Python ignores SIGPIPE and SIGXFSZ; exec would keep that
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    listener = confine(options.limits, pgid=os.getpgrp(), readable=setup.readable, private_proc=private,
                       max_abi=options.max_abi)  # fmt: skip
    # Sent after PR_SET_PDEATHSIG: if the launcher is already gone, this fails and the command never runs.
    tag = b"P" if private else b"S"  # whether /proc is the namespace's own
    back.sendmsg([tag], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", listener))])
    os.closerange(3, 1 << 30)
    os.execve(argv[0], argv, env)


def _receive(back: socket.socket, limits: Limits) -> tuple[int | None, bool]:
    """The counter filter's descriptor from the child, and whether its /proc is the namespace's own."""
    back.settimeout(max(0.1, limits.wall_seconds))
    fds: list[int] = []
    tag = b""
    try:
        tag, ancillary, _, _ = back.recvmsg(1, socket.CMSG_SPACE(4))
        fds = [struct.unpack("i", data[:4])[0] for level, kind, data in ancillary
               if (level, kind) == (socket.SOL_SOCKET, socket.SCM_RIGHTS)]  # fmt: skip
    except OSError:
        pass
    back.close()
    return (fds[0] if fds else None), tag == b"P"


class _Budget:
    """The process and thread budgets, counted over the command's processes alive at each creation."""

    def __init__(self, limits: Limits, group: int, skip: set[int]) -> None:
        self.processes, self.threads, self.group, self.skip = limits.processes, limits.threads, group, skip
        self.refused = 0

    def census(self) -> tuple[list[int], int]:
        """The command's processes now, and their threads beyond each one's first."""
        return _census(self.group, self.skip)

    def answer(self, listener: int) -> None:
        """Receive one process or thread creation; let it go on while under its budget, else fail it (EPERM
        for a process, which a shell reports at once; EAGAIN for a thread).

        `struct seccomp_notif`: id (u64), pid (u32), flags (u32), then `struct seccomp_data`: nr (s32),
        arch (u32), instruction pointer (u64), args (6 x u64); `clone`'s flags are args[0].
        """
        request = bytearray(_NOTIF_SIZE)
        try:
            fcntl.ioctl(listener, _NOTIF_RECV, request, True)
        except OSError:
            return  # the process was killed while waiting
        ident, _pid, _flags, number = struct.unpack_from("=QIIi", request)
        thread = number == _CLONE and bool(struct.unpack_from("=Q", request, 32)[0] & _CLONE_THREAD)
        processes, threads = self.census()
        allow = threads < self.threads if thread else len(processes) < self.processes
        self.refused += not allow
        error = 0 if allow else -(_EAGAIN if thread else _EPERM)
        reply = struct.pack("=QqiI", ident, 0, error, _FLAG_CONTINUE if allow else 0)
        try:  # noqa: SIM105 - contextlib costs the launcher an import
            fcntl.ioctl(listener, _NOTIF_SEND, reply)
        except OSError:
            pass


def _census(group: int, skip: set[int]) -> tuple[list[int], int]:
    """The command's processes (the launcher's descendants, as it is their subreaper, but those in `skip`,
    the watcher and a namespace's init, whose children count; else its group's), and how many threads
    they have beyond each one's first."""
    me = os.getpid()
    if not os.path.exists(f"/proc/{me}/task/{me}/children"):  # a kernel without CONFIG_PROC_CHILDREN
        members = _group_members(group)
        return members, sum(_threads(pid) for pid in members)
    found: list[int] = []
    threads = 0
    parents = [me]
    while parents:
        parent = parents.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:  # it just ended
            continue
        threads += (len(tasks) - 1) * (parent != me and parent not in skip)
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children", "rb") as file:
                    children = [int(word) for word in file.read().split()]
            except OSError:
                continue
            found += [child for child in children if child not in skip]
            parents += children
    return found, threads


def _threads(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/task")) - 1
    except OSError:
        return 0


def _group_members(group: int) -> list[int]:
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as file:
                    fields = file.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == group:
                members.append(int(entry))
    return members


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
