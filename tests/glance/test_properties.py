"""`glance_verdict` never raises and always decides: any text, any length, any depth. A value that is not
a str is a `SpecError` (a `TypeError`), as for every public callable: never a pass.

An exception escaping the wall's predicate would be a denial at best and a crash of the caller at
worst; a verdict that took unbounded time would stall the run. How long the worst inputs take is
measured by `benchmarks/bench_glance.py`, not asserted here.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flower import SpecError
from flower._glance import GlanceVerdict, glance_verdict, is_ephemeral
from flower._glance._source import MAX_LENGTH

INTERNAL = "internal error"

SHELL_PIECES = [
    "ls", "cat f", "git status", "git", "echo", "printf %d", "test", "[", "]", "{", "}", "(", ")", "$(",
    "`", "'", '"', "$'", '$"', "${", "$((", "$[", "\\", "\n", "\\\n", "#", ";", "&&", "||", "|", "|&",
    "&", "<", ">", ">&", "<&", "<<", "<<<", "<(", ">(", "=(", "2>", "{a}>", "{a[$(x)]}>", "~", "~[",
    "*", "?", "[a]", "^", "!", "=", "$HOME", "$HOME[1]", "${HOME}", "/dev/zero", "//dev/", "/proc/",
    "..", "-", "--", "-c", "-C", "--output=", " ", "\t", "é", "\u00a0", "EOF", "x",
]  # fmt: skip


def decided(command: object) -> GlanceVerdict:
    verdict = glance_verdict(command)  # type: ignore[arg-type]
    assert isinstance(verdict, GlanceVerdict)
    assert INTERNAL not in verdict.reason, (command, verdict.reason)
    assert is_ephemeral(command) is verdict.ephemeral  # type: ignore[arg-type]
    assert bool(verdict.command) is verdict.ephemeral
    return verdict


def _any_text(command: str) -> None:
    decided(command)


test_any_text = settings(max_examples=600, deadline=None)(given(st.text())(_any_text))
test_any_text_at_length = pytest.mark.long(
    settings(max_examples=20_000, deadline=None)(given(st.text())(_any_text))
)


@settings(max_examples=500, deadline=None)
@given(st.binary())
def test_any_bytes_decoded_as_a_terminal_would(raw: bytes) -> None:
    decided(raw.decode("utf-8", "surrogateescape"))  # invalid UTF-8 arrives as lone surrogates
    decided(raw.decode("latin-1"))


def _shell_like(pieces: list[str]) -> None:
    verdict = decided(" ".join(pieces))
    decided("".join(pieces))
    if verdict.ephemeral:
        again = decided(verdict.command)  # what the wall runs is itself a glance, hardened once
        assert again.ephemeral and again.command == verdict.command


_PIECES = st.lists(st.sampled_from(SHELL_PIECES), max_size=40)
test_shell_like_text = settings(max_examples=1200, deadline=None)(given(_PIECES)(_shell_like))
test_shell_like_text_at_length = pytest.mark.long(
    settings(max_examples=30_000, deadline=None)(given(_PIECES)(_shell_like))
)


@pytest.mark.parametrize(
    "value", [None, b"ls", bytearray(b"ls"), 3, 2.5, ["ls"], {"command": "ls"}, object()]
)
def test_any_value(value: object) -> None:
    for check in (glance_verdict, is_ephemeral):
        with pytest.raises(SpecError, match="command must be a str"):
            check(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "command",
    [
        " && ".join(["ls"] * 1_000),  # raised RecursionError before
        " || ".join(["true"] * 2_400),
        " | ".join(["cat"] * 2_400),
        "ls; " * 2_400,
        "ls\n" * 4_900,
        "! " * 4_900 + "ls",
        "ls | " * 1_000 + "cat && " * 400 + "ls",
        "ls " + "$(" * 3_000 + ")" * 3_000,
        "echo " + "'" * 9_000,
        "echo " + '"$(' * 3_000,
        "echo " + "{" * 9_000,
        "echo " + "{a,b}" * 1_900,
        "echo " + "${" * 4_000 + "}" * 4_000,
        "ls " + "a" * (MAX_LENGTH - 3),
        "ls " + "a\\\n" * 3_000,
        "ls " + "#" * 9_000,
        "[ " + "! " * 4_000 + "-f x ]",
        "sed -n '" + "p;" * 3_000 + "' f",
        "awk '" + "{" * 9_000 + "'",
        "ls " + "/.." * 3_000 + "/dev/zero",
        "ls " + "a" * (MAX_LENGTH + 1),
        "ls\x00rm x",
        "ls \udc80",
    ],
    ids=lambda command: repr(command[:30]),
)
def test_extremes(command: str) -> None:
    decided(command)


def test_longer_than_the_cap_is_refused_unread() -> None:
    verdict = decided("ls " + "a" * MAX_LENGTH)
    assert not verdict.ephemeral and "longer than" in verdict.reason
