"""The supervisor between the SDK and the CLI changes nothing the CLI sees, passes its end on, and ends
what it started when asked to stop; `tether()` fails open.

A stand-in CLI (a Python script) reports what it got: its arguments, environment, blocked and ignored
signals, process group and open descriptors, then echoes its standard input. It is started as the SDK
starts the CLI (`Popen` with pipes), once directly and once through the launcher: the reports must be
equal.
The real CLI killed with its runner is `test_leftovers.py`.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from claude_agent_sdk import ClaudeAgentOptions

from flower._run.tether import is_tethered, launcher, tether
from flower.testing import hang_guard
from tests.durability.processes import LINUX, tree, wait_for, wait_gone

pytestmark = pytest.mark.skipif(not LINUX, reason="the supervisor's full form is Linux's (/proc)")

REPORT = f"""#!{sys.executable} -S
import json, os, sys
with open("/proc/self/status") as status:
    fields = dict(line.split(":", 1) for line in status.read().splitlines())
report = {{
    "argv": sys.argv,
    "env": dict(os.environ),
    "blocked": fields["SigBlk"].strip(),
    "ignored": fields["SigIgn"].strip(),
    "fds": sorted(os.listdir("/proc/self/fd")),
    "group": os.getpgrp(),
    "session": os.getsid(0),
}}
sys.stdout.write(json.dumps(report) + "\\n")
sys.stdout.flush()
sys.stdout.buffer.write(sys.stdin.buffer.read())
"""
"""A stand-in CLI that reports what it got as it starts, then copies its input to its output."""


def fake_cli(tmp_path: Path, text: str) -> str:
    path = tmp_path / "claude"
    path.write_text(text)
    path.chmod(0o755)
    return str(path)


def started(argv: list[str], **env: str) -> subprocess.Popen[bytes]:
    """As the SDK starts its CLI: pipes for the three streams, the process's env plus its own."""
    return subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **env}
    )


def report(argv: list[str]) -> tuple[bytes, int]:
    process = started(argv, FLOWER_PROBE="x y")
    out, _ = process.communicate(b'{"type":"user"}\n{"n":2}\n', timeout=hang_guard())
    return out, process.returncode


def test_the_cli_sees_what_it_would_see_without_the_supervisor(tmp_path: Path) -> None:
    cli = fake_cli(tmp_path, REPORT)
    path = launcher(cli)
    assert isinstance(path, Path), path
    args = ["--output-format", "stream-json", "--append-system-prompt=a b\nc", ""]
    direct, code = report([cli, *args])
    supervised, supervised_code = report([str(path), *args])
    assert supervised == direct and supervised_code == code == 0
    seen, copied = supervised.split(b"\n", 1)
    assert json.loads(seen)["group"] == os.getpgrp()  # the runner's group: a Ctrl-C reaches it as before
    assert json.loads(seen)["argv"] == [cli, *args]
    assert copied == b'{"type":"user"}\n{"n":2}\n'  # stdin to stdout, byte for byte


def test_the_runner_s_ignored_signals_stay_ignored(tmp_path: Path) -> None:
    cli = fake_cli(tmp_path, REPORT)
    path = launcher(cli)
    assert isinstance(path, Path)
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # a runner under nohup
    try:
        direct, _ = report([cli])
        supervised, _ = report([str(path)])
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert supervised == direct


@pytest.mark.parametrize(("script", "code"), [("exit 3", 3), ("kill -TERM $$", -signal.SIGTERM)])
def test_the_supervisor_ends_as_the_cli_did(tmp_path: Path, script: str, code: int) -> None:
    path = launcher(fake_cli(tmp_path, f"#!/bin/sh\n{script}\n"))
    process = started([str(path)])
    process.communicate(timeout=hang_guard())
    assert process.returncode == code


def test_a_stop_is_passed_to_the_cli(tmp_path: Path) -> None:
    script = "#!/bin/sh\ntrap 'echo got-term; exit 0' TERM\necho ready\nwhile :; do sleep 0.05; done\n"
    process = started([str(launcher(fake_cli(tmp_path, script)))])
    assert process.stdout is not None and process.stdout.readline() == b"ready\n"
    process.terminate()  # what the SDK's close does when the CLI outlives its end of input
    out, _ = process.communicate(timeout=hang_guard())
    assert out == b"got-term\n" and process.returncode == 0


def test_a_cli_deaf_to_a_stop_is_killed_with_what_it_started(tmp_path: Path) -> None:
    script = "#!/bin/sh\ntrap '' TERM\nsetsid sleep 600 &\necho ready\nwhile :; do sleep 0.05; done\n"
    process = started([str(launcher(fake_cli(tmp_path, script)))])
    assert process.stdout is not None and process.stdout.readline() == b"ready\n"
    procs = wait_for(
        process.pid, lambda proc: proc.command == "sleep 600", lambda: process.poll() is not None
    )
    process.terminate()
    process.communicate(timeout=hang_guard())
    assert process.returncode == -signal.SIGKILL
    wait_gone(procs)


def test_a_cli_that_ends_by_itself_leaves_no_zombie(tmp_path: Path) -> None:
    """Children the CLI left come back to the supervisor (its subreaper) and are collected as they end."""
    script = "#!/bin/sh\n(sleep 0.3 &)\nexit 0\n"
    process = started([str(launcher(fake_cli(tmp_path, script)))])
    process.communicate(timeout=hang_guard())
    assert process.returncode == 0
    assert not [proc for proc in tree(os.getpid()) if proc.state == "Z" and proc.ppid != os.getpid()]


# -- tether(): which options, and failing open ---------------------------------------------------------


def test_tether_wraps_the_app_s_cli_once(tmp_path: Path) -> None:
    cli = fake_cli(tmp_path, "#!/bin/sh\n")
    options = tether(ClaudeAgentOptions(cli_path=cli))
    assert is_tethered(options.cli_path) and repr(cli) in Path(str(options.cli_path)).read_text()
    assert tether(options) is options
    default = tether(ClaudeAgentOptions())
    assert is_tethered(default.cli_path)  # the SDK's bundled CLI, under the supervisor
    assert Path(str(default.cli_path)).stat().st_mode & 0o777 == 0o700


def test_tether_fails_open_with_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    options = ClaudeAgentOptions(cli_path=fake_cli(tmp_path, "#!/bin/sh\n"), user="nobody")
    with caplog.at_level(logging.WARNING, logger="flower.runtime"):
        assert tether(options) is options
    assert "without its supervisor (the CLI runs as another user" in caplog.text


def test_a_launcher_directory_open_to_others_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "cache"
    (shared / "flower" / "cli").mkdir(parents=True)
    (shared / "flower" / "cli").chmod(0o777)
    monkeypatch.setenv("XDG_CACHE_HOME", str(shared))
    path = launcher(fake_cli(tmp_path, "#!/bin/sh\n"))
    assert isinstance(path, Path) and shared not in path.parents  # the private fallback instead


def test_the_launcher_is_the_same_file_for_the_same_cli(tmp_path: Path) -> None:
    cli = fake_cli(tmp_path, "#!/bin/sh\n")
    first, second = launcher(cli), launcher(cli)
    assert first == second and isinstance(first, Path)
    assert first.read_text().startswith(f"#!{sys.executable} -IS\n")
    options = dataclasses.replace(ClaudeAgentOptions(), cli_path=first)
    assert tether(options) is options
