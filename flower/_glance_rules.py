"""The rules behind `flower.glance`: which syntax and which commands are glances, with which arguments.

A rule receives the command name and its arguments after shell quote removal (`None` for an argument
whose value is only known at run time: `$VAR`, a glob, a brace expansion) and either raises `Refusal`
or returns whether the command reads standard input. The structural walk in `flower.glance` decides
whether standard input is a pipe, a file or the terminal.

Option checks are conservative on purpose. Every argument that starts with `-` is checked as an option,
even where it is really the value of the option before it, or follows `--`; every letter of a short
cluster is checked; a long option is refused when it is a prefix of a forbidden name, because GNU
`getopt_long` accepts unique abbreviations (`sort --out=f` is `sort --output=f`). A wrong guess can
refuse a harmless command; it cannot let a harmful one through.

Sections: syntax and device refusals, the generic `Verb`, per-verb rules (grep/rg, tail, find, date,
test, printf, hostname, sed, awk, jq), the sed and awk program checks, git, and the `RULES` table.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "INTERACTIVE",
    "RULES",
    "WRAPPERS",
    "Arg",
    "Refusal",
    "Rule",
    "is_device",
    "syntax_refusal",
    "verb_rule",
]

Arg = str | None
"""An argument after quote removal, or `None` when its value is only known at run time."""

Rule = Callable[[str, Sequence[Arg]], bool]
"""`rule(name, args) -> reads_stdin`; raises `Refusal` when the command is not a glance."""


class Refusal(Exception):
    """A command is not a glance; `reason` is one short English sentence."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


WRAPPERS = _names("""env xargs exec eval nice nohup timeout sudo su doas command builtin time watch
    stdbuf ionice chroot unbuffer script bash sh zsh dash ksh fish csh tcsh python python3 node perl
    ruby php lua source busybox setsid flock parallel strace ltrace taskset chrt runuser pkexec coproc""")
"""Verbs that run another command: whatever they run escapes the whitelist."""

INTERACTIVE = _names("""top htop btop atop less more most pg vi vim nvim view nano emacs ed man info
    yes sleep ssh telnet ftp sftp nc ping read wait fg bg tmux screen""")
"""Verbs that wait on a terminal or never end."""


_SYNTAX_REFUSALS = {
    "subshell": "a subshell `( … )`",
    "compound_statement": "a `{ … }` group",
    "function_definition": "a function definition",
    "variable_assignment": "a variable assignment",
    "variable_assignments": "a variable assignment",
    "declaration_command": "a declaration (`export`, `declare`, `local` …) changes shell state",
    "unset_command": "`unset` changes shell state",
    "test_command": "a `[[ … ]]` test",
    "heredoc_redirect": "a here-document",
    "herestring_redirect": "a here-string",
    "command_substitution": "command substitution",
    "process_substitution": "process substitution",
    "arithmetic_expansion": "arithmetic expansion",
    "translated_string": 'a `$"…"` string',
    "if_statement": "control flow (`if`)",
    "for_statement": "control flow (`for`)",
    "c_style_for_statement": "control flow (`for`)",
    "while_statement": "control flow (`while`)",
    "case_statement": "control flow (`case`)",
}


def syntax_refusal(node_type: str) -> Refusal:
    """The refusal for a tree-sitter-bash node type that a glance does not accept."""
    return Refusal(_SYNTAX_REFUSALS.get(node_type, f"shell syntax a glance does not accept ({node_type!r})"))


_DEVICE = re.compile(r"(?:^|=|^-[A-Za-z])/dev/(?!null$)")


def is_device(arg: Arg) -> bool:
    """An absolute device path other than /dev/null, alone or as an option's value (`--file=/dev/tty`).

    `/dev/zero` never ends and `/dev/tty` waits; a relative path to a device is not caught.
    """
    return arg is not None and _DEVICE.search(arg) is not None


