"""Session leases with real processes, for SQLite and PostgreSQL alike: refused, queued, released by death."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from flower import LeaseError, PostgresSessionStore, SqliteSessionStore
from flower._errors import SpecError
from flower.testing import hang_guard

ROOT = Path(__file__).resolve().parents[2]
SESSION = "6f1c1a4e-0000-4000-8000-00000000f1ee"


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """(store location, schema) of an empty store of each kind."""
    if request.param == "sqlite":
        return str(tmp_path / "sessions.db"), "-"
    dsn = request.getfixturevalue("postgres_dsn")
    return dsn, request.getfixturevalue("pg_schema")()


class Runner:
    """`tests.fleet.lease_runner` in a process of its own."""

    def __init__(self, location: tuple[str, str], timeout: float) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.fleet.lease_runner", *location, SESSION, str(timeout)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "FLOWER_RUNNER": f"runner-{timeout}"},
        )
        self.releasing: dict[str, Any] = {}
        """Its `releasing` line (said while it still held the lease), once `release()` was called."""

    def said(self) -> dict[str, Any]:
        """The runner's next word after `asking` (its imports take a while under load)."""
        while (said := self._line())["event"] == "asking":
            self.asking = True
        return said

    def _line(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, f"the runner ended without a word (exit {self.process.wait(timeout=hang_guard())})"
        return json.loads(line)

    def said_asking(self) -> dict[str, Any]:
        said = self._line()
        assert said["event"] == "asking", said
        return said

    def release(self) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write("release\n")
        self.process.stdin.flush()
        self.releasing = self.said()
        assert self.releasing["event"] == "releasing", self.releasing
        return self.said()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=hang_guard())
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


@pytest.fixture
def runners() -> Iterator[Callable[[tuple[str, str], float], Runner]]:
    started: list[Runner] = []

    def start(location: tuple[str, str], timeout: float) -> Runner:
        started.append(Runner(location, timeout))
        return started[-1]

    yield start
    for runner in started:
        runner.close()


def test_a_second_runner_is_refused_and_told_who_holds_it(
    location: tuple[str, str], runners: Callable[[tuple[str, str], float], Runner]
) -> None:
    first = runners(location, 0)
    held = first.said()
    assert held["event"] == "held" and f"pid {first.process.pid}" in held["holder"]

    second = runners(location, 0).said()

    assert second["event"] == "refused" and second["session_id"] == SESSION
    assert second["holder"] == held["holder"], "the error names the holder, runner name and pid"
    assert SESSION in second["message"] and "runner-0" in second["message"]
    assert first.release()["event"] == "released"
    assert runners(location, 0).said()["event"] == "held", "free again once released"


def test_a_second_runner_waits_its_turn(
    location: tuple[str, str], runners: Callable[[tuple[str, str], float], Runner]
) -> None:
    first = runners(location, 0)
    assert first.said()["event"] == "held"
    second = runners(location, hang_guard())
    asked = second.said_asking()
    time.sleep(1.0)  # likely inside its lease call by now; the assertions below hold either way
    assert second.process.poll() is None, "still waiting"
    assert first.release()["event"] == "released"
    turn = second.said()
    assert turn["event"] == "held", "it waited its turn (the lease timeout is a hang guard), not refused"
    assert turn["at"] > first.releasing["at"], "one holder at a time: the second got it as the first let go"
    assert turn["waited"] <= turn["at"] - asked["at"] + 0.01


def test_a_runner_that_dies_releases_its_lease(
    location: tuple[str, str], runners: Callable[[tuple[str, str], float], Runner]
) -> None:
    first = runners(location, 0)
    assert first.said()["event"] == "held"
    first.process.send_signal(signal.SIGKILL)
    first.process.wait(timeout=hang_guard())

    assert runners(location, hang_guard()).said()["event"] == "held", (
        "the OS or the server dropped the dead lease"
    )


async def test_two_stores_in_one_process_exclude_each_other(tmp_path: Path) -> None:
    for path in (str(tmp_path / "sessions.db"), ":memory:"):
        one, two = SqliteSessionStore(path), SqliteSessionStore(path)
        same = two if path != ":memory:" else one  # two in-memory stores are two databases
        async with one.lease(SESSION):
            with pytest.raises(LeaseError) as refused:
                async with same.lease(SESSION):
                    pass
            assert refused.value.session_id == SESSION and str(os.getpid()) in str(refused.value.holder)
            async with same.lease("another-session") as other:
                assert other.session_id == "another-session"
        async with same.lease(SESSION, timeout=math.inf):
            pass


def test_lease_arguments_are_checked(tmp_path: Path) -> None:
    store = SqliteSessionStore(tmp_path / "s.db")
    with pytest.raises(SpecError, match="timeout must be a number of seconds >= 0"):
        store.lease(SESSION, timeout=-1)
    with pytest.raises(SpecError, match="session_id must be a non-empty str"):
        PostgresSessionStore("postgresql://h/db").lease("")
