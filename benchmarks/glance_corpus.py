"""Benign commands: read-only looks a coordinator runs, as models write them, by what they look at.

Every command here only reads, and ends: each should ideally be a glance. Some are refused all the same,
because glance cannot prove them safe under bash and zsh (a `cd` that changes the directory of the
next calls, a loop, a subshell, an interpreter); `benchmarks/bench_glance.py` measures how many.
The list is written by hand from what coordinators do; it is not tuned to what glance accepts.
"""

from __future__ import annotations

__all__ = ["BENIGN"]

LISTING = [
    "ls", "ls -la", "ls -lh src/", "ls -R | head -50", "pwd", "tree -L 2", "tree -d -L 3",
    "find . -maxdepth 2 -type d", "du -sh *", "du -sh .", "df -h", "cd src && ls", "cd .. && ls -la",
    "ls -la ~", "stat README.md", "file *", "realpath .", "ls -1 | wc -l", "ls -t | head -5", "ls *.md",
    "find . -name '*.py' | head -20", "find . -newer pyproject.toml -type f", "find . -type f -size +1M",
    "ls -la .git", "readlink -f .", "ls -d */", "tree -a -I .git -L 2", "ls src tests",
    "cd docs && ls -la", "ls -la /tmp", "find . -type f | wc -l", "ls -lS | head", "du -h --max-depth=1",
    "find src -name '*.ts' -not -path '*/node_modules/*'", "ls -la | grep '^d'",
]  # fmt: skip

READING = [
    "cat README.md", "head -50 src/main.py", "tail -20 build.log", "tail -n 100 logs/app.log",
    "sed -n '10,30p' src/app.py", "awk 'NR>=10 && NR<=20' src/app.py", "wc -l *.py", "wc -c data.bin",
    "nl -ba src/app.py | sed -n '1,40p'", "cat -n setup.cfg | head", "head -c 500 data.json",
    "cat .env.example", "cat package.json | jq .scripts", "jq '.dependencies' package.json",
    "cat pyproject.toml", "column -t -s, data.csv | head", "cut -d, -f1 data.csv | sort | uniq -c",
    "sort names.txt | uniq | wc -l", "diff a.txt b.txt", "diff -u old.cfg new.cfg", "cmp a.bin b.bin",
    "tac build.log | head", "cat a.txt b.txt", "head -n 5 *.csv", "md5sum dist/app.tar.gz",
    "sha256sum dist/*.whl", "xxd data.bin | head", "od -c data.bin | head", "grep -c '' notes.txt",
    "head -20 CHANGELOG.md", "cat Makefile", "cat Dockerfile", "sed -n '/^## /p' README.md",
    "awk -F, '{print $2}' data.csv | sort -u", "jq -r '.name' package.json",
]  # fmt: skip

SEARCH = [
    "grep -rn TODO src", "grep -rn 'def main' --include='*.py' .", "grep -l requests *.py",
    "grep -c ERROR app.log", "grep -i error app.log | tail", "rg TODO .", "rg -n 'fn main' src",
    "rg --files | head", "rg -l import src", "grep -rn 'import os' . | head", "grep -E 'warn|error' app.log",
    "grep -v '^#' config.ini", "grep -n timeout config.yaml || echo none", "find . -name '*.test.js'",
    "find . -name node_modules -prune -o -name '*.js' -print | head", "grep -rl TODO . | wc -l",
    "git grep -n TODO", "git grep -l Session -- '*.py'", "grep -rn --exclude-dir=.git Session .",
    "rg -t py 'class '", "rg -c TODO", "grep -o 'v[0-9.]*' CHANGELOG.md | head -1",
    "find . -type f -name '*.md' | xargs wc -l", "grep -rn retry src | head -20",
    "grep -A3 -B3 Traceback app.log", "grep -w main src/*.c", "rg -i 'todo|fixme' src",
    "grep -rn 'TODO' --include='*.ts' src | wc -l",
]  # fmt: skip

GIT = [
    "git status", "git status -s", "git status --porcelain", "git log --oneline -10", "git log -5 --stat",
    "git log --oneline --graph -20", "git diff", "git diff --stat", "git diff --cached", "git diff HEAD~1",
    "git diff main...HEAD", "git show HEAD", "git show --stat HEAD", "git show HEAD~1:README.md",
    "git log -p -1", "git branch", "git branch -a", "git branch --show-current", "git remote -v", "git tag",
    "git describe --tags", "git rev-parse HEAD", "git rev-parse --show-toplevel",
    "git log --format='%h %an %s' -5", "git shortlog -sn", "git blame -L 1,20 src/app.py",
    "git ls-files | head", "git ls-files | wc -l", "git stash list", "git log origin/main..HEAD --oneline",
    "git log --since='1 week ago' --oneline", "git diff --name-only", "git diff HEAD^ HEAD",
    "git show HEAD^ --stat", "git log --all --oneline | head", "git config user.name",
    "git config --get remote.origin.url", "git worktree list", "git reflog -10", "git log -1 --format=%cd",
    "git merge-base main HEAD", "git cat-file -p HEAD", "git -C vendor/lib log --oneline -3",
    "git status && git log --oneline -3", "git log --oneline main..feature",
    'git status -s && echo "--- LOG ---" && git log --oneline -3', "git diff --stat HEAD~3",
]  # fmt: skip

SYSTEM = [
    "uname -a", "whoami", "id", "hostname", "date", "date +%F", "uptime", "free -m", "free -h", "df -h .",
    "nproc", "ps aux | head", "ps aux | grep python", "env | grep PATH", "printenv HOME", "echo $PATH",
    "echo $SHELL", "which python3", "type git", "python3 --version", "node --version", "git --version",
    "cat /etc/os-release", "cat /proc/meminfo | head -3", "lscpu", "locale", "ulimit -a",
    "top -bn1 | head", "hostname -f", "pip list", "command -v git", "ls /usr/bin | wc -l",
]  # fmt: skip

COMPOUNDS = [
    "ls && pwd", "git status; git log -3", "ls -la | grep test", "cat notes.txt | wc -l",
    "test -f setup.py && echo yes || echo no", "[ -d src ] && ls src", "ls build 2>/dev/null || echo missing",
    "wc -l src/*.py | sort -n | tail", "find . -name '*.py' | wc -l", "du -sh * | sort -h | tail",
    "ps aux | grep -v grep | grep node", 'echo "---"; git diff --stat',
    "head -5 a.txt && echo ... && tail -5 a.txt",
    "git log --oneline | head -5", "ls -la | head -20 2>&1", "cat app.log 2>&1 | head",
    "sort words.txt | uniq -c | sort -rn | head", "cut -d: -f1 /etc/passwd | head", "ls | head -20",
    "grep -c . notes.txt", "(cd src && ls)", "cd src && git status", "cd /tmp && ls",
    "for f in *.md; do wc -l $f; done", "ls -1 | while read f; do echo $f; done", "echo $((1+2))",
    "date && uptime", "ls *.json 2>/dev/null | head", "find . -name '*.log' -mtime -1 | head",
    "git diff --stat && git status -s",
]  # fmt: skip

BENIGN: dict[str, list[str]] = {
    "listing": LISTING,
    "reading": READING,
    "search": SEARCH,
    "git": GIT,
    "system": SYSTEM,
    "compounds": COMPOUNDS,
}
"""Benign commands by what they look at."""