def _opaque_refusal(name: str) -> Refusal:
    return Refusal(f"`{name}` has an argument known only at run time ($VAR, glob or brace expansion)")


def _denied_option(args: Sequence[Arg], short: str, long: Collection[str], keep: Collection[str]) -> str:
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


def _operands(args: Sequence[Arg], short_values: str = "", long_values: Collection[str] = ()) -> list[Arg]:
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
    """Whether no argument value can make it write or run anything, so `$VAR` and globs may pass."""
    max_operands: int | None = None
    """More operands than this write a file (`uniq in out`)."""

    def __call__(self, name: str, args: Sequence[Arg]) -> bool:
        if not self.opaque_ok and None in args:
            raise _opaque_refusal(name)
        bad = _denied_option(args, self.deny_short, self.deny_long, self.keep_long)
        if bad:
            raise Refusal(f"option `{bad}` of `{name}` writes a file, runs a program or never ends")
        found = _operands(args, self.short_values, self.long_values)
        if self.max_operands is not None and len(found) > self.max_operands:
            raise Refusal(f"`{name}` with more than {self.max_operands} file argument writes a file")
        return self.reads_stdin(found)

    def reads_stdin(self, files: Sequence[Arg]) -> bool:
        if self.stdin == "always":
            return True
        if self.stdin == "default" and not files:
            return True
        return self.stdin != "never" and "-" in files


_PLAIN = Verb(opaque_ok=True)
_FILTER = Verb(stdin="default", opaque_ok=True)
_GREP_VALUES = _names("""regexp file max-count after-context before-context context devices directories
    include exclude exclude-dir exclude-from label binary-files group-separator""")
_RG_VALUES = _names("""regexp file glob iglob type type-not type-add type-clear after-context
    before-context context encoding max-count max-columns threads replace max-depth max-filesize color
    colors sort sortr path-separator context-separator engine ignore-file dfa-size-limit regex-size-limit""")


def _search(verb: Verb, recursive: frozenset[str]) -> Rule:
    """grep and rg: the first operand is the pattern unless `-e`/`-f` gave it."""

    def rule(name: str, args: Sequence[Arg]) -> bool:
        verb(name, args)
        flags = {a.partition("=")[0] for a in args if a and a.startswith("-")}
        shorts = {f"-{c}" for a in args if a and a.startswith("-") and a[1:2] != "-" for c in a[1:]}
        given = bool({"-e", "-f", "--regexp", "--file", "--files", "--type-list"} & (flags | shorts))
        files = _operands(args, verb.short_values, verb.long_values)[0 if given else 1 :]
        if recursive & (flags | shorts) or "--directories=recurse" in args:
            return "-" in files
        return verb.reads_stdin(files)

    return rule


def _tail(name: str, args: Sequence[Arg]) -> bool:
    # The obsolete form `tail +5f` follows the file too.
    if any(a and a[0] in "+-" and a[1:2].isdigit() and ("f" in a or "F" in a) for a in args):
        raise Refusal("`tail -f` never ends")
    return _TAIL(name, args)


_TAIL = Verb(
    deny_short="fF",
    deny_long=("follow", "retry"),
    short_values="cns",
    long_values=frozenset({"bytes", "lines", "sleep-interval", "pid", "max-unchanged-stats"}),
    stdin="default",
)


def _find(name: str, args: Sequence[Arg]) -> bool:
    if None in args:
        raise _opaque_refusal(name)
    for arg in args:
        if arg in _FIND_ACTIONS:
            raise Refusal(f"`find {arg}` deletes, writes or runs a program")
    return False


_FIND_ACTIONS = _names("-exec -execdir -ok -okdir -delete -fprint -fprint0 -fprintf -fls")


def _date(name: str, args: Sequence[Arg]) -> bool:
    _DATE(name, [a for a in args if not (a or "").startswith("-I")])  # `-I[FMT]`: the rest is FMT
    for arg in _operands(args, "dfr", {"date", "file", "reference"}):
        if not (arg or "").startswith("+"):
            raise Refusal("`date` with an operand that is not a `+FORMAT` sets the clock")
    return False


