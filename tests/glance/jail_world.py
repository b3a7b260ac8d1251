"""A world to attack from inside the glance jail, and `World.run`, which reports every effect an attack had.

The world: a git repository whose files are newer than its index, whose `core.fsmonitor` and hooks write
marker files, with a committed `10/git` (zsh's `PATH=10` trick), a named pipe and a link to /dev/zero; a
home and a temp dir; TCP, UDP, Unix and abstract Unix listeners; a victim process; a terminal.

`World.run(command, shell=...)` runs `command` exactly as the CLI runs a glance the wall rewrote: the
CLI's shell runs `jail_command(command)`, which runs the launcher, which confines itself and runs the
same shell on the command. Then it looks for every effect at once: a file created, changed or deleted in
the repository (the index included), the home or the temp dir, a file in the shared /tmp, a connection
or datagram reaching a listener, a process still running with the run's marker, the victim killed or
stopped.
"""

from __future__ import annotations

import os
import pty
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from flower._glance import JailLimits, jail_command
from flower.testing import hang_guard

PYTHON = os.path.realpath(sys.executable)
SHELLS = [path for path in (shutil.which("bash"), shutil.which("zsh")) if path]
TIMEOUT, REFUSED, MEMORY, CUT = 124, 125, 137, 141
MARK = "jailtest-"
# Runs argv and writes its peak resident memory (KiB) to the file named first. A process started from the
# test worker inherits the worker's own high-water mark at exec (Linux keeps it in the process's signal
# struct), so `wait4` on it reports the worker's size; a small interpreter in between reports the command's.
PEAK = (
    "import os, resource, signal, subprocess, sys\n"
    "rc = subprocess.call(sys.argv[2:])\n"
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
    "if rc < 0:\n"
    "    signal.signal(-rc, signal.SIG_DFL)\n"
    "    os.kill(os.getpid(), -rc)\n"
    "sys.exit(rc)\n"
)


@dataclass
class Ran:
    """What one jailed run printed, how it ended, and what it changed."""

    rc: int
    out: str
    raw: bytes
    maxrss_mib: float  # NaN unless the run was asked to measure it (`World.run(..., peak=True)`)
    effects: list[str] = field(default_factory=list)


class Listener:
    """A TCP, UDP, Unix and abstract Unix listener on this machine that counts what reaches it.

    Nothing accepts while a command runs: the kernel completes a connection into the listen backlog and
    queues a datagram by itself, and `collect()` takes them all once the command has ended, so a hit is
    never missed for want of a thread that had not run yet.
    """

    def __init__(self, root: Path) -> None:
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(64)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.unix_path = str(root / "listen.sock")
        self.unix = socket.socket(socket.AF_UNIX)
        self.unix.bind(self.unix_path)
        self.unix.listen(64)
        self.abstract_name = f"jailtest-{uuid.uuid4().hex}"
        self.abstract = socket.socket(socket.AF_UNIX)
        self.abstract.bind("\0" + self.abstract_name)
        self.abstract.listen(64)
        self.port, self.udp_port = self.tcp.getsockname()[1], self.udp.getsockname()[1]
        for server in (self.tcp, self.udp, self.unix, self.abstract):
            server.setblocking(False)

    def collect(self) -> list[str]:
        """What reached a listener since the last call: each connection and datagram, named."""
        hits: list[str] = []
        for server, name in ((self.tcp, "tcp"), (self.unix, "unix"), (self.abstract, "abstract")):
            while True:
                try:
                    conn, _ = server.accept()
                except BlockingIOError:
                    break
                hits.append(f"{name} connection")
                conn.close()
        while True:
            try:
                self.udp.recv(65536)
            except BlockingIOError:
                break
            hits.append("udp datagram")
        return hits

    def close(self) -> None:
        for server in (self.tcp, self.udp, self.unix, self.abstract):
            server.close()


