"""`flower` started as from a terminal: in a pseudo-terminal of its own (stdlib `pty`), or through pipes.

`Terminal.start(args)` runs `python -m flower._cli ARGS` with a pty as its controlling terminal, in a
session of its own, so the Ctrl-C a test types (`ctrl_c()`: the byte 0x03 written to the pty) reaches
its process group as a person's would, through the terminal's line discipline. Every wait is the suite's
hang guard (`flower.testing.hang_guard()`), never a speed check.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from flower.testing import hang_guard

REPO = Path(__file__).resolve().parents[2]

_AS_FROM_A_TERMINAL = (
    "import fcntl, os, runpy, signal, sys, termios\n"
    "if os.isatty(0):\n"
    "    fcntl.ioctl(0, termios.TIOCSCTTY, 0)\n"  # the pty becomes the controlling terminal
    "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})\n"
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "sys.argv[0] = 'flower'\n"
    "runpy.run_module('flower._cli', run_name='__main__')\n"
)
"""`flower` as a terminal starts it: Ctrl-C neither ignored nor blocked, whatever the test process
inherited (a suite started in the background has SIGINT ignored, and its children with it)."""


def environment(extra: Mapping[str, str] | None = None, *, drop: tuple[str, ...] = ()) -> dict[str, str]:
    """The test process's environment with this checkout first on the path, `extra` on top."""
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    env.pop("NO_COLOR", None)
    env["TERM"] = "xterm"
    env.update(extra or {})
    return env


class Terminal:
    """One `flower` process in a pty; its output is collected as it comes (`\\r\\n` read as `\\n`)."""

    def __init__(self, args: list[str], *, cwd: Path, env: Mapping[str, str]) -> None:
        master, slave = os.openpty()
        self._master = master
        self.process = subprocess.Popen(
            [sys.executable, "-c", _AS_FROM_A_TERMINAL, *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
        )
        os.close(slave)
        self._text = ""
        self._lock = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self._master, 4096)
            except OSError:  # EIO: every end of the slave side is closed
                data = b""
            with self._lock:
                if not data:
                    self._text += "\0"  # the end
                    self._lock.notify_all()
                    return
                self._text += data.decode("utf-8", "replace").replace("\r\n", "\n")
                self._lock.notify_all()

    @property
    def text(self) -> str:
        """What the terminal showed so far."""
        with self._lock:
            return self._text.rstrip("\0")

    def wait_for(self, found: Callable[[str], bool], what: str) -> str:
        """Wait (hang guard) until `found(text)` holds; `AssertionError` naming `what` if the process ends
        first or the guard runs out."""
        deadline = time.monotonic() + hang_guard()
        with self._lock:
            while not found(self._text.rstrip("\0")):
                if self._text.endswith("\0"):
                    raise AssertionError(f"flower ended before {what}:\n{self._text}")
                if not self._lock.wait(max(0.0, deadline - time.monotonic())):
                    raise AssertionError(f"no {what} within the hang guard:\n{self._text}")
            return self._text.rstrip("\0")

    def wait_line(self, start: str) -> str:
        """Wait for a line starting with `start` (leading spaces and colour codes ignored); return it."""

        def line() -> str | None:
            for text in self.text.splitlines():
                if plain(text).strip().startswith(start):
                    return plain(text)
            return None

        self.wait_for(lambda _: line() is not None, f"a line starting with {start!r}")
        found = line()
        assert found is not None
        return found

    def ctrl_c(self) -> None:
        """Type Ctrl-C."""
        os.write(self._master, b"\x03")

    def finish(self) -> int:
        """Wait (hang guard) for the process to end and for its last output; return its exit status."""
        try:
            status = self.process.wait(timeout=hang_guard())
        finally:
            if self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self._reader.join(timeout=hang_guard())  # the last output is read once every end of the pty closed
        os.close(self._master)
        return status


def plain(text: str) -> str:
    """`text` without its terminal colour codes."""
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def piped(args: list[str], *, cwd: Path, env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """`flower ARGS` through pipes (not a terminal), waited for with the hang guard."""
    return subprocess.run(
        [sys.executable, "-c", _AS_FROM_A_TERMINAL, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=dict(env),
        timeout=hang_guard(),
        check=False,
    )


def running(pids: dict[int, str]) -> list[int]:
    """Those of `pids` still running (not a zombie) with the same command line."""
    left = []
    for pid, command in pids.items():
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            now = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if state != "Z" and now == command:
            left.append(pid)
    return left


def wait_until(check: Callable[[], bool], what: str) -> None:
    """Poll `check` until it holds; `AssertionError` after the hang guard."""
    deadline = time.monotonic() + hang_guard()
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within the hang guard")
        time.sleep(0.1)