_DATE = Verb(deny_short="s", deny_long=("set",))


_TEST_EVALUATES = frozenset({"-v", "-R"})
"""`test -v 'a[$(cmd)]'` evaluates the subscript, running `cmd`: bash does arithmetic on it."""


def _test(name: str, args: Sequence[Arg]) -> bool:
    if None in args:  # a run-time value could be `-v` in operator position
        raise _opaque_refusal(name)
    if _TEST_EVALUATES.intersection(a for a in args if a):
        raise Refusal(f"`{name} -v` evaluates an array subscript, which can run a command")
    return False


def _printf(name: str, args: Sequence[Arg]) -> bool:
    if args and args[0] is None:
        raise Refusal("`printf` with a format known only at run time")
    if args and (args[0] or "").startswith("-v"):
        raise Refusal("`printf -v` assigns a shell variable")
    return False


_HOSTNAME_FLAGS = _names(
    "-a -A -d -f -i -I -s --alias --all-fqdns --domain --fqdn --long --ip-address --all-ip-addresses --short"
)


def _hostname(name: str, args: Sequence[Arg]) -> bool:
    if any(arg not in _HOSTNAME_FLAGS for arg in args):
        raise Refusal("`hostname` with an argument sets the host name (or reads it from a file)")
    return False


_SED_FLAGS = frozenset("nErsuz")
_SED_LONG = _names("quiet silent regexp-extended separate unbuffered null-data posix debug sandbox")


def _sed(name: str, args: Sequence[Arg]) -> bool:
    if None in args:
        raise _opaque_refusal(name)
    scripts: list[str] = []
    files: list[str] = []
    words = [a for a in args if a is not None]
    i = 0
    while i < len(words):
        arg = words[i]
        i += 1
        if arg == "--":
            files.extend(words[i:])
            break
        if arg.startswith("--"):
            key, eq, value = arg[2:].partition("=")
            if key in ("expression", "line-length"):
                if not eq:
                    value, i = (words[i] if i < len(words) else ""), i + 1
                if key == "expression":
                    scripts.append(value)
            elif key not in _SED_LONG or eq:
                raise Refusal(f"`sed {arg}` is not a read-only sed option")
        elif arg.startswith("-") and arg != "-":
            for j, letter in enumerate(arg[1:], start=1):
                if letter in "el":
                    value = arg[j + 1 :] or (words[i] if i < len(words) else "")
                    i += not arg[j + 1 :]
                    if letter == "l" and not value.isdigit():
                        raise Refusal("`sed -l` needs a number")
                    if letter == "e":
                        scripts.append(value)
                    break
                if letter not in _SED_FLAGS:
                    raise Refusal(f"`sed -{letter}` is not a read-only sed option")
        else:
            files.append(arg)
    if not scripts:
        if not files:
            raise Refusal("`sed` without a script")
        scripts.append(files.pop(0))
    for script in scripts:
        _check_sed_script(script)
    return not files or "-" in files