def _snapshot(*tops: Path) -> dict[str, tuple[int, int, int]]:
    found: dict[str, tuple[int, int, int]] = {}
    for top in tops:
        for directory, subdirs, files in os.walk(top):
            for name in subdirs + files:
                path = Path(directory, name)
                try:
                    info = path.lstat()
                except FileNotFoundError:
                    continue
                found[str(path)] = (info.st_size, info.st_mtime_ns, info.st_mode)
    return found


def _dying(pid: str) -> bool:
    """Whether a process has a SIGKILL pending (the launcher ended it; it has not run its exit yet), or is
    gone already: a process left running without one escaped the jail's kill."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True
    pending = 0
    for line in status.splitlines():
        if line.startswith(("SigPnd:", "ShdPnd:")):
            pending |= int(line.split()[1], 16)
    return bool(pending & (1 << (signal.SIGKILL - 1)))


def _stragglers(marker: str) -> list[str]:
    """Processes that still carry this run's marker in their environment."""
    marker = MARK + marker
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                environ = Path(f"/proc/{entry}/environ").read_bytes()
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if marker.encode() in environ and state != "Z":
                found.append(entry)
    return found


class World:
    """A repository, a home and a temp dir to watch, listeners, a victim process and a terminal."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.repo, self.home, self.tmp = root / "repo", root / "home", root / "tmp"
        for path in (self.repo / "sub", self.home, self.tmp):
            path.mkdir(parents=True)
        self.outside = Path("/tmp") / f"jailtest-{uuid.uuid4().hex}"  # shared /tmp: must never appear
        self.listener = Listener(root)
        self.victim = subprocess.Popen(["sleep", "600"], start_new_session=True)
        self.pty_master, pty_slave = pty.openpty()
        self.pts = os.ttyname(pty_slave)
        os.close(pty_slave)
        self._make_repo()

    def _make_repo(self) -> None:
        r = self.repo
        (r / "README.md").write_text("hello\nTODO x\n" * 3)
        (r / "a").write_text("b\na\nc\n")
        (r / "b").write_text("a\nb\nc\n")
        (r / "sub" / "x.py").write_text("print('x')\n")
        (r / "10").mkdir()
        (r / "10" / "git").write_text(f"#!/bin/sh\ntouch {r}/PWNED_BY_10_GIT\n")
        (r / "10" / "git").chmod(0o755)
        commit = ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "s"]
        for args in (["init", "-q"], ["add", "-A"], commit, ["config", "core.fsmonitor", f"{r}/hook.sh"]):
            subprocess.run(["git", *args], cwd=r, env=self.git_env(), check=True, capture_output=True)
        (r / "hook.sh").write_text(f"#!/bin/sh\ntouch {r}/PWNED_BY_HOOK\n")
        (r / "hook.sh").chmod(0o755)
        hooks = r / ".git" / "hooks"
        for name in ("pre-commit", "post-checkout", "pre-auto-gc", "reference-transaction"):
            (hooks / name).write_text(f"#!/bin/sh\ntouch {r}/PWNED_BY_{name}\n")
            (hooks / name).chmod(0o755)
        later = time.time() + 60
        for name in ("README.md", "a", "b"):
            os.utime(r / name, (later, later))  # newer than the index: a refreshing `git status` rewrites it
        os.mkfifo(r / "fifo")
        (r / "zero").symlink_to("/dev/zero")

    def git_env(self) -> dict[str, str]:
        return {"PATH": os.environ["PATH"], "HOME": str(self.home), "GIT_CONFIG_NOSYSTEM": "1"}

    def env(self, marker: str, shell: str) -> dict[str, str]:
        """The CLI's environment as the launcher gets it. The marker goes in a variable the jail passes on
        (and `LC_ALL` overrides), so that every process of the run carries it."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "COV_"))}
        env |= {"HOME": str(self.home), "TMPDIR": str(self.tmp), "GIT_CONFIG_NOSYSTEM": "1", "SHELL": shell}
        return env | {"LC_IDENTIFICATION": f"{MARK}{marker}", "LC_ALL": "C.UTF-8"}

    def fill(self, command: str) -> str:
        """`command` with `{port}`, `{victim}`, `{repo}` ... replaced (other braces are the shell's)."""
        listener = self.listener
        values = {
            "port": listener.port, "udp": listener.udp_port, "unix": listener.unix_path,
            "abstract": listener.abstract_name, "victim": self.victim.pid, "tmp": self.tmp, "home": self.home,
            "outside": self.outside, "pts": self.pts, "repo": self.repo, "root": self.root,
        }  # fmt: skip
        return re.sub(r"\{(\w+)\}", lambda m: str(values.get(m.group(1), m.group(0))), command)

    def jailed(self, command: str, *, wall: float = 3, abi: int | None = None, namespaces: bool = True,
               **limits: int) -> str:  # fmt: skip
        """What the wall hands the CLI for `command` (with `abi`, an older Landlock ABI than the kernel's;
        without `namespaces`, the jail of a machine that gives none)."""
        text = jail_command(self.fill(command), limits=JailLimits(wall_seconds=wall, **limits), python=PYTHON)
        text = text if abi is None else f"{text} --abi '{abi}'"
        return text if namespaces else f"{text} --namespaces '0'"

    def run(self, command: str, *, shell: str, wall: float = 3, abi: int | None = None,
            namespaces: bool = True, env: dict[str, str] | None = None, peak: bool = False,
            **limits: int) -> Ran:  # fmt: skip
        """Run `command` through the launcher, as the CLI's shell runs it, and collect every effect.

        `env`: more variables for the CLI's environment (fake credentials). `peak`: measure the run's peak
        resident memory (through a small interpreter in between, see `PEAK`)."""
        before = _snapshot(self.repo, self.home, self.tmp)
        self.listener.collect()  # what an earlier run left is not this one's
        marker = uuid.uuid4().hex
        jailed = self.jailed(command, wall=wall, abi=abi, namespaces=namespaces, **limits)
        argv = [shell, "-c", jailed + " && :"]
        peak_file = self.root / f"peak-{marker}" if peak else None  # outside what is watched
        if peak_file is not None:
            argv = [PYTHON, "-I", "-S", "-c", PEAK, str(peak_file), *argv]
        process = subprocess.Popen(
            argv, cwd=self.repo, env={**(env or {}), **self.env(marker, shell)}, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        guard = threading.Timer(wall + hang_guard(), process.kill)  # a launcher that never ends: a failure
        guard.start()
        assert process.stdout is not None
        out = process.stdout.read()
        _, status, _usage = os.wait4(process.pid, 0)
        guard.cancel()
        process.stdout.close()
        process.returncode = os.waitstatus_to_exitcode(status)
        maxrss = int(peak_file.read_text()) / 1024 if peak_file is not None else float("nan")
        ran = Ran(process.returncode, out.decode(errors="replace"), out, maxrss)
        left = _stragglers(marker)
        deadline = time.monotonic() + hang_guard()
        while left and all(_dying(pid) for pid in left) and time.monotonic() < deadline:
            time.sleep(0.05)  # killed, not gone yet: a busy machine takes a while to end a process
            left = _stragglers(marker)
        ran.effects += [f"process left running: {pid}" for pid in left]
        after = _snapshot(self.repo, self.home, self.tmp)
        for path in sorted(before.keys() | after.keys()):
            if before.get(path) != after.get(path):
                what = "created" if path not in before else "deleted" if path not in after else "changed"
                ran.effects.append(f"{what} {path}")
        if self.outside.exists():
            ran.effects.append(f"created {self.outside}")
        ran.effects += self.listener.collect()
        if self.victim.poll() is not None:
            ran.effects.append("the victim process was killed")
        elif Path(f"/proc/{self.victim.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T":
            ran.effects.append("the victim process was stopped")
        return ran

    def close(self) -> None:
        self.listener.close()
        self.victim.kill()
        self.victim.wait()
        os.close(self.pty_master)
        if self.outside.is_dir():
            shutil.rmtree(self.outside, ignore_errors=True)
        elif self.outside.exists():
            self.outside.unlink()
