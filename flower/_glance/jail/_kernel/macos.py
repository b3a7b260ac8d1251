"""The macOS jail: `sandbox-exec -p PROFILE <shell> -c <command>` under resource limits. UNTESTED.

Written from Apple's sandbox profile language as the bundled Claude Code CLI uses it for its own sandbox
(it runs `env ... /usr/bin/sandbox-exec -p <profile> <shell> -c <command>` with a `(deny default)`
profile). Ours is read-mostly instead: `(allow default)` then, since the last matching rule wins:

- `(deny file-write*)` everywhere but `/dev/null` (and the terminal ioctls of /dev/null);
- `(deny network*)` and `(deny system-socket)`: no TCP, UDP or Unix socket, bound or connected;
- `(deny mach-lookup)` but for the directory services that name users and groups, and the system log:
  a Mach service can write on the caller's behalf (cfprefsd writes preferences for `defaults write`,
  launchd starts jobs), so services are refused unless known to be read-only;
- no IPC objects, no sysctl or NVRAM writes, no privileged system calls (`system*`), no job creation,
  Apple Events, Launch Services, pseudo-terminals, IOKit user clients;
- signals and task ports only within the sandbox (the CLI's own rule: `(target same-sandbox)`);
- reads everywhere but under /dev (terminals), except the devices programs read, and but in home
  directories (`/Users`, `/var/root`): there only the workspace, the program trees `PATH` names and
  git's own configuration files; and never the credential stores of `reads.HOME_SECRETS` and
  `reads.SYSTEM_SECRETS` (keychains, `~/.ssh`, `~/.claude` …) nor `$CLAUDE_CONFIG_DIR`, even inside
  the workspace. The lists are Linux's (`reads.py`); what differs: macOS reads outside home directories
  stay allowed (Linux allows only the system's program trees and a few /etc files).

The environment is Linux's allow-list (`common.environment()`). A set-user-ID program started inside
keeps the sandbox, so a change of identity gives no write or network access. Resource limits: CPU
seconds, a hard stack limit, file size 0, no core file, and RLIMIT_NPROC set to the user's current
process count plus the budget (macOS counts processes per user; root is not limited by it). macOS
enforces no data-segment or address-space limit for `mmap`, so memory is bounded only by the time limit.

The launcher is the same as on Linux (wall time, output cut, process group killed, a watcher that kills
the group if the launcher is killed: macOS has no PID namespace); it polls for the shell's end, as macOS
has no pidfd.
"""

from __future__ import annotations

import ctypes
import os
import resource
import time

from . import gitconfig, isolate, reads
from .common import (
    EXIT_REFUSED,
    Options,
    Shell,
    environment,
    same_file,
    shell_argv,
    stop_on_signals,
    supervise,
)  # fmt: skip

TYPE_CHECKING = False  # not `typing`: importing it costs the launcher milliseconds at every glance

if TYPE_CHECKING:
    import signal
else:  # `signal` imports `enum`, which costs the launcher 10-20 ms at every glance
    import _signal as signal

__all__ = ["SANDBOX_EXEC", "profile", "run_macos"]

SANDBOX_EXEC = "/usr/bin/sandbox-exec"
_READ_DEVICES = ("/dev/null", "/dev/random", "/dev/urandom", "/dev/dtracehelper")
_MACH_SERVICES = (
    "com.apple.system.opendirectoryd.libinfo",  # getpwuid, getgrgid (ls -l, id, whoami)
    "com.apple.system.opendirectoryd.membership",
    "com.apple.system.logger",
    "com.apple.logd",
)


def profile(cwd: str = "/", env: dict[str, str] | None = None) -> str:
    """The SBPL profile of a glance run in `cwd` with `env` (default: this process's): deny-by-default
    for writes, network and services; no reads in home directories but the workspace and program trees,
    and never of a credential store."""
    env = dict(os.environ) if env is None else env
    devices = " ".join(f'(literal "{path}")' for path in _READ_DEVICES)
    services = " ".join(f'(global-name "{name}")' for name in _MACH_SERVICES)
    return "\n".join((
        "(version 1)",
        "(allow default)",
        "(deny file-write*)",
        '(allow file-write-data (require-all (literal "/dev/null") (vnode-type CHARACTER-DEVICE)))',
        "(deny file-ioctl)",
        '(allow file-ioctl (literal "/dev/null"))',
        '(deny file-read* (subpath "/dev"))',
        f'(allow file-read* {devices} (subpath "/dev/fd"))',
        '(allow file-read-metadata (subpath "/dev"))',
        *_reads(cwd, env),
        "(deny network*)",
        "(deny system*)",
        "(deny mach-lookup)",
        f"(allow mach-lookup {services})",
        "(deny mach-register)",
        "(deny ipc-posix* ipc-sysv*)",
        "(deny sysctl-write)",
        "(deny nvram*)",
        "(deny iokit-open)",
        "(deny job-creation)",
        "(deny lsopen)",
        "(deny appleevent-send)",
        "(deny distributed-notification-post)",
        "(deny user-preference-write)",
        "(deny pseudo-tty)",
        "(deny signal)",
        "(allow signal (target same-sandbox))",
        "(deny mach-priv-task-port)",
        "(allow mach-priv-task-port (target same-sandbox))",
        "(deny process-info-setcontrol)",
        "",
    ))  # fmt: skip


