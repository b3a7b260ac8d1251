"""Every example runs offline against the scripted model and prints what it promises."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

pytestmark = pytest.mark.cli


def run_example(name: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == 0, f"{name} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_hello_worker() -> None:
    out = run_example("hello_worker.py")
    assert "The analyst says: data/ holds 172 lines in 3 files." in out
    assert "ok=True requests: main=2 analyst=2" in out
