"""The lease's words and checks, written out: who holds a session, how long one waited, a lease taken
over, this runner's name, and the arguments a lease takes."""

from __future__ import annotations

import math
import os
import socket

import pytest

from flower import SpecError
from flower.stores._lease import Holding, busy, check_epoch, check_timeout, fenced, holder_name, runner_name


def test_a_busy_session_names_its_holder_and_the_wait() -> None:
    error = busy("S", 2.5, "ci-3 pid 7", "/db", path="/db/sessions.db")
    assert str(error) == (
        "session S is leased by ci-3 pid 7 after waiting 2.5 s (/db): another run is writing it. Wait for "
        "it to end, or raise lease_timeout to queue behind it"
    )
    assert (error.session_id, error.holder, error.path, error.taken_over) == (
        "S",
        "ci-3 pid 7",
        "/db/sessions.db",
        False,
    )
    unnamed = busy("S", 0, None, "/db")
    assert str(unnamed).startswith(
        "session S is leased by another runner (it has not written its name yet) (/db): another run"
    )
    assert unnamed.holder is None and unnamed.path is None


def test_a_lease_taken_over_says_by_whom_and_on_which_epoch() -> None:
    error = fenced("S", 3, 4, "ci-4 pid 9", "/db")
    assert str(error) == (
        "session S: this runner's lease (epoch 3) was taken over by ci-4 pid 9 (epoch 4) in /db; its writes "
        "are refused so that the session does not fork. Resume the session again once the other run has ended"
    )
    assert (error.session_id, error.holder, error.taken_over) == ("S", "ci-4 pid 9", True)
    assert "taken over by another runner in /db;" in str(fenced("S", 3, None, None, "/db"))


def test_this_runner_is_named_by_argument_then_environment_then_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLOWER_RUNNER", "  env-runner ")
    assert runner_name("given") == "given" and runner_name() == "env-runner"
    assert holder_name("given") == f"given on {socket.gethostname()} pid {os.getpid()}"
    assert holder_name(socket.gethostname()) == f"{socket.gethostname()} pid {os.getpid()}"
    monkeypatch.delenv("FLOWER_RUNNER")
    assert runner_name() == socket.gethostname()
    monkeypatch.setenv("FLOWER_RUNNER", "   ")
    assert runner_name() == socket.gethostname()


def test_a_leases_arguments_are_checked_and_named() -> None:
    assert (
        check_timeout(0, "o") == 0.0
        and check_timeout(math.inf, "o") == math.inf
        and check_timeout(2, "o") == 2.0
    )
    for bad in (-1, True, math.nan, "3"):
        with pytest.raises(
            SpecError, match=rf"^o: lease_timeout must be a number of seconds >= 0, got {bad!r}$"
        ):
            check_timeout(bad, "o", "lease_timeout")
    assert check_epoch(None, "o") is None and check_epoch(0, "o") == 0 and check_epoch(5, "o") == 5
    for bad in (-1, True, 1.5):
        with pytest.raises(SpecError, match=rf"^o: if_epoch must be an int >= 0 or None, got {bad!r}$"):
            check_epoch(bad, "o")


def test_a_holding_starts_unlost() -> None:
    holding = Holding("S", 4)
    assert (holding.session_id, holding.epoch, holding.lost.is_set()) == ("S", 4, False)
    holding.mark_lost()
    assert holding.lost.is_set()
