"""The glance jail's launcher where users install it: paths with blanks and quotes, an installed wheel.

The launcher is a script run by path (`python -I -S …/run.py`), needing nothing but its own directory.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from flower._glance import JailLimits, jail, jail_command, jail_support
from flower._glance.jail import LAUNCHER
from flower.testing import hang_guard
from tests.glance.jail_world import PYTHON, SHELLS

pytestmark = pytest.mark.skipif(
    not jail_support().available, reason=f"this machine has no glance jail: {jail_support().reason}"
)


@pytest.mark.parametrize("shell", SHELLS, ids=os.path.basename)
def test_the_launcher_runs_from_paths_with_blanks_and_quotes(
    shell: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An install under a path with blanks and quotes, an interpreter named so: the quoting holds in bash
    and zsh (with zsh's RC_QUOTES too), and the launcher needs nothing but its own directory."""
    place = tmp_path / "a dir with 'single', \"double\" quotes, $dollar and `ticks`"
    shutil.copytree(LAUNCHER.parent, place / "jail", ignore=shutil.ignore_patterns("__pycache__"))
    python = place / "py thon's"
    python.symlink_to(PYTHON)
    monkeypatch.setattr(jail, "LAUNCHER", place / "jail" / "run.py")
    text = jail_command("echo ok; echo $0", limits=JailLimits(wall_seconds=hang_guard()), python=str(python))
    for prelude in ("", "setopt RC_QUOTES; ") if "zsh" in shell else ("",):
        done = subprocess.run([shell, "-c", prelude + text + " && :"], cwd=tmp_path, capture_output=True,
                              text=True, env={**os.environ, "SHELL": shell},
                              timeout=hang_guard())  # fmt: skip
        assert done.returncode == 0 and done.stdout.split() == ["ok", shell], done


@pytest.mark.long
def test_the_launcher_runs_from_an_installed_wheel(tmp_path: Path) -> None:
    """`pip wheel` of the project holds the launcher and its `_kernel`, which run from where pip puts them."""
    root = Path(__file__).resolve().parent.parent
    subprocess.run([PYTHON, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(root)],
                   check=True, capture_output=True, timeout=hang_guard())  # fmt: skip
    wheel = next(tmp_path.glob("*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(tmp_path / "site")
    run = tmp_path / "site" / "flower" / "glance" / "jail" / "run.py"
    encoded = base64.urlsafe_b64encode(b"echo from-the-wheel").decode()
    done = subprocess.run([PYTHON, "-I", "-S", str(run), "--b64", encoded], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "from-the-wheel", done
