"""Nothing the command starts outlives the launcher, and it sees no other process: namespaces, or a watcher.

Killing the launcher (SIGKILL, which it cannot catch) must not leave the command's processes running.
The shell dies with it (`PR_SET_PDEATHSIG` in the child), but an orphaned grandchild (`sleep 60 &`) would
go on under pid 1. Two mechanisms, the first where the system allows it:

- **a PID namespace** (root, or a process with CAP_SYS_ADMIN): the launcher's child is the first process
  (pid 1) of a new PID namespace, and the kernel kills every process of a namespace when its first one
  ends, which it does with the launcher. The child also mounts a /proc of its own in a mount namespace of
  its own (made private first, so that nothing propagates back), where /proc lists the command's
  processes only: another process's command line (the CLI's system prompt, an app's arguments) is not
  there to read. Not as another user: that would need a user namespace, where every file of another user
  shows as `nobody` (`ls -l` would lie).

  That first process is not the shell but a small init (`serve`): it forks the shell, reaps every
  orphan, and writes the shell's wait status to a pipe the moment the shell ends, then exits, which
  ends the namespace. So the launcher never waits for the namespaces to be torn down (the kernel waits
  for RCU grace periods there: about a millisecond on an idle machine, 10 to 50 ms on a loaded one), and
  the shell keeps the signals of an ordinary process (the kernel spares a namespace's first process the
  signals it sends itself).
- else **a watcher**: a forked copy of the launcher, in a session of its own, that blocks reading a pipe
  only the launcher writes to. When the launcher ends, normally (it writes a byte first) or killed (the
  pipe just closes), the watcher wakes; killed, it kills the command's process group (which no process of
  the command can leave: seccomp refuses `setsid` and `setpgid`). /proc then stays the system's, and
  Landlock grants no process's directory there.
"""

from __future__ import annotations

import ctypes
import os

from .common import Shell
from .tables import libc

TYPE_CHECKING = False  # not `typing`: importing it costs the launcher milliseconds at every glance

if TYPE_CHECKING:
    import signal
else:  # `signal` imports `enum`, which costs the launcher 10-20 ms at every glance
    import _signal as signal

__all__ = ["Reported", "new_pid_namespace", "private_proc", "release", "serve", "watch"]

_CLONE_NEWNS, _CLONE_NEWPID = 0x00020000, 0x20000000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REC, _MS_PRIVATE = 2, 4, 8, 1 << 14, 1 << 18


def new_pid_namespace() -> bool:
    """Make this process's next child the first process of a new PID namespace; False where refused."""
    return int(libc().unshare(ctypes.c_int(_CLONE_NEWPID))) == 0


def private_proc() -> bool:
    """In the namespace's first process: a mount namespace of its own, every mount private, and a /proc of
    the namespace mounted over /proc. False (with /proc left the system's) where any step is refused."""
    lib = libc()
    if int(lib.unshare(ctypes.c_int(_CLONE_NEWNS))) != 0:
        return False
    private = ctypes.c_ulong(_MS_REC | _MS_PRIVATE)
    if int(lib.mount(b"none", b"/", None, private, None)) != 0:
        return False  # mounts still shared with the system's namespace: mount nothing
    flags = ctypes.c_ulong(_MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    return int(lib.mount(b"proc", b"/proc", b"proc", flags, None)) == 0


def watch(group: int) -> tuple[int, int]:
    """Fork the watcher of the process group `group`; return its pid and the pipe end to write `b"x"` to
    and close once the command has ended (the watcher then leaves the group alone)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()  # a kill of the launcher's group does not reach the watcher
            for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                signal.signal(number, signal.SIG_IGN)
            os.closerange(0, read_end)
            os.closerange(read_end + 1, 1 << 16)
            if not os.read(read_end, 1):
                os.killpg(group, signal.SIGKILL)
        finally:
            os._exit(0)
    os.close(read_end)
    return pid, write_end


def release(watcher: int, alive: int) -> None:
    """The command ended in order: tell the watcher to leave the group alone, and wait for it to end, so
    that no process the launcher started outlives its return (not even the watcher)."""
    os.write(alive, b"x")
    os.close(alive)
    try:  # noqa: SIM105 - contextlib costs the launcher an import
        os.waitpid(watcher, 0)
    except ChildProcessError:
        pass


def serve(shell: int, report: int) -> None:
    """The namespace's first process: reap every process, write `shell`'s wait status and CPU seconds to
    `report` when it ends, then exit (the kernel then ends the namespace). Never returns."""
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, signal.SIG_IGN)
    os.closerange(0, report)  # nothing of the launcher's: only the report
    os.closerange(report + 1, 1 << 16)
    try:
        while True:
            try:
                pid, status, usage = os.wait4(-1, 0)
            except InterruptedError:
                continue
            if pid == shell:
                os.write(report, f"{status} {usage.ru_utime + usage.ru_stime}".encode())
                break
    finally:
        os._exit(0)


class Reported(Shell):
    """The shell of a PID namespace as the launcher sees it: through the report of the namespace's init."""

    def __init__(self, fd: int) -> None:
        super().__init__(0)
        self.fd = fd
        self.seen: tuple[int, float] | None = None

    def read(self) -> bool:
        """Take the report (a watch callback: the pipe is readable); returns False, to stop watching."""
        data = os.read(self.fd, 256).split()
        # no report: the init was killed before the shell ended (by the launcher, or with the group)
        self.seen = (int(data[0]), float(data[1])) if len(data) == 2 else (signal.SIGKILL, 0.0)
        return False

    def ended(self) -> bool:
        return self.seen is not None

    def status(self) -> tuple[int, float]:
        """The shell's wait status and CPU seconds; blocks until the init reports or ends."""
        if self.seen is None:
            self.read()
        assert self.seen is not None
        return self.seen
