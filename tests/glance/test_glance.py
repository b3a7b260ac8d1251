"""Glance against its table, and the properties that hold across rows (joining, threads, types)."""

from __future__ import annotations

import threading

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from flower import SpecError
from flower._glance import GlanceVerdict, glance_verdict, is_ephemeral
from tests.glance.table import CASES, HARMFUL, JOINABLE, READS_TERMINAL, SEED


def _id(command: str) -> str:
    return repr(command)


def test_table_size() -> None:
    adversarial = [c for c, _, why in CASES if why]
    assert len(CASES) >= 150
    assert len(adversarial) >= 60
    assert len({c for c, _, _ in CASES}) == len(CASES), "duplicate rows"


@pytest.mark.parametrize(("command", "expected", "why"), CASES, ids=[_id(c) for c, _, _ in CASES])
def test_table(command: str, expected: bool, why: str) -> None:
    verdict = glance_verdict(command)
    assert verdict.ephemeral is expected, verdict.reason
    assert is_ephemeral(command) is verdict.ephemeral
    if not expected:
        assert verdict.reason.strip()


def test_seed_compound_segments() -> None:
    verdict = glance_verdict(SEED)
    assert verdict == GlanceVerdict(
        True,
        verdict.reason,
        ("git status -s", 'echo "--- LOG ---"', "git log --oneline -3"),
        verdict.command,
    )


def test_refusal_names_the_part() -> None:
    verdict = glance_verdict("git status && rm -rf x")
    assert verdict.reason == "`rm` is not a read-only command"
    assert verdict.segments == ("git status", "rm -rf x")


@pytest.mark.parametrize("value", [None, b"ls", ["ls"], 3])
def test_a_value_that_is_not_a_str_is_refused(value: object) -> None:
    # Like every public callable, a wrong type is a SpecError naming the argument: never a pass.
    for check in (is_ephemeral, glance_verdict):
        with pytest.raises(SpecError, match="command must be a str"):
            check(value)  # type: ignore[arg-type]


def test_empty_is_not_ephemeral() -> None:
    assert is_ephemeral("") is False
    assert glance_verdict("").reason


def test_verdict_is_frozen() -> None:
    verdict = glance_verdict("ls")
    with pytest.raises(AttributeError):
        verdict.ephemeral = False  # type: ignore[misc]


def test_threads_agree() -> None:
    expected = [is_ephemeral(c) for c, _, _ in CASES]
    results: list[list[bool]] = []

    def run() -> None:
        results.append([is_ephemeral(c) for c, _, _ in CASES])

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 4


OPERATORS = [" && ", " || ", "; ", " | ", "\n"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(JOINABLE), st.sampled_from(OPERATORS), st.sampled_from(JOINABLE))
def test_two_glances_joined_stay_a_glance(first: str, operator: str, second: str) -> None:
    assert is_ephemeral(first + operator + second), first + operator + second


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(JOINABLE),
    st.sampled_from(OPERATORS),
    st.sampled_from(HARMFUL),
    st.booleans(),
)
def test_a_glance_joined_with_a_refused_command_is_refused(
    glance: str, operator: str, refused: str, refused_first: bool
) -> None:
    # `ls | cat` is fine: the pipe feeds it.
    assume(not (operator == " | " and not refused_first and refused in READS_TERMINAL))
    command = refused + operator + glance if refused_first else glance + operator + refused
    assert not is_ephemeral(command), command