def _reads(cwd: str, env: dict[str, str]) -> list[str]:
    """Home directories closed but for the workspace, `PATH`'s trees and git's files; stores closed last
    (the last matching rule wins)."""
    home = os.path.normpath(env.get("HOME", "/var/root"))
    homes = {home, "/var/root", "/private/var/root"}
    opened = [*reads.workspace(cwd, env)]
    opened += [tree for tree in reads.program_trees(env) if reads.home_of(tree, env)]
    files = [f"{home}/{name}" for name in reads.HOME_GIT_FILES]
    stores = [
        "/etc/gitconfig",
        "/private/etc/gitconfig",  # git reads a copy with its secrets hidden
        *reads.SYSTEM_SECRETS,
        *(f"/private{path}" for path in reads.SYSTEM_SECRETS if path.startswith("/etc/")),
    ]
    homes |= {each for each in (reads.home_of(tree, env) for tree in opened) if each}
    stores += [f"{each}/{name}" for each in sorted(homes) for name in reads.HOME_SECRETS]
    config = env.get("CLAUDE_CONFIG_DIR", "")
    stores += [os.path.normpath(config)] if os.path.isabs(config) else []
    return [
        '(deny file-read-data (subpath "/Users") ' + " ".join(_subpath(path) for path in sorted(homes)) + ")",
        *([f"(allow file-read* {' '.join(_subpath(path) for path in opened)})"] if opened else []),
        f"(allow file-read* {' '.join(_literal(path) for path in files)})",
        f"(deny file-read* {' '.join(_subpath(path) for path in stores)})",
    ]


def _string(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _subpath(path: str) -> str:
    return f"(subpath {_string(path)})"


def _literal(path: str) -> str:
    return f"(literal {_string(path)})"


def _user_processes() -> int:
    """How many processes this user has (libproc's `proc_listpids(PROC_UID_ONLY, uid)`)."""
    libproc = ctypes.CDLL("/usr/lib/libproc.dylib", use_errno=True)
    size = libproc.proc_listpids(ctypes.c_uint32(4), ctypes.c_uint32(os.getuid()), None, ctypes.c_int(0))
    if size <= 0:
        raise OSError(ctypes.get_errno(), "proc_listpids failed")
    return int(size) // 4


def run_macos(options: Options) -> int:
    """Run the command under `sandbox-exec` with limits; 125 without running it if that cannot be done."""
    if not os.access(SANDBOX_EXEC, os.X_OK):
        os.write(2, b"glance jail: sandbox-exec is missing; the command was not run.\n")
        return EXIT_REFUSED
    merged = same_file(1, 2)
    out_r, out_w = os.pipe()
    err_r, err_w = (out_r, out_w) if merged else os.pipe()
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = "/"
    argv = [SANDBOX_EXEC, "-p", profile(cwd), *shell_argv(options.shell, options.command)]
    git = gitconfig.prepared(dict(os.environ))
    try:
        return _run(options, argv, environment() | git.env, cwd, merged, (out_r, out_w, err_r, err_w))
    finally:
        git.remove()


def _run(options: Options, argv: list[str], env: dict[str, str], cwd: str, merged: bool,
         fds: tuple[int, int, int, int]) -> int:  # fmt: skip
    out_r, out_w, err_r, err_w = fds
    limits = options.limits
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            for number in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                signal.signal(number, signal.SIG_DFL)
            cpu = max(1, int(limits.cpu_seconds))
            budget = _user_processes() + limits.processes
            for kind, soft, hard in (
                (resource.RLIMIT_CPU, cpu, cpu + 1), (resource.RLIMIT_FSIZE, 0, 0),
                (resource.RLIMIT_CORE, 0, 0), (resource.RLIMIT_STACK, limits.stack_bytes, limits.stack_bytes),
                (resource.RLIMIT_NPROC, budget, budget), (resource.RLIMIT_NOFILE, limits.open_files,
                                                          limits.open_files),
            ):  # fmt: skip
                resource.setrlimit(kind, (soft, hard))
            null = os.open("/dev/null", os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            os.closerange(3, 1 << 16)
            os.execve(SANDBOX_EXEC, argv, env)
        except BaseException as error:
            os.write(2, f"glance jail: {error}; the command was not run.\n".encode())
        os._exit(EXIT_REFUSED)
    for fd in {out_w, err_w}:
        os.close(fd)
    stop_on_signals(pid)
    watcher, alive = isolate.watch(pid)
    try:
        return supervise(pid, sorted({out_r, err_r}), None if merged else err_r, limits, started,
                         shell=Shell(pid), watch={}, tick=0.05)  # fmt: skip
    finally:
        isolate.release(watcher, alive)  # ended in order: the watcher leaves the group alone
