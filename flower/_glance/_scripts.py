"""The sed and awk rules: their options, and checks of the program text they are given.

sed and awk are small languages that can write files and run commands (`sed w`, `sed e`, awk `system`,
`print >`, `|`), so a glance accepts only a subset of each whose meaning is plain from the text. The
checks refuse what they cannot read rather than guess.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ._verb import Arg, Option, Refusal, names, opaque_refusal, parse_options

__all__ = ["awk", "sed"]

_SED_FLAGS = frozenset("nErsuz")
_SED_LONG = names("quiet silent regexp-extended separate unbuffered null-data posix debug sandbox")
_SED_VALUES = ("expression", "line-length")


def sed(name: str, args: Sequence[Arg]) -> bool:
    if None in args:
        raise opaque_refusal(name)
    scripts: list[str] = []
    files: list[str] = []
    for item in parse_options([a for a in args if a is not None], long_values=_SED_VALUES, short_values="el"):
        if not isinstance(item, Option):
            files.append(str(item))
        elif item.name in ("--expression", "-e"):
            scripts.append(item.value or "")
        elif item.name == "-l":
            if not (item.value or "").isdigit():
                raise Refusal("`sed -l` needs a number")
        elif item.name.startswith("--"):
            if item.name != "--line-length" and (item.name[2:] not in _SED_LONG or item.value is not None):
                raise Refusal(f"`sed {item.word}` is not a read-only sed option")
        elif item.name[1:] not in _SED_FLAGS:
            raise Refusal(f"`sed {item.name}` is not a read-only sed option")
    if not scripts:
        if not files:
            raise Refusal("`sed` without a script")
        scripts.append(files.pop(0))
    for script in scripts:
        _check_sed_script(script)
    return not files or "-" in files


_AWK_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=.*", re.S)
_AWK_SPECIAL = names("ARGV ARGC ARGIND SYMTAB PROCINFO FUNCTAB ENVIRON FILENAME BINMODE")
"""gawk variables that change which files are read or reach any variable by name (`SYMTAB["ARGV"]`)."""


def awk(name: str, args: Sequence[Arg]) -> bool:
    if None in args:
        raise opaque_refusal(name)
    words = [a for a in args if a is not None]
    items = parse_options(words, short_values="Fv", first_operand_ends=True)
    for item in items:
        if isinstance(item, Option) and item.name not in ("-F", "-v"):
            raise Refusal(f"`awk {item.word}` is not allowed (only -F and -v)")
        assigned = _AWK_ASSIGNMENT.match(item.value or "") if isinstance(item, Option) else None
        if (
            item
            and isinstance(item, Option)
            and item.name == "-v"
            and (assigned is None or assigned.group(1) in _AWK_SPECIAL)
        ):
            raise Refusal(f"`awk {item.word}` assigns a variable that changes which files are read")
    found = [str(item) for item in items if not isinstance(item, Option)]
    if not found:
        raise Refusal("`awk` without a program")
    begin_only = _check_awk_program(found[0])
    files = []
    for word in found[1:]:
        assigned = _AWK_ASSIGNMENT.fullmatch(word)
        if assigned and assigned.group(1) in _AWK_SPECIAL:
            raise Refusal(f"awk operand `{word}` assigns a variable that changes which files are read")
        if not assigned and word:  # awk skips an empty operand, and reads stdin when no file is left
            files.append(word)
    return (not files and not begin_only) or "-" in files


def _sed_regex_end(s: str, i: int, delim: str) -> int:
    """Index just past the delimiter closing the regex that starts at `i`.

    GNU sed does not end a regex on a delimiter inside a bracket expression (`s/[/]/x/` is one
    substitution), so a bracket that is not closed before the delimiter is refused rather than guessed.
    """
    j = i
    while j < len(s):
        if s[j] == "\\":
            j += 2
        elif s[j] == "\n":
            break
        elif s[j] == delim:
            _sed_brackets_closed(s[i:j])
            return j + 1
        else:
            j += 1
    raise Refusal("sed script with an unterminated regex")


def _sed_brackets_closed(regex: str) -> None:
    j = 0
    while j < len(regex):
        if regex[j] == "\\":
            j += 2
            continue
        if regex[j] == "[":
            j += 1 + (regex[j + 1 : j + 2] == "^")
            j += regex[j : j + 1] == "]"
            while j < len(regex) and regex[j] != "]":
                if regex[j] == "\\":
                    raise Refusal("sed script with a backslash inside a bracket expression")
                if regex[j] == "[" and regex[j + 1 : j + 2] in (":", ".", "="):
                    end = regex.find(regex[j + 1] + "]", j + 2)
                    if end < 0:
                        break
                    j = end + 1
                j += 1
            if j >= len(regex):
                raise Refusal("sed script with a bracket expression that hides its delimiter")
        j += 1


def _sed_text_end(s: str, i: int, delim: str) -> int:
    j = i
    while j < len(s) and s[j] != delim:
        if s[j] == "\n":
            break
        j += 2 if s[j] == "\\" else 1
    if j >= len(s) or s[j] != delim:
        raise Refusal("sed script with an unterminated command")
    return j + 1


def _sed_address(s: str, i: int, second: bool) -> int:
    if i < len(s) and (s[i].isdigit() or (second and s[i] in "+~")):
        i += 1
        while i < len(s) and (s[i].isdigit() or s[i] == "~"):
            i += 1
        return i
    if i < len(s) and s[i] == "$":
        return i + 1
    if i + 1 < len(s) and (s[i] == "/" or s[i] == "\\"):
        delim = "/" if s[i] == "/" else s[i + 1]
        i = _sed_regex_end(s, i + 1 + (s[i] == "\\"), _sed_delimiter(delim))
        while i < len(s) and s[i] in "IM":
            i += 1
    return i


def _sed_delimiter(delim: str) -> str:
    if delim.isalnum() or delim.isspace() or delim in "\\[]{}":
        raise Refusal(f"sed script with `{delim}` as delimiter")
    return delim


def _check_sed_script(s: str) -> None:
    """Refuse a sed script unless it is made of p, d, s, y, q, = and the like, with line or regex addresses.

    Never `w`, `W`, `r`, `R`, `e` (commands or `s` flags), text commands, blocks, labels or comments:
    the grammar is small on purpose so that what it accepts means the same to GNU sed.
    """
    i = 0
    while True:
        while i < len(s) and s[i] in " \t\n;":
            i += 1
        if i >= len(s):
            return
        i = _sed_address(s, i, second=False)
        if i < len(s) and s[i] == ",":
            i = _sed_address(s, i + 1, second=True)
        while i < len(s) and s[i] in " \t!":
            i += 1
        command = s[i : i + 1]
        i += 1
        if command == "s":
            i = _sed_text_end(s, _sed_regex_end(s, i + 1, _sed_delimiter(s[i : i + 1] or "\\")), s[i])
            while i < len(s) and s[i] in "gpiImM0123456789":
                i += 1
        elif command == "y":
            delim = _sed_delimiter(s[i : i + 1] or "\\")
            i = _sed_text_end(s, _sed_text_end(s, i + 1, delim), delim)
        elif command in ("q", "Q", "l", "L"):
            while i < len(s) and (s[i].isdigit() or s[i] in " \t"):
                i += 1
        elif not command or command not in "pdDPnNgGhHxz=F":
            raise Refusal(f"sed command `{command or 'none'}` is not allowed in a glance")
        while i < len(s) and s[i] in " \t":
            i += 1
        if i < len(s) and s[i] not in ";\n":
            flag = s[i] in "weWrR"
            raise Refusal(
                "sed `w`/`e` writes a file or runs a command" if flag else "sed script not understood"
            )


def _check_awk_program(program: str) -> bool:
    """Refuse an awk program that can run a command or write a file; return whether it is BEGIN-only.

    Refused: `system`, `getline`, `@` (gawk directives and indirect calls), `ARGV`, `ARGC`, `SYMTAB`,
    `PROCINFO`... (which files are read: `SYMTAB["AR" "GV"][1]` is `ARGV[1]`), `/inet` (gawk's network
    files), a `|` that is not `||`, and `>` as print redirection. With no `/` in the program there are no
    regex literals, so strings can be skipped exactly; otherwise any `>` after a `print` is refused,
    string or not, and the program counts as reading its input. BEGIN-only means: every block at the
    top is a `BEGIN { … }` (`1`, `{print}`, `END {…}` and a pattern all read the input).
    """
    for word in ("system", "getline", "@"):
        if word in program:
            raise Refusal(f"awk `{word}` can run a command or read one")
    for word in sorted(_AWK_SPECIAL - {"ENVIRON", "FILENAME", "BINMODE"}):
        if word in program:  # `ARGV[1]="/inet/tcp/…"`, or `SYMTAB["AR" "GV"]`, makes awk open that instead
            raise Refusal(f"awk `{word}` can change which files are read (a device, a gawk network file)")
    if "/inet" in program:
        raise Refusal("awk `/inet…`: a gawk network special file connects")
    if "|" in program.replace("||", ""):
        raise Refusal("awk `|` pipes to or from a command")
    if "/" in program:
        start = program.find("print")
        if start >= 0 and ">" in program[start:]:
            raise Refusal("awk `print >` writes a file (or a `>` the check cannot tell apart)")
        return False
    depth = braces = 0
    print_depth: int | None = None
    begin_only = True
    pending: list[str] = []  # what stands before the next top-level block
    i = 0
    while i < len(program):
        c = program[i]
        if c == '"':
            end = re.compile(r'"(?:[^"\\\n]|\\.)*"', re.S).match(program, i)
            if end is None:
                raise Refusal("awk program with an unterminated string")
            pending += [] if braces else ["string"]
            i = end.end()
            continue
        if c == "#":
            newline = program.find("\n", i)
            i = len(program) if newline < 0 else newline
            continue
        name = re.compile(r"[A-Za-z_]\w*").match(program, i)
        if name:
            if braces == 0:
                pending.append(name.group())
            if name.group() in ("print", "printf"):
                print_depth = depth
            i = name.end()
            continue
        depth += (c == "(") - (c == ")")
        if braces == 0 and c == "{":
            begin_only &= pending == ["BEGIN"]
            pending = []
        elif braces == 0 and c not in "} \t\n;":
            pending.append(c)  # a pattern (`1`, `$1 > 0`): the program reads input
        braces += (c == "{") - (c == "}")
        if c in "{};":
            print_depth = None
        elif c == ">" and print_depth == depth:
            raise Refusal("awk `print >` writes a file")
        i += 1 + (c == "\\")
    return begin_only and not pending
