"""The parser's rules for the verbs with the most branches, row by row through `glance_verdict`.

The rows pin each branch of a rule (found by the mutation pass, docs/testing.md): which option makes a
recursive verb follow links, where grep and rg take their pattern and when they read standard input,
git's listing forms of `branch` and `tag`, the values of `git config`'s options, and the operands of
`test` and `[`. The rows of the other rules are in `tests/glance/test_parser.py`.
"""

from __future__ import annotations

import pytest

from flower._glance import glance_verdict
from tests.glance.parser_reasons import CONFIG, GLANCE, REMOTE, WHOLE_TREE

FOLLOWS = "follows symbolic links while walking: a link in the project may lead to a device or a named pipe"
TERMINAL = "`{}` would read the terminal here: nothing is piped or redirected into it"

VERBS = [
    # a recursive verb that follows symbolic links: each verb's own option, and only that one
    ("grep -R x .", f"`grep -R` {FOLLOWS}"),
    ("egrep -R x .", f"`egrep -R` {FOLLOWS}"),
    ("fgrep -R x .", f"`fgrep -R` {FOLLOWS}"),
    ("grep -r --dereference-recursive x .", f"`grep --dereference-recursive` {FOLLOWS}"),
    ("grep -r --color x .", GLANCE),
    ("grep -rX x .", GLANCE),
    ("find . -follow", f"`find -follow` {FOLLOWS}"),
    ("find . -FOLLOW", GLANCE),
    ("rg -L x .", f"`rg -L` {FOLLOWS}"),
    ("rg --follow x .", f"`rg --follow` {FOLLOWS}"),
    ("rg -l x .", GLANCE),
    ("rg -X x .", GLANCE),
    ("du -L", f"`du -L` {FOLLOWS}"),
    ("du --dereference", f"`du --dereference` {FOLLOWS}"),
    ("du -X pats", GLANCE),
    ("ls -RL", f"`ls -RL` {FOLLOWS}"),
    ("ls -R --dereference", f"`ls --dereference` {FOLLOWS}"),
    ("ls -RX", GLANCE),
    ("tree -l", f"`tree -l` {FOLLOWS}"),
    ("tree -X", GLANCE),
    ("tree -a --noreport", GLANCE),
    ("diff -r a b", GLANCE),
    ("ls -R ../dev/..", f"`ls` {WHOLE_TREE}"),  # from an unknown directory `..` may be `/`
    ("ls -R ../$X/..", f"`ls` {WHOLE_TREE}"),
    ("diff -r -l a b", "option `-l` of `diff` writes a file, runs a program or never ends"),
    # grep and rg: the pattern is the first operand unless -e/-f gave it; a recursive search reads
    # standard input only when named `-`
    ("grep -e x f", GLANCE),
    ("grep -e x", TERMINAL.format("grep")),
    ("grep -f pats f", GLANCE),
    ("grep --regexp x f", GLANCE),
    ("grep --regexp=x f", GLANCE),
    ("grep --file pats f", GLANCE),
    ("grep -ie x f", GLANCE),
    ("rg --type-list .", GLANCE),
    ("rg -z x .", "option `-z` of `rg` writes a file, runs a program or never ends"),
    ("grep --color x", TERMINAL.format("grep")),
    ("grep -A 3 x", TERMINAL.format("grep")),
    ("grep --context 3 x", TERMINAL.format("grep")),
    ("grep -r x", GLANCE),
    ("grep -ir x", GLANCE),
    ("grep -ri x", GLANCE),
    ("grep -r -e x", GLANCE),
    ("grep --directories=recurse x", GLANCE),
    ("grep -r x -", TERMINAL.format("grep")),
    ("grep -r -f - .", TERMINAL.format("grep")),
    # git branch and git tag: listing forms only
    ("git branch -l -v x", GLANCE),
    ("git branch --list --merged main x", GLANCE),
    ("git branch x", "`git branch NAME` creates a branch"),
    ("git branch -d x", "`git branch -d` changes branches"),
    ("git branch -", "`git branch -` changes branches"),
    ("git branch -X", "`git branch -X` changes branches"),
    ("git branch --sort -committerdate", "`git branch -committerdate` changes branches"),
    ("git branch --sort=-committerdate", GLANCE),
    ("git tag -a", "`git tag -a` changes tags"),
    ("git tag -X", "`git tag -X` changes tags"),
    ("git tag -n", GLANCE),
    ("git tag -n5 v1", GLANCE),
    ("git tag -nx", "`git tag -nx` changes tags"),
    ("git tag v1", "`git tag NAME` creates a tag"),
    ("git remote show --x -n origin", REMOTE),
    # git config: an option's value is the next word whatever it looks like (a file named `--list`)
    ("git config --file --list user.name x", CONFIG),
    ("git config -f --list user.name x", CONFIG),
    ("git config --file --list", CONFIG),
    ("git config --file f.cfg user.name", GLANCE),
    ("git config --file f.cfg --list", GLANCE),
    ("git config --global --file f.cfg user.name", GLANCE),
    # test and [: integer operators with plain integers on both sides, -t with one
    ("test 1 -eq 2", GLANCE),
    ("test a -eq 1", "`test -eq` with an operand that is not a plain integer"),
    ("test 1 -eq a", "`test -eq` with an operand that is not a plain integer"),
    ("test a 1 -eq 2", GLANCE),
    ("test 1 -eq 2 x", GLANCE),
    ("test -t 1 a", GLANCE),
    ("test x -t 1", GLANCE),
    ("test -t a", "`test -t` with an operand that is not a plain integer (zsh evaluates it)"),
    ("test -t ]", GLANCE),
    ("test $X", "`test` has an argument known only at run time ($VAR, glob or brace expansion)"),
    ("[ ( a -eq 1 ) ]", "`[ -eq` with an operand that is not a plain integer"),
    ("[ ( 1 ) ]", GLANCE),
    ("[ ! x ]", GLANCE),
    ("[ a = b ]", GLANCE),
    ('[ "a" == "b" ]', GLANCE),
    ("[ 1 != 2 ]", GLANCE),
    ("[ a < b ]", "output redirection to a file"),
    ("[ a > b ]", "output redirection to a file"),
    ("[ a >> b ]", "output redirection to a file"),
    ("[ a << b ]", "output redirection to a file"),
    ("[ a =~ b ]", "shell syntax a glance does not accept ('=~')"),
    ("[ -f *.py ]", "`[` has an argument known only at run time ($VAR, glob or brace expansion)"),
]


@pytest.mark.parametrize(("command", "reason"), VERBS, ids=[c for c, _ in VERBS])
def test_the_reason_of_each_verb_row(command: str, reason: str) -> None:
    assert glance_verdict(command).reason == reason
