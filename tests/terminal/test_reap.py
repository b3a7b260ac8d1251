"""`flower._terminal._reap`: what a stopped run leaves is found and ended by pid, orphans included (Linux)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from flower.testing import hang_guard
from tests.terminal.terminal import REPO, environment

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper is Linux's")

# A process that becomes a subreaper, starts a shell that leaves a command running in a session of its own
# (as the CLI's Bash does) and exits, then ends what is left. It prints the orphan's pid and what ended.
_RUNNER = textwrap.dedent("""
    import json, os, subprocess
    from flower._terminal import _reap

    adopted = _reap.become_subreaper()
    shell = subprocess.run(["sh", "-c", "setsid sleep 300 > /dev/null 2>&1 & echo $!"],
                           capture_output=True, text=True, check=True)
    orphan = int(shell.stdout)
    adopted_it = orphan in _reap.descendants()
    ended = _reap.end_all({})
    gone = not os.path.exists(f"/proc/{orphan}")
    print(json.dumps(dict(adopted=adopted, found=adopted_it, ended=ended, orphan=orphan, gone=gone)))
""")


def test_an_orphaned_command_is_adopted_and_ended() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=environment(),
        timeout=hang_guard(),
        check=True,
    )
    seen = json.loads(done.stdout)
    assert seen["adopted"] and seen["found"], seen  # reparented to the runner, not to init
    assert seen["orphan"] in seen["ended"] and seen["gone"], seen
