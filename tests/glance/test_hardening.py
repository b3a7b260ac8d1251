"""Glance against commands that look read-only but run a program, change state or never end, in bash or zsh.

One section per class found by an audit, each with the siblings of the reported command: 96 of these
commands passed before the checks, the others already were refused and must stay so. What the
reported ones do when run is shown by `test_shells.py`.
"""

from __future__ import annotations

import pytest

from flower._glance import glance_verdict, is_ephemeral

HARDENED_GIT = (
    "git --no-optional-locks -c core.fsmonitor= -c diff.autoRefreshIndex=false"
    " -c safe.bareRepository=explicit -c protocol.allow=never"
)

# 1. bash evaluates the subscript of a `{name[…]}` before a redirection: a quoted `$(…)` in it runs.
FD_VARIABLE_SUBSCRIPT = [
    f"{verb} {{a['$(touch PWNED)']}}>/dev/null"
    for verb in ("ls", "cat f", "echo x", "wc -l f", "grep x f", "head f", "diff a b", "pwd", "type ls")
] + [
    f"ls {{a['$(touch PWNED)']}}{operator}"
    for operator in (
        ">>/dev/null",
        "</dev/null",
        "<f",
        ">&2",
        "<&0",
        ">&-",
        "<&-",
        ">|/dev/null",
        "&>/dev/null",
    )
]

# 2. zsh reads `$name[…]` as a subscript and runs a `$(…)` inside it, quoted or not; its arithmetic
# (printf's numeric arguments) does the same with `name[…]`; `~[…]` calls a function.
ZSH_SUBSCRIPT = [
    "echo $HOME['$(touch PWNED)']",
    "echo \"$HOME['$(touch PWNED)']\"",
    "echo $HOME[1]",
    "ls $path[1]",
    'cat "$HOME[1]"',
    "echo $1['$(touch PWNED)']",
    "echo $?[1]",
    "[ $HOME['$(touch PWNED)'] = x ]",
    "printf %d 'path[$(touch PWNED)]'",
    "printf '%.*s' 'path[$(touch PWNED)]' x",
    "printf '%s %x\\n' a 'HOME[`touch PWNED`]'",
    "printf %d 'path[$(touch PWNED)]'*",  # a glob that matches nothing stays as it is (NO_NOMATCH)
    "ls ~['$(touch PWNED)']",
    "echo 'a''b'",  # RC_QUOTES: zsh reads `a'b`
]

# 3. On a builtin, `{PATH}>…` stores the descriptor number in PATH for the rest of the command.
FD_VARIABLE_ASSIGNMENT = [
    "echo hi {PATH}>/dev/null; ls",
    "pwd {PATH}>/dev/null && ls",
    "true {HOME}</dev/null; ls ~",
    "echo {PATH}>&2; ls",
    "type ls {IFS}>/dev/null; ls a",
]

# 4. git must not open a repository other than the project's: one committed inside it (a bare repository
# or a gitfile) carries its own configuration, and `core.fsmonitor` runs a program.
GIT_ELSEWHERE = [
    "git -C sub status",
    "git -C sub log",
    "git --git-dir=sub status",
    "git --git-dir sub log",
    "git --work-tree=sub status",
    "git --bare log",
    "git --namespace=x log",
    "git -c core.fsmonitor=./hook status",
    "git -c safe.bareRepository=all status",
    "git --config-env=core.fsmonitor=HOOK status",
    "GIT_DIR=sub git status",
    "git --exec-path=./bin status",
]

