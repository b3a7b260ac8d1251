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
    "Option",
    "Pattern",
    "Refusal",
    "Rule",
    "Verb",
    "denied_option",
    "names",
    "opaque_refusal",
    "operands",
    "parse_options",
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
    """A command is not a glance; `reason` is one short English sentence. `secret`: it is refused for
    what it would read or print (credentials, the environment), a refusal no mode lifts."""

    def __init__(self, reason: str, *, secret: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.secret = secret


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


@dataclass(frozen=True)
class Option:
    """One option as written: a long `--name[=value]`, or one letter of a short cluster (`-ab` is two)."""

    word: str
    """The argument it was read from."""
    name: str
    """`--name`, or `-` and the letter (`-` alone for a lone `-` read as an option)."""
    value: Arg = None
    """Its value: after `=`, the rest of the cluster, or the next argument ("" when there is none), for an
    option that takes one; after `=` for any long option; else None."""


def parse_options(
    args: Sequence[Arg],
    *,
    long_values: Collection[str] = (),
    short_values: str = "",
    short_attached: str = "",
    value_may_start_with_dash: bool = True,
    dash_is_operand: bool = True,
    first_operand_ends: bool = False,
) -> list[Option | Arg]:
    """The options and operands of `args`, in order, read the way GNU `getopt_long` reads them.

    `--` ends the options; `--name=value` carries its value; a long option in `long_values` without `=`
    takes the next argument (only when it does not start with `-`, unless `value_may_start_with_dash`); a
    letter of `short_values` takes the rest of its cluster, or else the next argument; a letter of
    `short_attached` takes the rest of its cluster only (`git tag -n5`). A lone `-` is an operand (standard
    input) unless `dash_is_operand` is False. With `first_operand_ends`, the first operand ends the options
    (POSIX: `awk -F: PROGRAM -x`). An argument known only at run time (None) is an operand. It never
    refuses: each rule checks the options it gets, in order.
    """
    items: list[Option | Arg] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg is None or not arg.startswith("-") or (arg == "-" and dash_is_operand):
            items.append(arg)
            if first_operand_ends:
                items.extend(args[i:])
                break
        elif arg == "--":
            items.extend(args[i:])
            break
        elif arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            if eq or name not in long_values:
                items.append(Option(arg, "--" + name, value if eq else None))
                continue
            following = args[i] if i < len(args) else None
            if value_may_start_with_dash or (following is not None and not following.startswith("-")):
                items.append(Option(arg, "--" + name, "" if following is None else following))
                i += 1
            else:
                items.append(Option(arg, "--" + name, ""))
        elif arg == "-":
            items.append(Option(arg, "-"))
        else:
            for j, letter in enumerate(arg[1:], start=1):
                rest = arg[j + 1 :]
                if letter in short_attached or (letter in short_values and rest):
                    items.append(Option(arg, "-" + letter, rest))
                    break
                if letter in short_values:
                    items.append(Option(arg, "-" + letter, args[i] if i < len(args) else ""))
                    i += 1
                    break
                items.append(Option(arg, "-" + letter))
    return items


def operands(args: Sequence[Arg], short_values: str = "", long_values: Collection[str] = ()) -> list[Arg]:
    """The non-option arguments, skipping option values; after `--` everything is an operand."""
    found = parse_options(args, short_values=short_values, long_values=long_values)
    return [item for item in found if not isinstance(item, Option)]


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
    """`default`: reads stdin without a file operand; `dash`: only for a `-` operand; `never`: it does not
    open its operands (`-` is a name)."""
    stdin_values: tuple[str, ...] = ()
    """Options whose value names a file to read, `-` meaning standard input (`-f`, `--file`): `grep -f -`,
    `date --fil=-` (an abbreviation), `file -f-` read standard input."""
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
        found = operands(args, self.shorts, self.longs)
        if self.max_operands is not None and len(found) > self.max_operands:
            raise Refusal(f"`{name}` with more than {self.max_operands} file argument writes a file")
        return self.option_reads_stdin(args) or self.reads_stdin(found)

    @property
    def shorts(self) -> str:
        """Every short option that takes a value."""
        return self.short_values + "".join(o[1] for o in self.stdin_values if len(o) == 2)

    @property
    def longs(self) -> frozenset[str]:
        """Every long option that takes a value."""
        return self.long_values | {o[2:] for o in self.stdin_values if o.startswith("--")}

    def option_reads_stdin(self, args: Sequence[Arg]) -> bool:
        """Whether an option of `stdin_values` (or an abbreviation of a long one) is given `-`."""
        for item in parse_options(args, short_values=self.shorts, long_values=self.longs):
            if not isinstance(item, Option) or item.value != "-":
                continue
            if item.name in self.stdin_values or any(
                item.name.startswith("--") and len(item.name) > 2 and o.startswith(item.name)
                for o in self.stdin_values
            ):
                return True
        return False

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
