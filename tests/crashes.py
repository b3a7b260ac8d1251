"""What a crashed xdist worker was doing: its Python fault dump, shown in the crash's report.

When a worker process dies mid-test (a segfault, an abort, a kill), pytest-xdist reports only "worker
'gwN' crashed while running <test>", and the worker's own fault dump goes to a stderr that CI output
cuts. Each worker therefore writes its `faulthandler` dump (every thread's stack) to a file of its own,
and the controller appends that file to the crash's report. An empty file says the worker died with no
Python fault: killed from outside (SIGKILL, the OOM killer) or ended by `os._exit`.
"""

from __future__ import annotations

import faulthandler
import os
import shutil
import tempfile
from pathlib import Path
from typing import IO, Any

import pytest

_OPEN: list[IO[str]] = []


def _dump_file(controller_pid: int, worker_id: str) -> Path:
    return Path(tempfile.gettempdir()) / f"flower-pytest-{controller_pid}" / f"{worker_id}.faults"


def configure_worker(config: pytest.Config) -> None:
    """In an xdist worker: send fault dumps to its file (the controller is the worker's parent)."""
    worker_id = getattr(config, "workerinput", {}).get("workerid")
    if worker_id is None:
        return
    path = _dump_file(os.getppid(), worker_id)
    path.parent.mkdir(exist_ok=True)
    stream = path.open("w", encoding="utf-8")  # open for the worker's whole life
    _OPEN.append(stream)
    faulthandler.enable(file=stream, all_threads=True)


def explain_crash(report: Any) -> None:
    """In the controller: append the crashed worker's fault dump to its report."""
    worker_id = report.node.gateway.id
    path = _dump_file(os.getpid(), worker_id)
    try:
        dump = path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError as exc:
        dump = f"(no fault dump: {exc})"
    if not dump:
        dump = "(no Python fault: killed from outside, e.g. SIGKILL or the OOM killer, or ended by os._exit)"
    report.longrepr = f"{report.longrepr}\n{worker_id}'s fault dump:\n{dump}"


def clean_up(config: pytest.Config) -> None:
    """In the controller, once the workers ended: remove their fault files."""
    if not hasattr(config, "workerinput"):
        shutil.rmtree(_dump_file(os.getpid(), "gw0").parent, ignore_errors=True)
