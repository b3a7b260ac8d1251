"""The parser's rules command by command, each row through `glance_verdict` as the wall calls it.

Rows that pin a rule's branches one at a time (an option that takes a value, an operand that is a file
or standard input), where the table of `tests/glance/table.py` holds one or two rows per command.
A command that would read standard input from the terminal is refused: that is how a rule's answer
(does it read stdin?) shows in a verdict.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from flower._glance import glance_verdict
from flower._glance._words import MAX_EXPANSION, _range_size
from tests.glance.parser_reasons import (
    COMMAND,
    CONFIG,
    ENDLESS,
    ENVIRON,
    GLANCE,
    HOSTNAME,
    OPAQUE,
    OTHER,
    OUTSIDE,
    REMOTE,
    STARS,
    ULIMIT,
    WHOLE_TREE,
)

JQ = [
    ("jq . f.json", True),
    ("jq .", False),
    ("jq . -", False),
    ("echo 1 | jq .", True),
    ("jq --arg a b . f.json", True),
    ("jq --arg a b .", False),
    ("jq --argjson a 1 . f.json", True),
    ("jq --slurpfile a f.json .", False),
    ("jq --rawfile a f . f.json", True),
    ("jq --slurpfile a - . f.json", False),
    ("jq -f prog f.json", True),
    ("jq -f prog", False),
    ("jq --from-file prog f.json", True),
    ("jq --from-file prog", False),
    ("jq -L lib . f.json", True),
    ("jq -L lib .", False),
    ("jq --indent 2 . f.json", True),
    ("jq --indent 2 .", False),
    ("jq --args . a b", False),
    ("jq --jsonargs . 1 2", False),
    ("jq . f.json --args a", True),
    ("jq -n 1", True),
    ("jq --null-input 1", True),
    ("jq -rn 1", True),
    ("jq -r 1", False),
    ("jq --raw-output 1", False),
    ("jq -n input", False),
    ("jq -n inputs", False),
    ("jq -nr input", False),
    ('jq -n "first(inputs)"', False),
    ("jq -n input f.json", True),
    ("jq -n -f prog", True),
    ("jq -- . f.json", True),
    ("jq . -- f.json", True),
    ("jq --", False),
    ("jq -n -f input.jq", True),
    ("jq -n --from-file input.jq", True),
    ("jq -f prog -L lib f.json", True),
    ("jq . -- -a", True),
    ("jq --join-output .", False),
    ("jq --argjson a 1 .", False),
    ("jq --rawfile a f .", False),
    ("jq -n $F", False),  # a program known only at run time may be `input`
    ("jq . $F", True),
]


@pytest.mark.parametrize(("command", "glance"), JQ, ids=[c for c, _ in JQ])
def test_jq_reads_the_terminal_only_without_a_file(command: str, glance: bool) -> None:
    verdict = glance_verdict(command)
    assert verdict.ephemeral is glance, verdict.reason
    if not glance:
        assert verdict.reason == "`jq` would read the terminal here: nothing is piped or redirected into it"


ROWS = [
    # command, hostname, ulimit, --version
    ("command -v ls", GLANCE),
    ("command -V ls", GLANCE),
    ("command -v Ls git-lfs", GLANCE),
    ("command -v ls $X", COMMAND),
    ("command ls", COMMAND),
    ("command -v", COMMAND),
    ("hostname", GLANCE),
    ("hostname -f", HOSTNAME),
    ("hostname x", HOSTNAME),
    ("ulimit -a", GLANCE),
    ("ulimit -Sn", GLANCE),
    ("ulimit -n 10", ULIMIT),
    ("node --version", GLANCE),
    ("node -V", GLANCE),
    ("node -v", "`node` runs a program; only `node --version` is a glance"),
    # shell syntax a glance does not accept, each with its own reason
    ("( ls )", "a subshell `( … )`"),
    ("{ ls; }", "a `{ … }` group"),
    ("f() { ls; }", "a function definition"),
    ("X=1", "a variable assignment"),
    ("unset X", "`unset` changes shell state"),
    ("[[ -f x ]]", "a `[[ … ]]` test"),
    ("ls <<< x", "a here-string"),
    ("echo $(ls)", "command substitution"),
    # tail: following a file never ends, in the option's obsolete forms too
    ("tail -n 5 log", GLANCE),
    ("tail -n +5 log", GLANCE),
    ("tail Xf", GLANCE),
    ("tail -f log", "`tail -f` never ends"),
    ("tail -F log", "`tail -f` never ends"),
    ("tail +5F log", "`tail -f` never ends"),
    ("tail --fo log", "option `--fo` of `tail` writes a file, runs a program or never ends"),
    ("tail --retry log", "option `--retry` of `tail` writes a file, runs a program or never ends"),
    # date: options with a value, `+FORMAT`, never setting the clock
    ("date --date yesterday", GLANCE),
    ("date --file dates.txt", GLANCE),
    ("date --reference f", GLANCE),
    ("date -f dates.txt", GLANCE),
    ("date -r f", GLANCE),
    ("date -d yesterday +%s", GLANCE),
    ("date -Iseconds", GLANCE),
    ("date -f -", "`date` would read the terminal here: nothing is piped or redirected into it"),
    ("date -s 1", "option `-s` of `date` writes a file, runs a program or never ends"),
    ("date 0101", "`date` with an operand that is not a `+FORMAT` sets the clock"),
    ("date -X 0101", "`date` with an operand that is not a `+FORMAT` sets the clock"),
    ("date -X +%s", GLANCE),
    # a glob that may become an option is known only at run time
    ("wc -*", "`wc` has an argument known only at run time ($VAR, glob or brace expansion)"),
    ("wc src/*.py", GLANCE),
    # cmp compares a lone file with standard input
    ("cmp a b", GLANCE),
    ("cmp a", "`cmp` would read the terminal here: nothing is piped or redirected into it"),
    ("cmp a -", "`cmp` would read the terminal here: nothing is piped or redirected into it"),
    ("echo x | cmp a", GLANCE),
    # /proc: this process's short files, never another process's, an environment or an endless file
    ("cat /proc/self/status", GLANCE),
    ("cat /proc/thread-self/status", GLANCE),
    ("cat /proc/self/comm /proc/self/maps /proc/cpuinfo", GLANCE),
    ("cat /proc/self/fdinfo/3", GLANCE),
    ("cat /proc/self/task/12/status", GLANCE),
    ("cat /proc/self/task/12/fdinfo/3", GLANCE),
    ("cat /proc/self/net/dev", GLANCE),
    ("cat /proc/self/environ", f"`cat` would read {ENVIRON}"),
    ("cat /proc/1/environ", f"`cat` would read {ENVIRON}"),
    ("cat /proc/self/$X", f"`cat` would read {ENVIRON}"),
    ("cat /proc/1/status", f"`cat` would read {OTHER}"),
    ("cat /proc/$X/status", f"`cat` would read {OTHER}"),
    ("cat /proc/self/../1/status", f"`cat` would read {OTHER}"),
    ("cat /proc/self/fdinfo/x", f"`cat` would read {ENDLESS}"),
    ("cat /proc/self/fdinfo/3/x", f"`cat` would read {ENDLESS}"),
    ("cat /proc/self/fdinfo", f"`cat` would read {ENDLESS}"),
    ("cat /proc/self/status/x", f"`cat` would read {ENDLESS}"),
    ("cat /proc/cpuinfo/x", f"`cat` would read {ENDLESS}"),
    ("cat /proc/self/ENVIRON", f"`cat` would read {ENDLESS}"),
    ("cat /proc/self/task/x/status", f"`cat` would read {ENDLESS}"),
    ("cat /proc/1x/status", f"`cat` would read {ENDLESS}"),
    ("cat /proc/self/net/../fd/0", f"`cat` would read {ENDLESS}"),
    # credential stores named by a pattern, from a directory that may be a home
    ("cat .aw?/credentials", "`cat` would read a credential store (`~/.aws`), which a glance does not read"),
    ("cat .a*/credentials", "`cat` would read a credential store (`~/.aws`), which a glance does not read"),
    ("grep -r x .ss?", "`grep` would read a credential store (`~/.ssh`), which a glance does not read"),
    ("cat .a$X/credentials", "`cat` would read a credential store (`~/.aws`), which a glance does not read"),
    # ... or from a directory above a home, or below one
    (
        "cat alice/.aws/credentials",
        "`cat` would read a credential store (`~/.aws`), which a glance does not read",
    ),
    (
        "cat ../.ssh/id_ed25519.pub",
        "`cat` would read a credential store (`~/.ssh`), which a glance does not read",
    ),
    (
        "grep -r x ../../bob/.ssh",
        "`grep` would read a credential store (`~/.ssh`), which a glance does not read",
    ),
    (
        "du -a alice/.config",
        "`du` would read a tree that holds a credential store (`~/.config/gh`), which a glance does not read",
    ),
    ("cat src/*.py", GLANCE),
    ("command -v $X", COMMAND),
    # git config reads with one key alone or a reading option; git remote as -v, get-url or show -n
    ("git config user.name", GLANCE),
    ("git config user.name x", CONFIG),
    ("git config edit", CONFIG),
    ("git config get user.name", GLANCE),
    ("git config list", GLANCE),
    ("git config -l", GLANCE),
    ("git config get --edit", "`git config --edit` is not a read-only config option"),
    ("git config --file f.cfg --list", GLANCE),
    ("git config --global --file f.cfg user.name", GLANCE),
    ("git config --file=f.cfg --list", GLANCE),
    ("git config --file=f.cfg user.name", GLANCE),
    ("git config --type bool --get a.b", GLANCE),
    ("git config --file -z --list", GLANCE),
    ("git config --list --file", GLANCE),
    ("git config --global --get-regexp user", GLANCE),
    ("git remote", GLANCE),
    ("git remote -v", GLANCE),
    ("git remote --verbose", GLANCE),
    ("git remote get-url --push origin", GLANCE),
    ("git remote get-url a b", REMOTE),
    ("git remote show -n origin", GLANCE),
    ("git remote show -n -v origin", GLANCE),
    ("git remote show origin", REMOTE),
    ("git remote show -n --x origin", REMOTE),
    ("git remote add x y", REMOTE),
    # a pattern after git's read-only subcommand: a revision or a path with a literal prefix
    ("git log src/*.py", GLANCE),
    ("git show HEAD^", GLANCE),
    ("git log *.py", OPAQUE),
    ("git log -*", OPAQUE),
    # recursive globs: only below the working directory, after literal components that do not climb
    ("ls src/**/*.py", GLANCE),
    ("ls a/b/**", GLANCE),
    ("ls s.c/**", GLANCE),
    ('ls "a b"/**', GLANCE),
    ('ls "*"**/x', GLANCE),
    ('ls a"b"/**/c', GLANCE),
    ('ls "a/b"/**', GLANCE),
    ('ls "a/.."/**', OUTSIDE),
    ('ls "**"/x', GLANCE),
    ("ls ***/x", STARS),
    ("ls src/***", STARS),
    ("ls /**/x", OUTSIDE),
    ("ls ~/**", OUTSIDE),
    ('ls "ab"**/x', GLANCE),  # a quoted piece before `**` is as long in the mask as in the text
    ('ls "a/"**/b', GLANCE),
    ("ls ''**/..", GLANCE),
    ("ls ../**", OUTSIDE),
    ("ls src/../**", OUTSIDE),
    ('ls a/".."/**', OUTSIDE),
    ("ls .*/**", OUTSIDE),
    ('ls "."*/**', OUTSIDE),
    ("ls x.*/**", OUTSIDE),
    ('ls "$X"/**', OUTSIDE),
    ('ls "$X"**', OUTSIDE),
    # a glob in a recursive read: a pattern character stands for a name, except in a component with a
    # `.` (`?.` may be `..`) or after `/`
    ("du ./*", GLANCE),
    ('du "*"*', GLANCE),
    ("du ?.", f"`du` {WHOLE_TREE}"),
    ("du a/~*", f"`du` {WHOLE_TREE}"),
    ("ls -R /*", f"`ls` {WHOLE_TREE}"),
    ("du .*a/", f"`du` {WHOLE_TREE}"),
    ('du a*/"?."', GLANCE),  # quoted: `?.` is that name, never `..`
    ("find */X.", "`find` has an argument known only at run time ($VAR, glob or brace expansion)"),
    (
        "du -*.",
        "`du` would read a tree that holds a credential store (`~/.claude`), which a glance does not read",
    ),
    # a glob with patterns in at most three components
    ("ls a/*/*/*", GLANCE),
    ("ls a/*/*/*/*", "a glob with patterns in more than 3 path components walks a large tree"),
    # brace expansions: at most MAX_EXPANSION words
    ("echo x{1..1000}", GLANCE),
    ("echo x{1..1001}", "a brace expansion of more than 1,000 words (`x{1..100000000}`)"),
    ("echo {1..10..0}{1..100}", GLANCE),
    ("echo {1..100..3}{1..29}", GLANCE),
    ("echo {1..100..3}{1..30}", "a brace expansion of more than 1,000 words (`x{1..100000000}`)"),
    # backslashes inside double quotes
    ('echo "a\\$b"', GLANCE),
    ('echo "a\\\\b"', GLANCE),
]


@pytest.mark.parametrize(("command", "reason"), ROWS, ids=[c for c, _ in ROWS])
def test_the_reason_of_each_row(command: str, reason: str) -> None:
    assert glance_verdict(command).reason == reason


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("{1..10}", 10),
        ("{10..1}", 10),
        ("{-3..3}", 7),
        ("{3..-3}", 7),
        ("{1..9}", 9),
        ("{a..z}", 26),
        ("{z..a}", 26),
        ("{a..9}", 41),
        ("{1..10..2}", 5),
        ("{1..10..3}", 4),
        ("{1..10..-3}", 4),
        ("{1..10..0}", 10),
        ("{-1..a}", MAX_EXPANSION + 1),
        ("{a..10}", MAX_EXPANSION + 1),
        ("{ab..c}", MAX_EXPANSION + 1),
    ],
)
def test_the_size_of_a_brace_range(text: str, size: int) -> None:
    assert _range_size(text) == size


CD_ONLY = "`cd` only as `cd DIR && command`: the directory does not carry over to the next call"
CD_FULL = "`cd` needs one directory written out in full (not `-`, `~`, `$VAR` or a glob)"
CD_PROC = (
    "`cd` would go to a /proc file that never ends, blocks or leads to another file (`/proc/kmsg`, "
    "`/proc/*/fd/…`)"
)
CD_DEV = "`cd` would go to a device file other than /dev/null (`/dev/zero` never ends, `/dev/tty` waits)"
CD_SYS = "`cd` would go to a /sys file (some block forever, such as the tracing pipes)"
CD_GLOB = "a recursive glob (`**`) after a `cd`: it may walk a tree outside the working directory"
CD_SSH = "`cd` would go to a credential store (`~/.ssh`), which a glance does not read"

CD = [
    ("cd src", None, CD_ONLY),
    ("ls | cd src && ls", None, CD_ONLY),
    ("cd src && ls", None, GLANCE),
    ("cd - && ls", None, CD_FULL),
    ("cd ~ && ls", None, CD_FULL),
    ("cd +1 && ls", None, CD_FULL),
    ("cd $X && ls", None, CD_FULL),
    ("cd a b && ls", None, CD_FULL),
    ('cd "" && ls', None, CD_FULL),
    ("cd /proc/1 && ls", None, CD_PROC),
    ("cd /dev && ls", None, CD_DEV),
    ("cd /sys && ls", None, CD_SYS),
    ("cd /root/.ssh && ls", None, CD_SSH),
    ("cd .ssh && ls", None, CD_SSH),  # from an unknown directory, a relative path may be in a home
    ("cd dev && ls", "/", CD_DEV),
    ("cd proc && ls", "/", CD_PROC),
    ("cd sys && ls", "/", CD_SYS),
    ("cd etc && ls", "/", GLANCE),
    ("cd src && ls **/x", None, CD_GLOB),  # below a directory that is not the working one
]


@pytest.mark.parametrize(("command", "cwd", "reason"), CD, ids=[f"{c} in {d}" for c, d, _ in CD])
def test_cd_goes_only_to_a_plain_directory(command: str, cwd: str | None, reason: str) -> None:
    assert glance_verdict(command, cwd=cwd).reason == reason


def test_cd_to_a_hidden_directory_of_a_known_place(tmp_path: Path) -> None:
    """Known to be outside any home, `.ssh` is a plain directory."""
    (tmp_path / ".ssh").mkdir()
    assert glance_verdict("cd .ssh && ls", cwd=str(tmp_path)).reason == GLANCE
