"""Helpers for hostile-input tests: a bound on what may block, and real read-only or full file systems.

`finishes()` runs a call in a thread and fails when it blocks. `on_tmpfs()` runs Python snippets on a
tmpfs in a private mount namespace, remounted read-only or filled up. It needs `unshare -m` and `mount`
(root, or a kernel that allows it); a test skips with the reason when the machine cannot. The snippets
run in a child process of this venv's Python, see the tmpfs at `MOUNT`, and set `result` (JSON).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from flower.testing import hang_guard


def finishes(work: Callable[[], object]) -> object:
    """`work()`'s value; fails (instead of hanging the suite) when it blocks for the hang guard's time.

    A blocked call stays blocked in a daemon thread: the test fails, the suite goes on.
    """
    box: list[object] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            box.append(work())
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    seconds = hang_guard()
    thread.join(seconds)
    assert not thread.is_alive(), f"blocked for {seconds} s"
    if errors:
        raise errors[0]
    return box[0]


def release(fifo: Path, times: int = 100) -> None:
    """Open a FIFO for reading a few times, so that writers blocked on it (by code under test) go on."""
    for _ in range(times):
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))


@functools.cache
def _unshare_works() -> str | None:
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return "unshare or mount is not installed"
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        return f"cannot mount a tmpfs in a private mount namespace here: {probe.stderr.strip()[:200]}"
    return None


def on_tmpfs(
    mount: Path,
    prepare: str,
    check: str,
    *,
    size: str = "256k",
    read_only: bool = False,
    env: dict[str, str] | None = None,
) -> Any:
    """Mount a tmpfs of `size` at `mount`, run `prepare`, remount it read-only if asked, run `check`.

    Both snippets run in one child Python (so `check` sees what `prepare` defined), with `env` added to
    its environment; `check` sets `result`, which is returned (through JSON).
    """
    reason = _unshare_works()
    if reason is not None:
        pytest.skip(reason)
    mount.mkdir(parents=True, exist_ok=True)
    program = "\n".join(
        [
            "import json, os, sys",
            "from pathlib import Path",
            "MOUNT = Path(os.environ['MOUNT'])",
            textwrap.dedent(prepare),
            "if os.environ.get('READ_ONLY') == '1':",
            "    import subprocess",
            "    subprocess.run(['mount', '-o', 'remount,ro', str(MOUNT)], check=True)",
            "result = None",
            textwrap.dedent(check),
            "print(json.dumps(result))",
        ]
    )
    script = f'mount -t tmpfs -o size={size},mode=0755 tmpfs "$MOUNT" && exec "$PYTHON" -c "$PROGRAM"'
    env = {
        **os.environ,
        **(env or {}),
        "MOUNT": str(mount),
        "PYTHON": sys.executable,
        "PROGRAM": program,
        "READ_ONLY": "1" if read_only else "0",
    }
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, env=env, timeout=hang_guard()
    )
    assert done.returncode == 0, f"the child failed:\n{done.stdout}\n{done.stderr}"
    return json.loads(done.stdout.strip().splitlines()[-1])
