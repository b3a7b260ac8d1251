"""Rules for the verbs whose arguments a shell evaluates, or that report on the machine.

zsh evaluates numeric arguments as arithmetic (`printf %d`, `test -t`), where an assignment changes a
variable (`PATH=10`, `EUID=65534`) and a subscript runs a command (`path[$(cmd)]`); bash evaluates the
subscript of `test -v`. So those arguments must be numbers written out. The rest take a short list of
forms: `date +FORMAT` (an operand sets the clock), `hostname` without a look-up, `ulimit` flags,
`command -v NAME`, and an interpreter's `--version` (`env` prints the environment: see `_secrets`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ._verb import Arg, Pattern, Refusal, Verb, names, opaque_refusal, operands

__all__ = ["SHELL_RULES"]


def _date(name: str, args: Sequence[Arg]) -> bool:
    reads = _DATE(name, [a for a in args if not (a or "").startswith("-I")])  # `-I[FMT]`: the rest is FMT
    for arg in operands(args, "dfr", {"date", "file", "reference"}):
        if not (arg or "").startswith("+"):
            raise Refusal("`date` with an operand that is not a `+FORMAT` sets the clock")
    return reads  # `date -f -`, `date --fil=-` read dates from standard input


_DATE = Verb(
    deny_short="s",
    deny_long=("set",),
    short_values="dr",
    long_values=frozenset({"date", "reference"}),
    stdin_values=("-f", "--file"),
)


_TEST_EVALUATES = frozenset({"-v", "-R"})
"""`test -v 'a[$(cmd)]'` evaluates the subscript, running `cmd`: bash does arithmetic on it."""
_TEST_INTEGERS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_INTEGER = re.compile(r"[ \t]*[-+]?[0-9]+[ \t]*")


def _test(name: str, args: Sequence[Arg]) -> bool:
    if None in args:  # a run-time value could be `-v` in operator position
        raise opaque_refusal(name)
    words = [a for a in args if a is not None]
    if _TEST_EVALUATES.intersection(words):
        raise Refusal(f"`{name} -v` evaluates an array subscript, which can run a command")
    for i, word in enumerate(words):
        if word in _TEST_INTEGERS and not all(
            _INTEGER.fullmatch(side) for side in words[max(i - 1, 0) : i] + words[i + 1 : i + 2]
        ):
            raise Refusal(f"`{name} {word}` with an operand that is not a plain integer")
        if word == "-t" and not all(_INTEGER.fullmatch(side) for side in words[i + 1 : i + 2] if side != "]"):
            # zsh evaluates the descriptor as arithmetic: `[ -t PATH=10 ]` assigns PATH
            raise Refusal(f"`{name} -t` with an operand that is not a plain integer (zsh evaluates it)")
    return False


def _printf(name: str, args: Sequence[Arg]) -> bool:
    """zsh's `printf` evaluates every argument of a numeric conversion (`%d`, `%x`, `%f`, `%*s` ...) as
    arithmetic: `printf %d PATH=10` assigns PATH, `printf %d 'path[$(cmd)]'` runs `cmd`, and `%n` assigns
    a variable. So with such a conversion every argument must be a number written out."""
    words = list(args[1:]) if args[:1] == ["--"] else list(args)
    if not words:
        raise Refusal("`printf` without a format")
    fmt = words[0]
    if fmt is None or isinstance(fmt, Pattern):
        raise Refusal("`printf` with a format known only at run time")
    if fmt.startswith("-"):
        raise Refusal(f"`printf {fmt}`: an option (`-v` assigns a shell variable)")
    numeric = _printf_numeric(fmt)
    if numeric and not all(arg is not None and _NUMBER.fullmatch(arg) for arg in words[1:]):
        raise Refusal(
            f"`printf` with a numeric conversion (`{numeric}`) and an argument that is not a plain number: "
            "zsh evaluates it as arithmetic, where an assignment changes a variable and a subscript runs "
            "a command"
        )
    return False


_CONVERSION = re.compile(r"%(?:%|([-+ #0'I]*)([0-9]*\$)?(\*|[0-9]*)(?:\.(\*|[0-9]*))?[hlLjzt]*(.?))", re.S)
_TEXT_CONVERSIONS = frozenset("sbqc")
_NUMBER = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F]+|[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+)")


def _printf_numeric(fmt: str) -> str:
    """The first conversion of `fmt` that reads a number (`%d`, `%*s`, an unknown one), or ''."""
    for match in _CONVERSION.finditer(fmt):
        if match.group() == "%%":
            continue
        width, precision, letter = match.group(3), match.group(4), match.group(5)
        if letter == "n":
            raise Refusal("`printf %n` assigns a shell variable")
        if "*" in (width or "") + (precision or "") or letter not in _TEXT_CONVERSIONS:
            return match.group()
    return ""


def _version_only(name: str, args: Sequence[Arg]) -> bool:
    """`python3 --version`, `node --version`: an interpreter that only says which it is."""
    if len(args) != 1 or args[0] not in ("--version", "-V"):
        raise Refusal(f"`{name}` runs a program; only `{name} --version` is a glance")
    return False


_HOSTNAME_FLAGS = names("-s -I --short --all-ip-addresses")


def _hostname(name: str, args: Sequence[Arg]) -> bool:
    # The other display options (-f, -d, -i, -a, -A) look the name up, which can reach the network.
    if any(arg not in _HOSTNAME_FLAGS for arg in args):
        raise Refusal(
            "`hostname` with an operand sets the name; -f, -d, -i, -a, -A look it up on the network"
        )
    return False


def _ulimit(name: str, args: Sequence[Arg]) -> bool:
    # `ulimit -n` shows a limit; with a value (`ulimit -n 10`) it sets one.
    if not all(arg is not None and re.fullmatch(r"-[A-Za-z]+", arg) for arg in args):
        raise Refusal("`ulimit` with a value sets a limit; only its flags (`ulimit -a`) show them")
    return False


def _command(name: str, args: Sequence[Arg]) -> bool:
    # `command -v NAME` tells where NAME comes from; any other form runs NAME.
    if (
        len(args) < 2
        or args[0] not in ("-v", "-V")
        or not all(arg is not None and re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*", arg) for arg in args[1:])
    ):
        raise Refusal("`command` runs another command; only `command -v NAME` looks it up")
    return False


SHELL_RULES = {
    "test": _test,
    "[": _test,
    "printf": _printf,
    "date": _date,
    "hostname": _hostname,
    "ulimit": _ulimit,
    "command": _command,
    **dict.fromkeys(names("python python3 node"), _version_only),
}
"""The rules of this module, by verb."""