# 5. Reads that never end: `tail +f`, and devices or /proc files under any spelling.
ENDLESS = [
    "tail +f log",
    "tail +cf log",
    "tail +lf log",
    "tail +5f log",
    "tail -5cf log",
    "tail --fo log",
    "tail -F log",
    "cat //dev/zero",
    "cat ///dev/zero",
    "cat /./dev/zero",
    "cat /tmp/../dev/zero",
    "cat /dev//zero",
    "wc -c < //dev/zero",
    "wc -c </./dev/zero",
    "cat /proc/self/root/dev/zero",
    "cat /proc/1/root/dev/zero",
    "cat /proc/self/fd/0",
    "cat /proc/self/cwd/../../dev/zero",
    "cat /proc/kmsg",
    "cat /proc/kcore",
    "cat /proc/self/task/1/root/dev/zero",
    "cat /dev/stdin",
    "cat /dev/fd/0",
    "head -n1 /dev/urandom",
    "cat ../../../../../../dev/zero",
    "cat ~/../../../../dev/zero",
    "cat $HOME/../../../../dev/zero",
    "cat ${HOME}/../../../dev/zero",
    "cat $X/dev/zero",
    "cat /de?/zero",
    "cat /*/zero",
    "cat /{dev,x}/zero",
    "cat /d[e]v/zero",
    "rev $'/dev/zero'",  # found by the fuzzer: `$'…'` was not decoded
    "cat $'\\x2fdev\\x2fzero'",
    "echo $'\\101'",  # octal: bash and zsh differ in the details
    "echo $'\\u00e9'",
    "cat /sys/kernel/tracing/trace_pipe",
    "grep -r x /",
    "grep -R x //",
    "grep -rn x ../../../../..",
    "rg x /",
    "rg x /.",
    "diff -r / x",
    "du /",  # a walk of the whole tree takes minutes
    "md5sum {-c,} sums",  # found by the fuzzer: a brace expansion that becomes a refused option
    # found by the fuzzer: tree-sitter-bash splits a word at an escape inside braces; the shells do not
    "cat /{\\dev,x}/zero",
    "lscpu /{\\dev,x}/zero^",
    "wc -c < /{\\dev,}/zero",  # zsh (MULTIOS) reads both files of an expanded input redirection
    "wc {--files0-from=list,}",
    "grep x {-r,} /",
    "grep -fpr[int .. -v",  # found by the fuzzer: an option with a glob character, read as unknown
    "grep -r[x] x ..",
    "cat {-n,} f",
    "echo --files0-from=/dev/zero; wc $_",  # `$_`: the last argument of the previous command
    "echo /dev/zero; cat $_",
    "echo /dev/zero; cat ${_}",
    "cat $BASH_COMMAND",
    "du {${HOME}} awk",  # found by the fuzzer: zsh's BRACE_CCL makes `{…}` its characters, `/` among them
    "du {/}",
    "du /*",
    "du ~",
    "du -sh $HOME",
    "du ../../../../..",
    "find / -name x",
    "find ~ -name x",
    "tree /",
    "ls -R /",
    "ls --recursive //",
    "grep -r x /*",
    "grep -r x ../*",
    "sort --random-source=/dev/zero f",
    "grep -f/dev/zero x",
    "grep --file=/dev/zero x",
    "jq -n --rawfile a /dev/zero 1",
    "awk '{print}' x=/dev/zero /dev/zero",
    "date -f /dev/zero",
    "md5sum -c sums.txt",
    "sha256sum --check sums.txt",
    "wc --files0-from=list",
    "free -s 1",
    "free -c 100000",
    "watch ls",
    "yes",
]

# 7. Commands that still write, run a program or reach the network.
STATE_OR_NETWORK = [
    "git describe --dirty",
    "git describe --always --broken",
    "git describe --dirty=-modified",
    "file -z archive.gz",
    "file -Z archive.gz",
    "file --uncompress archive.gz",
    "sort -T tmp f",
    "sort --temporary-directory=tmp f",
    "sort --temp=tmp f",
    "df --sync",
    "df --sy",
    "awk '{print}' /inet/tcp/0/example.com/80",
    "awk '{print}' //inet/tcp/0/example.com/80",
    "awk '{print}' /inet6/udp/0/example.com/53",
    "awk 'BEGIN { ARGV[1] = \"/inet/tcp/0/example.com/80\"; ARGC = 2 } { print }'",
    "awk 'BEGIN{ARGV[ARGC++]=\"/dev/zero\"} {print}' f",
    "hostname -f",
    "hostname -i",
    "hostname --fqdn",
    "ls >&10",
    "cat <&10",
    "echo x 1>&9",
    "stat -A PATH f",
    "env ls",
    "env X=1 ls",
    "env -S 'ls -l'",
]

