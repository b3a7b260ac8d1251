"""The verb table of glance: which commands are glances, with which arguments.

A rule receives the command name and its arguments after shell quote removal (`None` for an argument
whose value is only known at run time: `$VAR`, a glob, a brace expansion; a `Pattern` for one that can
only become file names with a known prefix, to the rules that take them) and either raises `Refusal`
or returns whether the command reads standard input. The walk (`_walk`) decides whether standard input
is a pipe, a file or the terminal, and checks the paths read (`_paths`).

This module holds the simple per-verb rules (grep/rg, tail, find, date, test, printf, hostname, env,
jq) and the `RULES` table; git is in `_git`, sed and awk in `_scripts`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ._git import git
from ._scripts import awk, sed
from ._secrets import DUMPS
from ._shell_rules import SHELL_RULES
from ._verb import Arg, Pattern, Refusal, Rule, Verb, denied_option, names, opaque_refusal, operands

__all__ = [
    "INTERACTIVE",
    "NAMES_ONLY",
    "PATTERN_RULES",
    "RULES",
    "TEXT_ONLY",
    "WRAPPERS",
    "follows_links",
    "reads_recursively",
    "verb_rule",
]

WRAPPERS = names("""exec eval nice nohup timeout sudo su doas builtin time watch
    stdbuf ionice chroot unbuffer script bash sh zsh dash ksh fish csh tcsh perl
    ruby php lua source busybox setsid flock parallel strace ltrace taskset chrt runuser pkexec coproc""")
"""Verbs that run another command: whatever they run escapes the whitelist."""

INTERACTIVE = names("""top htop btop atop less more most pg vi vim nvim view nano emacs ed man info
    yes sleep ssh telnet ftp sftp nc ping read wait fg bg tmux screen""")
"""Verbs that wait on a terminal or never end."""


_PLAIN = Verb(opaque_ok=True)
_FILTER = Verb(stdin="default", opaque_ok=True)
_GREP_VALUES = names("""regexp file max-count after-context before-context context devices directories
    include exclude exclude-dir exclude-from label binary-files group-separator""")
_RG_VALUES = names("""regexp file glob iglob type type-not type-add type-clear after-context
    before-context context encoding max-count max-columns threads replace max-depth max-filesize color
    colors sort sortr path-separator context-separator engine ignore-file dfa-size-limit regex-size-limit""")


@dataclass(frozen=True)
class _Search:
    """grep and rg: the first operand is the pattern unless `-e`/`-f` gave it.

    A class rather than a closure so that the rule's body runs at each check, not when the table is
    built (mutation testing switches a change on only after the import)."""

    verb: Verb
    recursive: frozenset[str]
    """The options that search a whole tree (there standard input is read only when named `-`)."""
    walks: bool = False
    """Without a path it searches the working directory (rg: the jail's standard input is /dev/null,
    which rg does not search), so it never reads the terminal."""

    def __call__(self, name: str, args: Sequence[Arg]) -> bool:
        verb = self.verb
        by_option = verb(name, args) and verb.option_reads_stdin(args)  # `-f -`: patterns from stdin
        flags = {a.partition("=")[0] for a in args if a and a.startswith("-")}
        shorts = {f"-{c}" for a in args if a and a.startswith("-") and a[1:2] != "-" for c in a[1:]}
        given = bool({"-e", "-f", "--regexp", "--file", "--files", "--type-list"} & (flags | shorts))
        files = operands(args, verb.shorts, verb.longs)[0 if given else 1 :]
        if self.recursive & (flags | shorts) or "--directories=recurse" in args or self.walks:
            return by_option or "-" in files
        return by_option or verb.reads_stdin(files)


def _tail(name: str, args: Sequence[Arg]) -> bool:
    # The obsolete forms `tail +f`, `tail +5cf`, `tail -5f` follow the file too.
    if any(a and a[0] in "+-" and ("f" in a or "F" in a) and a[1:2] != "-" for a in args):
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
    rest = list(args)
    starts = args[: next((i for i, a in enumerate(args) if a and a[0] in "-(!"), len(args))]
    prefix = min(((a.prefix if isinstance(a, Pattern) else a) or "" for a in starts), default="./", key=len)
    found: Arg = Pattern("{}", prefix) if prefix and not prefix.startswith("-") else None
    while rest:
        arg = rest.pop(0)
        if arg == "-exec":
            rest = _exec(rest, found)
        elif arg in _FIND_ACTIONS:
            raise Refusal(f"`find {arg}` deletes, writes, runs a program or reads names from a file")
    return False


_FIND_ACTIONS = names("-exec -execdir -ok -okdir -delete -fprint -fprint0 -fprintf -fls -files0-from")


def _exec(args: list[Arg], found: Arg) -> list[Arg]:
    """`find … -exec VERB ARGS {} ;` (or `{} +`): VERB must be a read-only verb whose rule takes the
    found names (`found`: each starts with a start path, so none is an option) and reads no standard
    input; returns the arguments after `;` or `+`."""
    end = next((i for i, a in enumerate(args) if a == ";" or (a == "+" and i and args[i - 1] == "{}")), -1)
    if end < 1:
        raise Refusal("`find -exec` without a command ended by `;` or `{} +`")
    child(str(args[0]), [found if arg == "{}" else arg for arg in args[1:end]], "find -exec")
    return args[end + 1 :]


def child(name: str, args: Sequence[Arg], how: str) -> None:
    """Refuse what `find -exec` or `xargs` must not run: anything but a read-only program of the table
    (not a shell builtin, not git, whose read-only options the wall inserts only after a `git` it sees),
    or one that would read standard input; `None` stands for the names it is given."""
    if name in SHELL_RULES or name in ("git", "find", "xargs"):
        raise Refusal(f"`{how}` runs `{name}`, which a glance runs only as a command of its own")
    if verb_rule(name)(name, args):
        raise Refusal(f"`{how}` runs `{name}` reading standard input")


def _xargs(name: str, args: Sequence[Arg]) -> bool:
    """`xargs [-0rt] [-n N] [-L N] [-d C] [-P N] VERB ARGS`: VERB is checked as for `find -exec`, with the
    names read from standard input (unknown) after ARGS."""
    i = 0
    while i < len(args) and (arg := args[i]) is not None and arg.startswith("-") and arg != "--":
        if arg in ("-n", "-L", "-d", "-P", "--max-args", "--max-lines", "--delimiter", "--max-procs"):
            i += 2
        elif arg in _XARGS_FLAGS or (arg[:2] in ("-n", "-L", "-d", "-P") and arg[1] != "-"):
            i += 1
        else:
            raise Refusal(f"option `{arg}` of `xargs` replaces, prompts, or reads its names from a file")
    i += i < len(args) and args[i] == "--"
    if i >= len(args) or args[i] is None:
        raise Refusal("`xargs` without a command written out runs `echo`, or any command")
    child(str(args[i]), [*args[i + 1 :], None], "xargs")
    return True


_XARGS_FLAGS = names("-0 -r -t --null --no-run-if-empty --verbose -0r -r0 -rt -tr -0t -t0")


def _cmp(name: str, args: Sequence[Arg]) -> bool:
    """`cmp FILE` compares FILE with standard input."""
    reads = _CMP(name, args)
    return reads or len(operands(args, _CMP.shorts, _CMP.longs)) < 2


_CMP = Verb(
    short_values="inI", long_values=frozenset({"ignore-initial", "bytes"}), stdin="dash", opaque_ok=True
)


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
    # a `-` anywhere may be standard input (a file operand, `-f -`, `--slurpfile NAME -`)
    return "-" in args or (not null_input and not files)


def _strings(name: str, args: Sequence[Arg]) -> bool:
    if any(arg is not None and arg.startswith("@") for arg in args):
        raise Refusal("`strings @FILE` reads its options from a file")
    return _STRINGS(name, args)


_STRINGS = Verb(
    short_values="nsteT",
    long_values=frozenset({"bytes", "radix", "encoding", "target", "output-separator", "unicode"}),
    stdin="default",
)

_SUMS = "md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum"

RULES: dict[str, Rule] = {
    **SHELL_RULES,
    **dict.fromkeys(names("ls pwd whoami id uname nproc arch true false echo uptime groups"), _PLAIN),
    **dict.fromkeys(names("basename dirname realpath readlink which type"), _PLAIN),
    # zsh's `stat` builtin (zsh/stat) assigns an array with -A or -H: a run-time `-A` must not get in.
    "stat": Verb(deny_short="AH"),
    "df": Verb(deny_long=("sync",)),
    "du": Verb(
        deny_long=("files0-from",),
        short_values="BdtX",
        long_values=frozenset({"block-size", "max-depth", "threshold", "time-style", "exclude"}),
        stdin="dash",
        stdin_values=("-X", "--exclude-from"),
        opaque_ok=True,
    ),
    "free": Verb(deny_short="sc", deny_long=("seconds", "count")),
    **dict.fromkeys(names("lscpu locale"), _PLAIN),
    "od": Verb(short_values="AjNSstw", stdin="default", opaque_ok=True),
    # `xxd IN OUT` and `xxd -r` write a file: one operand at most, no `-r` (xxd reads any `-r…` as it)
    "xxd": Verb(deny_short="r", short_values="cglnosR", stdin="default", max_operands=1),
    # `strings @FILE` reads its options from FILE (and would print them in its complaints)
    "strings": _strings,
    "hexdump": Verb(short_values="efns", stdin="default", opaque_ok=True),
    **dict.fromkeys(names("cat rev"), _FILTER),
    # `--files0-from=F` and `-c F` read the files that F names: any path, devices included. A glob can
    # still expand to such a name: like a symbolic link, that only changes what is read.
    "wc": Verb(deny_long=("files0-from",), stdin="default", opaque_ok=True),
    **dict.fromkeys(
        names(_SUMS), Verb(deny_short="c", deny_long=("check",), stdin="default", opaque_ok=True)
    ),
    "head": Verb(
        short_values="cn", long_values=frozenset({"bytes", "lines"}), stdin="default", opaque_ok=True
    ),
    "tail": _tail,
    "tac": Verb(short_values="s", long_values=frozenset({"separator"}), stdin="default", opaque_ok=True),
    # `file -z` runs decompressors.
    "file": Verb(
        deny_short="CzZ",
        deny_long=("compile", "uncompress", "uncompress-noreport"),
        short_values="emFP",
        long_values=frozenset({"exclude", "exclude-quiet", "magic-file", "separator", "parameter"}),
        stdin="dash",
        stdin_values=("-f", "--files-from"),
    ),
    "tree": Verb(deny_short="oR", deny_long=("output", "fromfile")),
    "find": _find,
    "xargs": _xargs,
    **dict.fromkeys(
        names("grep egrep fgrep"),
        _Search(
            Verb(
                short_values="emABCdD",
                long_values=_GREP_VALUES - {"file", "exclude-from"},
                stdin="default",
                stdin_values=("-f", "--file", "--exclude-from"),
                opaque_ok=True,
            ),
            frozenset({"-r", "-R", "--recursive", "--dereference-recursive"}),
        ),
    ),
    "rg": _Search(
        Verb(
            deny_short="z",
            deny_long=("pre", "pre-glob", "search-zip", "hostname-bin"),
            short_values="egtTABCmMjrEd",
            long_values=_RG_VALUES - {"file", "ignore-file"},
            stdin="default",
            stdin_values=("-f", "--file", "--ignore-file"),
        ),
        frozenset(),
        walks=True,
    ),
    "sort": Verb(
        deny_short="oT",
        deny_long=("output", "compress-program", "temporary-directory", "files0-from"),
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
    "jq": _jq,
    # `diff -l` pipes its output through `pr`; `--from-file=-` and `-X -` read standard input
    "diff": Verb(
        deny_short="l",
        deny_long=("paginate",),
        short_values="CUDFIS",
        long_values=names("""context unified ifdef show-function-line label ignore-matching-lines
            starting-file exclude line-format old-line-format new-line-format unchanged-line-format
            old-group-format new-group-format changed-group-format unchanged-group-format tabsize
            width color palette horizon-lines"""),
        stdin="dash",
        stdin_values=("-X", "--exclude-from", "--from-file", "--to-file"),
        opaque_ok=True,
    ),
    "cmp": _cmp,
    "comm": Verb(stdin="dash", opaque_ok=True),
    "sed": sed,
    "awk": awk,
    "git": git,
}
"""Every verb that may run as a glance. Names are matched exactly: `LS` and `/bin/ls` are not `ls`."""

PATTERN_RULES = frozenset(
    {"git", "printf", *(name for name, rule in RULES.items() if isinstance(rule, Verb))}
)
"""Verbs whose rule takes a `Pattern`: a word that can only become file names with a known prefix."""

TEXT_ONLY = names("echo printf basename dirname true false")
"""Verbs whose arguments are text, never a file: they may name a credential store (`echo ~/.ssh`)."""

NAMES_ONLY = names("""ls stat realpath readlink basename dirname echo printf test [ which type pwd true
    false id whoami uname nproc arch hostname uptime groups free ulimit command locale""")
"""Verbs that never open their arguments: they may name a device (`ls -l /dev/tty`)."""


def reads_recursively(name: str, args: Sequence[Arg]) -> bool:
    """Whether the command walks whole directory trees: from `/` it meets /proc/kmsg, or takes minutes."""
    if name in ("rg", "du", "find", "tree"):
        return True
    if name == "ls":
        return bool(denied_option(args, "R", ("recursive",), ()))
    if name in ("grep", "egrep", "fgrep"):
        return bool(denied_option(args, "rRd", ("recursive", "dereference-recursive", "directories"), ()))
    if name == "diff":
        return bool(denied_option(args, "r", ("recursive",), ()))
    return False


def follows_links(name: str, args: Sequence[Arg]) -> str:
    """The option that makes a recursive verb follow symbolic links while it walks, or ''."""
    if name in ("grep", "egrep", "fgrep"):
        return denied_option(args, "R", ("dereference-recursive",), ())
    if name == "find":
        return next((arg for arg in args if arg in ("-L", "-follow")), "")
    found = {"rg": ("L", ("follow",)), "du": ("L", ("dereference",)), "ls": ("L", ("dereference",))}
    if name in found:
        short, long = found[name]
        return denied_option(args, short, long, ())
    return denied_option(args, "l", (), ()) if name == "tree" else ""


def verb_rule(name: str) -> Rule:
    """The rule for `name`, or a `Refusal` saying why it is not on the whitelist."""
    if name in DUMPS:
        raise Refusal(DUMPS[name], secret=True)
    rule = RULES.get(name)
    if rule is None:
        if name in WRAPPERS:
            raise Refusal(f"`{name}` runs another command")
        if name in INTERACTIVE:
            raise Refusal(f"`{name}` is interactive or never ends")
        raise Refusal(f"`{name}` is not a read-only command")
    return rule
