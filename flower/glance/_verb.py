"""The shared vocabulary of the glance rules: `Arg`, `Pattern`, `Rule`, `Refusal`, and the generic `Verb`.

Every rule module (`_rules`, `_git`, `_scripts`) builds on these, so they live apart from the verb table
to keep imports one-way.

Option checks are conservative on purpose. Every argument that starts with `-` is checked as an option,
even where it is really the value of the option before it, or follows `--`; every letter of a short
cluster is checked; a long option is refused when it is a prefix of a forbidden name, because GNU
`getopt_long` accepts unique abbreviations (`sort --out=f` is `sort --output=f`). A wrong guess can
refuse a harmless command; it cannot let a harmful one through.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "Arg",
    "Pattern",
    "Refusal",
    "Rule",
    "Verb",
    "denied_option",
    "names",
    "opaque_refusal",
    "operands",
]

Arg = str | None
"""An argument after quote removal, or `None` when its value is only known at run time."""


class Pattern(str):
    """A word bash reads literally and zsh, under an option, as a file-name pattern (`HEAD^`, `@{u}`).

    With EXTENDED_GLOB zsh reads `^`, `~` and `#` as pattern characters, and with BRACE_CCL `{ab}`
    expands to `a b`. Such a word can only become names of existing files that start with `prefix`.
    Only a rule that knows where that is harmless receives a `Pattern`; every other rule gets `None`.
    """

    prefix: str

    def __new__(cls, text: str, prefix: str) -> Pattern:
        word = super().__new__(cls, text)
        word.prefix = prefix
        return word


Rule = Callable[[str, Sequence[Arg]], bool]
"""`rule(name, args) -> reads_stdin`; raises `Refusal` when the command is not a glance."""


class Refusal(Exception):
    """A command is not a glance; `reason` is one short English sentence."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def names(text: str) -> frozenset[str]:
    return frozenset(text.split())


def opaque_refusal(name: str) -> Refusal:
    return Refusal(f"`{name}` has an argument known only at run time ($VAR, glob or brace expansion)")


def denied_option(args: Sequence[Arg], short: str, long: Collection[str], keep: Collection[str]) -> str:
    """The first forbidden option among `args`, or ''; see the module docstring for why it over-checks."""
    for arg in args:
        if arg is None or not arg.startswith("-") or arg in ("-", "--"):
            continue
        if arg.startswith("--"):
            name = arg[2:].partition("=")[0]
            if name and name not in keep and any(bad.startswith(name) for bad in long):
                return arg
        elif short and any(letter in short for letter in arg[1:]):
            return arg
    return ""


def operands(args: Sequence[Arg], short_values: str = "", long_values: Collection[str] = ()) -> list[Arg]:
    """The non-option arguments, skipping option values; after `--` everything is an operand."""
    found: list[Arg] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg is None or arg == "-" or not arg.startswith("-"):
            found.append(arg)
        elif arg == "--":
            found.extend(args[i:])
            break
        elif arg.startswith("--"):
            if "=" not in arg and arg[2:] in long_values:
                i += 1
        else:
            for j, letter in enumerate(arg[1:], start=1):
                if letter in short_values:
                    i += j == len(arg) - 1
                    break
    return found


@dataclass(frozen=True)
class Verb:
    """A read-only verb: options it must not get, and when it reads standard input."""

    deny_short: str = ""
    """Short option letters that write, run a program or never end."""
    deny_long: tuple[str, ...] = ()
    """Long option names, refused together with every abbreviation of them."""
    keep_long: frozenset[str] = frozenset()
    """Exact long names that are abbreviations of a denied name but options of their own."""
    short_values: str = ""
    long_values: frozenset[str] = frozenset()
    """Options that take a separate value; used only to count operands, never to skip a check."""
    stdin: Literal["never", "dash", "default", "always"] = "never"
    """`default`: reads stdin without a file operand; `dash`: only for a `-` operand."""
    opaque_ok: bool = False
    """Whether no argument value can make it write or run anything, so `$VAR` and globs may pass.

    Otherwise only a `Pattern` with a literal prefix that cannot start an option passes (`src/*.py`).
    """
    max_operands: int | None = None
    """More operands than this write a file (`uniq in out`)."""

    def __call__(self, name: str, args: Sequence[Arg]) -> bool:
        if any(not self._allowed(arg) for arg in args):
            raise opaque_refusal(name)
        bad = denied_option(args, self.deny_short, self.deny_long, self.keep_long)
        if bad:
            raise Refusal(f"option `{bad}` of `{name}` writes a file, runs a program or never ends")
        found = operands(args, self.short_values, self.long_values)
        if self.max_operands is not None and len(found) > self.max_operands:
            raise Refusal(f"`{name}` with more than {self.max_operands} file argument writes a file")
        return self.reads_stdin(found)

    def _allowed(self, arg: Arg) -> bool:
        """Whether an argument known only at run time cannot become an option this verb refuses.

        A verb with refused options takes no `$VAR`; a brace expansion (`{-c,}`) is text that can be
        any option, so it needs the same safe prefix as for a verb that takes none. A glob can only
        become names of files (see the docs on file names that look like options).
        """
        if arg is None:
            return self.opaque_ok and not (self.deny_short or self.deny_long)
        if not isinstance(arg, Pattern) or self._plain(arg):
            return True
        return self.opaque_ok and "{" not in arg and not arg.prefix.startswith("-")

    def _plain(self, arg: str) -> bool:
        """Whether `arg` is literal, or a pattern whose every expansion is one more file operand."""
        if not isinstance(arg, Pattern):
            return True
        return bool(arg.prefix) and not arg.prefix.startswith("-") and self.max_operands is None

    def reads_stdin(self, files: Sequence[Arg]) -> bool:
        if self.stdin == "always":
            return True
        if self.stdin == "default" and not files:
            return True
        return self.stdin != "never" and "-" in files
