"""The rules behind `flower.glance`: which syntax and which commands are glances, with which arguments.

A rule receives the command name and its arguments after shell quote removal (`None` for an argument
whose value is only known at run time: `$VAR`, a glob, a brace expansion) and either raises `Refusal`
or returns whether the command reads standard input. The structural walk in `flower._glance_walk`
decides whether standard input is a pipe, a file or the terminal.

This module holds the syntax and device refusals, the simple per-verb rules (grep/rg, tail, find, date,
test, printf, hostname, jq) and the `RULES` table. The shared types and the generic `Verb` are in
`flower._glance_verb` (re-exported here), git in `flower._glance_git`, sed and awk in
`flower._glance_scripts`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from flower._glance_git import git
from flower._glance_scripts import awk, sed
from flower._glance_verb import Arg, Refusal, Rule, Verb, names, opaque_refusal, operands

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

WRAPPERS = names("""env xargs exec eval nice nohup timeout sudo su doas command builtin time watch
    stdbuf ionice chroot unbuffer script bash sh zsh dash ksh fish csh tcsh python python3 node perl
    ruby php lua source busybox setsid flock parallel strace ltrace taskset chrt runuser pkexec coproc""")
"""Verbs that run another command: whatever they run escapes the whitelist."""

INTERACTIVE = names("""top htop btop atop less more most pg vi vim nvim view nano emacs ed man info
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


_PLAIN = Verb(opaque_ok=True)
_FILTER = Verb(stdin="default", opaque_ok=True)
_GREP_VALUES = names("""regexp file max-count after-context before-context context devices directories
    include exclude exclude-dir exclude-from label binary-files group-separator""")
_RG_VALUES = names("""regexp file glob iglob type type-not type-add type-clear after-context
    before-context context encoding max-count max-columns threads replace max-depth max-filesize color
    colors sort sortr path-separator context-separator engine ignore-file dfa-size-limit regex-size-limit""")


def _search(verb: Verb, recursive: frozenset[str]) -> Rule:
    """grep and rg: the first operand is the pattern unless `-e`/`-f` gave it."""

    def rule(name: str, args: Sequence[Arg]) -> bool:
        verb(name, args)
        flags = {a.partition("=")[0] for a in args if a and a.startswith("-")}
        shorts = {f"-{c}" for a in args if a and a.startswith("-") and a[1:2] != "-" for c in a[1:]}
        given = bool({"-e", "-f", "--regexp", "--file", "--files", "--type-list"} & (flags | shorts))
        files = operands(args, verb.short_values, verb.long_values)[0 if given else 1 :]
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
        raise opaque_refusal(name)
    for arg in args:
        if arg in _FIND_ACTIONS:
            raise Refusal(f"`find {arg}` deletes, writes or runs a program")
    return False


_FIND_ACTIONS = names("-exec -execdir -ok -okdir -delete -fprint -fprint0 -fprintf -fls")


def _date(name: str, args: Sequence[Arg]) -> bool:
    _DATE(name, [a for a in args if not (a or "").startswith("-I")])  # `-I[FMT]`: the rest is FMT
    for arg in operands(args, "dfr", {"date", "file", "reference"}):
        if not (arg or "").startswith("+"):
            raise Refusal("`date` with an operand that is not a `+FORMAT` sets the clock")
    return False


_DATE = Verb(deny_short="s", deny_long=("set",))


_TEST_EVALUATES = frozenset({"-v", "-R"})
"""`test -v 'a[$(cmd)]'` evaluates the subscript, running `cmd`: bash does arithmetic on it."""


def _test(name: str, args: Sequence[Arg]) -> bool:
    if None in args:  # a run-time value could be `-v` in operator position
        raise opaque_refusal(name)
    if _TEST_EVALUATES.intersection(a for a in args if a):
        raise Refusal(f"`{name} -v` evaluates an array subscript, which can run a command")
    return False


def _printf(name: str, args: Sequence[Arg]) -> bool:
    if args and args[0] is None:
        raise Refusal("`printf` with a format known only at run time")
    if args and (args[0] or "").startswith("-v"):
        raise Refusal("`printf -v` assigns a shell variable")
    return False


_HOSTNAME_FLAGS = names(
    "-a -A -d -f -i -I -s --alias --all-fqdns --domain --fqdn --long --ip-address --all-ip-addresses --short"
)


def _hostname(name: str, args: Sequence[Arg]) -> bool:
    if any(arg not in _HOSTNAME_FLAGS for arg in args):
        raise Refusal("`hostname` with an argument sets the host name (or reads it from a file)")
    return False


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


_SUMS = "md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum"

RULES: dict[str, Rule] = {
    **dict.fromkeys(names("ls pwd stat du df whoami id uname nproc arch true false echo"), _PLAIN),
    **dict.fromkeys(names("basename dirname realpath readlink which type ps"), _PLAIN),
    **dict.fromkeys(names("test ["), _test),
    **dict.fromkeys(names(f"cat wc rev {_SUMS}"), _FILTER),
    "head": Verb(
        short_values="cn", long_values=frozenset({"bytes", "lines"}), stdin="default", opaque_ok=True
    ),
    "tail": _tail,
    "tac": Verb(short_values="s", long_values=frozenset({"separator"}), stdin="default", opaque_ok=True),
    "file": Verb(deny_short="C", deny_long=("compile",), stdin="dash"),
    "tree": Verb(deny_short="oR", deny_long=("output",)),
    "find": _find,
    **dict.fromkeys(
        names("grep egrep fgrep"),
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
        long_values=names("""key field-separator output buffer-size temporary-directory parallel batch-size
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
    **dict.fromkeys(names("diff cmp comm"), Verb(stdin="dash", opaque_ok=True)),
    "sed": sed,
    "awk": awk,
    "git": git,
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