REFUSED = {
    "fd-variable subscript (bash)": FD_VARIABLE_SUBSCRIPT,
    "subscript or arithmetic (zsh)": ZSH_SUBSCRIPT,
    "fd-variable assignment": FD_VARIABLE_ASSIGNMENT,
    "git outside the project's repository": GIT_ELSEWHERE,
    "endless read": ENDLESS,
    "state or network": STATE_OR_NETWORK,
}
ROWS = [(label, command) for label, commands in REFUSED.items() for command in commands]


@pytest.mark.parametrize(("label", "command"), ROWS, ids=[repr(c) for _, c in ROWS])
def test_refused(label: str, command: str) -> None:
    verdict = glance_verdict(command)
    assert not verdict.ephemeral, f"{label}: accepted"
    assert verdict.reason and "internal error" not in verdict.reason
    assert verdict.command == ""


# Their harmless neighbours keep passing.
KEPT = [
    "ls -l /dev/null",
    "ls -l /dev/tty /dev/zero",  # `ls` only names them
    "stat /dev/zero",
    "[ -c /dev/tty ] && echo tty",
    "cat /proc/cpuinfo",
    "cat /proc/meminfo | head -5",
    "cat /proc/self/status",
    "cat /proc/net/tcp",
    "cat /proc/sys/kernel/hostname",
    "cat src/dev/fixture.txt",
    "cat dev/notes.md",
    "grep -rn TODO src",
    "grep -rn TODO .",
    "rg -n main src",
    "tail -n 20 log",
    "tail -5 log",
    "tail -c 100 f",
    "git show HEAD^",
    "git show HEAD~1:README.md",
    "git diff HEAD~2 HEAD",
    "git log @{u}..HEAD",
    "git log -g HEAD@{1}",
    "git describe --tags --always",
    "git version",
    "git --version",
    "sort -k2 -n f",
    "sha256sum dist/*.whl",
    "md5sum f",
    "wc -l src/*.py",
    "du -sh *",
    "du -sh src",
    "du -h --max-depth=1",
    "find . -name '*.py'",
    "tree -L 2",
    "ls -R",
    "ls -la /",
    "grep -rn TODO *",
    "file data.bin",
    "df -h .",
    "free -m",
    "free -h",
    "uptime",
    "hostname",
    "hostname -s",
    "hostname -I",
    "printf '%d items\\n' 3",
    "printf '%s\\n' a b",
    "[ 3 -gt 2 ] && echo yes",
    "test -n x",
    "ls 2>&1 | head",
    "ls >&2",
    "echo x 1>&2",
    "ls 3>&1",
    "echo ${HOME}",
    "echo $HOME",
    'echo "$HOME/x"',
    "ls ~/projects",
    "cat ~/.config/git/ignore",
    "echo a{b,c}",
    "cat src/{a,b}.py",
    "wc -l *.py",
    "md5sum *",
    "echo $?",
    "cut -d$'\\t' -f1 data.tsv",
    "echo $'a\\tb'",
]


@pytest.mark.parametrize("command", KEPT, ids=repr)
def test_neighbours_kept(command: str) -> None:
    verdict = glance_verdict(command)
    assert verdict.ephemeral, verdict.reason


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git status", f"{HARDENED_GIT} status"),
        ("git status -s && git diff --stat", f"{HARDENED_GIT} status -s && {HARDENED_GIT} diff --stat"),
        ("ls | git cat-file --batch-check", f"ls | {HARDENED_GIT} cat-file --batch-check"),
        ("2>/dev/null git log -1 # git", f"2>/dev/null {HARDENED_GIT} log -1 # git"),
        ("git\tlog", f"{HARDENED_GIT}\tlog"),
        ("echo git; ls", "echo git; ls"),
        ("ls é && git log", f"ls é && {HARDENED_GIT} log"),
        (f"{HARDENED_GIT} status", f"{HARDENED_GIT} status"),
    ],
)
def test_git_runs_hardened(command: str, expected: str) -> None:
    verdict = glance_verdict(command)
    assert verdict.ephemeral, verdict.reason
    assert verdict.command == expected
    assert is_ephemeral(verdict.command)  # what runs is itself a glance


def test_only_the_hardening_settings_pass_with_dash_c() -> None:
    assert is_ephemeral("git -c protocol.allow=never log")
    assert not is_ephemeral("git -c protocol.allow=always log")
    assert not is_ephemeral("git -c core.pager=less log")