def _awk(name: str, args: Sequence[Arg]) -> bool:
    if None in args:
        raise _opaque_refusal(name)
    words = [a for a in args if a is not None]
    i = 0
    while i < len(words) and words[i].startswith("-") and words[i] != "-":
        arg = words[i]
        i += 1
        if arg == "--":
            break
        if arg[:2] not in ("-F", "-v"):
            raise Refusal(f"`awk {arg}` is not allowed (only -F and -v)")
        i += len(arg) == 2
    if i >= len(words):
        raise Refusal("`awk` without a program")
    begin_only = _check_awk_program(words[i])
    files = [w for w in words[i + 1 :] if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", w, re.S)]
    return (not files and not begin_only) or "-" in files


def _jq(name: str, args: Sequence[Arg]) -> bool:
    # jq has no way to write a file or run a program; only whether it reads stdin matters.
    null_input = from_file = positional = False
    found: list[tuple[Arg, bool]] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg is None or arg == "-" or not arg.startswith("-"):
            found.append((arg, positional))
        elif arg == "--":
            found.extend((a, positional) for a in args[i:])
            break
        elif arg in ("--arg", "--argjson", "--slurpfile", "--rawfile"):
            i += 2
        elif arg in ("-f", "--from-file", "-L", "--indent"):
            from_file |= arg in ("-f", "--from-file")
            i += 1
        elif arg in ("--args", "--jsonargs"):
            positional = True
        elif arg == "--null-input" or (not arg.startswith("--") and "n" in arg):
            null_input = True
    if found and "input" in (found[0][0] or "input") and not from_file:
        null_input = False  # `input` and `inputs` read standard input even with -n
    files = [a for a, is_positional in found[0 if from_file else 1 :] if not is_positional]
    return not null_input and (not files or "-" in files)


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

    Refused: `system`, `getline`, `@` (gawk directives and indirect calls), a `|` that is not `||`,
    and `>` as print redirection. With no `/` in the program there are no regex literals, so strings
    can be skipped exactly; otherwise any `>` after a `print` is refused, string or not.
    """
    for word in ("system", "getline", "@"):
        if word in program:
            raise Refusal(f"awk `{word}` can run a command or read one")
    if "|" in program.replace("||", ""):
        raise Refusal("awk `|` pipes to or from a command")
    if "/" in program:
        start = program.find("print")
        if start >= 0 and ">" in program[start:]:
            raise Refusal("awk `print >` writes a file (or a `>` the check cannot tell apart)")
        return False
    depth = braces = 0
    print_depth: int | None = None
    top_words: set[str] = set()
    i = 0
    while i < len(program):
        c = program[i]
        if c == '"':
            end = re.compile(r'"(?:[^"\\\n]|\\.)*"', re.S).match(program, i)
            if end is None:
                raise Refusal("awk program with an unterminated string")
            i = end.end()
            continue
        if c == "#":
            newline = program.find("\n", i)
            i = len(program) if newline < 0 else newline
            continue
        name = re.compile(r"[A-Za-z_]\w*").match(program, i)
        if name:
            if braces == 0:
                top_words.add(name.group())
            if name.group() in ("print", "printf"):
                print_depth = depth
            i = name.end()
            continue
        depth += (c == "(") - (c == ")")
        braces += (c == "{") - (c == "}")
        if c in "{};":
            print_depth = None
        elif c == ">" and print_depth == depth:
            raise Refusal("awk `print >` writes a file")
        i += 1 + (c == "\\")
    return top_words <= {"BEGIN"}


_GIT_GLOBAL = frozenset({"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs"})
_GIT_DENY = ("output", "ext-diff", "textconv", "show-signature", "open-files-in-pager")
_GIT_PLAIN = _names("""status log show diff rev-parse ls-files blame describe show-ref cat-file ls-tree
    grep rev-list merge-base for-each-ref count-objects check-ignore shortlog version""")
_GIT_READS_STDIN = ("--stdin", "--batch", "--parseopt", "--exclude-existing")
_GIT_LIST_VALUES = _names("contains no-contains merged no-merged points-at sort format")
_GIT_LIST_FLAGS = _names("""list all remotes verbose show-current ignore-case color no-color column
    no-column abbrev no-abbrev omit-empty quiet""")
_GIT_CONFIG_READ = _names("--get --get-all --get-regexp --get-urlmatch --list -l")
_GIT_CONFIG_FLAGS = _names("""--global --system --local --worktree --show-origin --show-scope --name-only
    -z --null --includes --no-includes --bool --int --bool-or-int --path --expiry-date --all --regexp
    --show-names""")
_GIT_CONFIG_VALUES = _names("--file -f --blob --type --default")
_GIT_SUBLISTS = {"stash": ("list", "show"), "worktree": ("list",)}


def _git(name: str, args: Sequence[Arg]) -> bool:
    """`git` with a read-only subcommand; global options other than `-C` and `--no-pager` are refused."""
    if None in args:
        raise _opaque_refusal(name)
    words = [a for a in args if a is not None]
    i = 0
    while i < len(words) and words[i].startswith("-"):
        if words[i] == "-C" and i + 1 < len(words) and not words[i + 1].startswith("-"):
            i += 2
        elif words[i] in _GIT_GLOBAL:
            i += 1
        else:
            raise Refusal(f"`git {words[i]}` changes how git runs (configuration, paths or programs)")
    if i >= len(words):
        raise Refusal("`git` without a subcommand")
    sub, rest = words[i], words[i + 1 :]
    deny = _GIT_DENY + (("filters",) if sub == "cat-file" else ())
    bad = _denied_option(rest, "O" if sub == "grep" else "", deny, {"text"})
    if bad:
        raise Refusal(f"`git {sub} {bad}` writes a file or runs a configured program")
    if any("%G" in arg for arg in rest):
        raise Refusal("git `%G` format placeholders run the signature-verification program")
    if sub in _GIT_PLAIN:
        if sub == "shortlog" and not _operands(rest):
            return True  # with no revision and stdin not a terminal, shortlog reads a log from stdin
        return any(arg.startswith(_GIT_READS_STDIN) for arg in rest)
    if sub in ("branch", "tag"):
        _git_list_form(sub, rest)
    elif sub == "remote":
        _git_remote(rest)
    elif sub == "config":
        _git_config(rest)
    elif sub in _GIT_SUBLISTS:
        if not rest or rest[0] not in _GIT_SUBLISTS[sub]:
            raise Refusal(f"`git {sub}` is read-only only as `git {sub} {_GIT_SUBLISTS[sub][0]}`")
    elif sub == "reflog":
        if (rest[:1] and rest[0] != "show" and rest[0][:1] != "-") or {"expire", "delete", "drop"} & set(
            rest
        ):
            raise Refusal("`git reflog` is read-only only as `git reflog` or `git reflog show`")
    else:
        raise Refusal(f"`git {sub}` is not a read-only git command")
    return False


def _git_list_form(sub: str, rest: Sequence[str]) -> None:
    """`git branch` / `git tag` in list form only; a bare name would create one."""
    listing = False
    found: list[str] = []
    i = 0
    while i < len(rest):
        arg = rest[i]
        i += 1
        if arg == "--":
            found.extend(rest[i:])
            break
        if arg.startswith("--"):
            key, eq, _ = arg[2:].partition("=")
            if key in _GIT_LIST_VALUES:
                i += not eq and i < len(rest) and not rest[i].startswith("-")
            elif key not in _GIT_LIST_FLAGS:
                raise Refusal(f"`git {sub} {arg}` changes {sub}es")
            listing |= key == "list"
        elif arg.startswith("-"):
            letters = arg[1:]
            if sub == "tag" and re.fullmatch(r"[li]*n\d*", letters):
                listing = True
            elif not letters or any(c not in ("arvlqi" if sub == "branch" else "li") for c in letters):
                raise Refusal(f"`git {sub} {arg}` changes {sub}es")
            listing |= "l" in letters
        else:
            found.append(arg)
    if found and not listing:
        raise Refusal(f"`git {sub} NAME` creates a {sub}")


def _git_remote(rest: Sequence[str]) -> None:
    words = [a for a in rest if a not in ("-v", "--verbose")]
    if not words:
        return
    if words[0] == "get-url" and len([w for w in words[1:] if w not in ("--push", "--all")]) == 1:
        return
    if words[0] == "show" and "-n" in words and all(w == "-n" or not w.startswith("-") for w in words[1:]):
        return
    raise Refusal("`git remote` is read-only only as `-v`, `get-url NAME` or `show -n NAME`")


def _git_config(rest: Sequence[str]) -> None:
    words = list(rest)
    action = bool(words[:1] and words[0] in ("list", "get"))
    i = 1 if action else 0
    while i < len(words):
        key = words[i].partition("=")[0]
        if key in _GIT_CONFIG_READ:
            action = True
        elif key in _GIT_CONFIG_VALUES:
            i += "=" not in words[i] and i + 1 < len(words) and not words[i + 1].startswith("-")
        elif key.startswith("-") and key not in _GIT_CONFIG_FLAGS:
            raise Refusal(f"`git config {words[i]}` is not a read-only config option")
        i += 1
    if not action:
        raise Refusal("`git config` without `--get`, `--get-all`, `--get-regexp` or `--list` writes")


_SUMS = "md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum"

RULES: dict[str, Rule] = {
    **dict.fromkeys(_names("ls pwd stat du df whoami id uname nproc arch true false echo"), _PLAIN),
    **dict.fromkeys(_names("basename dirname realpath readlink which type ps"), _PLAIN),
    **dict.fromkeys(_names("test ["), _test),
    **dict.fromkeys(_names(f"cat wc rev {_SUMS}"), _FILTER),
    "head": Verb(
        short_values="cn", long_values=frozenset({"bytes", "lines"}), stdin="default", opaque_ok=True
    ),
    "tail": _tail,
    "tac": Verb(short_values="s", long_values=frozenset({"separator"}), stdin="default", opaque_ok=True),
    "file": Verb(deny_short="C", deny_long=("compile",), stdin="dash"),
    "tree": Verb(deny_short="oR", deny_long=("output",)),
    "find": _find,
    **dict.fromkeys(
        _names("grep egrep fgrep"),
        _search(
            Verb(short_values="efmABCdD", long_values=_GREP_VALUES, stdin="default", opaque_ok=True),
            frozenset({"-r", "-R", "--recursive", "--dereference-recursive"}),
        ),
    ),
    "rg": _search(
        Verb(
            deny_short="z",
            deny_long=("pre", "pre-glob", "search-zip", "hostname-bin"),
            short_values="efgtTABCmMjrEd",
            long_values=_RG_VALUES,
            stdin="default",
        ),
        frozenset(),
    ),
    "sort": Verb(
        deny_short="o",
        deny_long=("output", "compress-program"),
        short_values="ktoST",
        long_values=_names("""key field-separator output buffer-size temporary-directory parallel batch-size
            compress-program files0-from random-source sort"""),
        stdin="default",
    ),
    "uniq": Verb(
        short_values="fsw",
        long_values=frozenset({"skip-fields", "skip-chars", "check-chars"}),
        stdin="default",
        max_operands=1,
    ),
    "cut": Verb(
        short_values="bcdf",
        long_values=frozenset({"bytes", "characters", "delimiter", "fields", "output-delimiter"}),
        stdin="default",
        opaque_ok=True,
    ),
    "tr": Verb(stdin="always", opaque_ok=True),
    "nl": Verb(short_values="bdfhilnsvw", stdin="default", opaque_ok=True),
    "column": Verb(short_values="csoNRHWEOrl", stdin="default", opaque_ok=True),
    "printf": _printf,
    "date": _date,
    "hostname": _hostname,
    "jq": _jq,
    **dict.fromkeys(_names("diff cmp comm"), Verb(stdin="dash", opaque_ok=True)),
    "sed": _sed,
    "awk": _awk,
    "git": _git,
}
"""Every verb that may run as a glance. Names are matched exactly: `LS` and `/bin/ls` are not `ls`."""


def verb_rule(name: str) -> Rule:
    """The rule for `name`, or a `Refusal` saying why it is not on the whitelist."""
    rule = RULES.get(name)
    if rule is None:
        if name in WRAPPERS:
            raise Refusal(f"`{name}` runs another command")
        if name in INTERACTIVE:
            raise Refusal(f"`{name}` is interactive or never ends")
        raise Refusal(f"`{name}` is not a read-only command")
    return rule
