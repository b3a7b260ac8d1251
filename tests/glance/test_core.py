"""The core glances without a jail, word by word: `core_refusal` answers with the exact reason.

A table of commands run in a small project of its own (a file, a directory, a named pipe, a file of
exactly the `cat` bound), each with the reason `core_refusal` gives ('' for a core glance). Nothing
here runs a command; `tests/glance/test_files.py` drives the same core through `glance_run`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flower._glance._core import CORE_CAT_BYTES, core_refusal

PLAIN = "only plain words (no quotes, `$`, globs or redirections but `2>/dev/null`)"
JOINED = "at most 8 commands, each joined by `&&`, `||`, `;` or a pipe"
GIT = "only git branch, diff, log, rev-parse, show, status"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose name ends in `X` (a root is compared after its trailing `/` only is cut)."""
    root = tmp_path / "projX"
    (root / "src").mkdir(parents=True)
    (root / "README.md").write_text("hello\n")
    (root / "src" / "a.py").write_text("print(1)\n")
    (root / "exact.bin").write_bytes(b"x" * CORE_CAT_BYTES)
    os.mkfifo(root / "pipe")
    return root


CASES = [
    # the words and the joins
    ("pwd", ""),
    ("pwd   ", ""),
    ("'pwd'", PLAIN),
    ("pwd || pwd", ""),
    ("pwd && pwd; pwd | wc -l", ""),
    ("; ".join(["pwd"] * 8), ""),
    ("; ".join(["pwd"] * 9), JOINED),
    ("pwd && && pwd", JOINED),
    ("foo", "`foo` is not one of the core commands"),
    ("ls | cat", "`cat` is not one of the core commands after a pipe"),
    ("pwd x", "`pwd x`: no arguments here"),
    # date, echo, uname, id
    ("date", ""),
    ("date +%s", ""),
    ("date x", "`date x`: only `date` or `date +FORMAT`"),
    ("date +%s x", "`date +%s x`: only `date` or `date +FORMAT`"),
    ("date +%s +%H", "`date +%s +%H`: only `date` or `date +FORMAT`"),
    ("echo hi", ""),
    ("echo -n hi", ""),
    ("echo -e hi", "`echo -e hi`: no options"),
    ("uname -a", ""),
    ("uname -x", "`uname -x`: only `uname -asrmno`"),
    ("id", ""),
    ("id -u", ""),
    ("id -G", ""),
    ("id -x", "`id -x`: only `id -ugnG`"),
    # ls, cat, head/tail, wc and the files they name
    ("ls -lAS1F src README.md", ""),
    ("ls -z", "`ls -z`: option `-z` is not allowed here"),
    ("ls -n src", "`ls -n src`: option `-n` is not allowed here"),
    ("ls pipe", "`ls pipe`: `pipe` is not a regular file"),
    ("ls -l pipe", "`ls -l pipe`: `pipe` is not a regular file"),
    ("ls nothing", "`ls nothing`: `nothing` does not exist"),
    ("cat", "`cat`: needs a file"),
    ("cat README.md exact.bin", ""),
    ("cat -v README.md", "`cat -v README.md`: option `-v` is not allowed here"),
    ("cat pipe", "`cat pipe`: `pipe` is not a regular file of at most 1 MiB"),
    ("cat src", "`cat src`: `src` is not a regular file of at most 1 MiB"),
    ("head -n 3 README.md", ""),
    ("head -c 5 README.md", ""),
    ("tail -5 README.md", ""),
    ("head -n 3", "`head -n 3`: needs a file"),
    ("head src", "`head src`: `src` is not a regular file"),
    ("head README.md -n", "`head README.md -n`: `-n` needs a number"),
    ("head -n x README.md", "`head -n x README.md`: `-n` needs a number"),
    ("cat README.md | head -n 1", ""),
    ("cat README.md | head README.md", "`head README.md`: reads the pipe, or files, but not both"),
    ("wc -l README.md", ""),
    ("wc README.md", ""),
    ("wc -l", "`wc -l`: needs a file"),
    ("wc src", "`wc src`: `src` is not a regular file"),
    ("cat README.md | wc -l", ""),
    ("cat README.md | wc -l README.md", "`wc -l README.md`: reads the pipe, or files, but not both"),
    ("cat ../x", "`cat ../x`: `../x` is outside the working directory"),
    # git
    ("git stash", f"`git stash`: {GIT}"),
    ("git", f"`git`: {GIT}"),
    ("git status -s -- src", ""),
    ("git diff --stat -- src/a.py", ""),
    ("git show HEAD -- src", ""),
    ("git log --oneline -5 -n 3 main..HEAD -- src", ""),
    ("git log -- ../x", "`git log -- ../x`: `../x` is not a path inside the working directory"),
    (
        "git log -- src/../../x",
        "`git log -- src/../../x`: `src/../../x` is not a path inside the working directory",
    ),
    ("git log -- -x", "`git log -- -x`: `-x` is not a path inside the working directory"),
    ("git log -- /etc", "`git log -- /etc`: `/etc` is not a path inside the working directory"),
    ("git branch -- src", "`git branch -- src`: `--` is not allowed here"),
    ("git log --graph", "`git log --graph`: `--graph` is not allowed here"),
    ("git log --oneline --graph", "`git log --oneline --graph`: `--graph` is not allowed here"),
    ("git diff -5", "`git diff -5`: `-5` is not allowed here"),
    ("git log -n", "`git log -n`: `-n` needs a number"),
    ("git log -n x", "`git log -n x`: `-n` needs a number"),
    ("git diff -n 5", "`git diff -n 5`: `-n` is not allowed here"),
    ("git status HEAD", "`git status HEAD`: `HEAD` is not allowed here"),
    ("git branch main", "`git branch main`: `main` is not allowed here"),
    ("git branch -a -v", ""),
    ("git log a@b", "`git log a@b`: `a@b` is not allowed here"),
    ("git rev-parse --abbrev-ref HEAD", ""),
]


@pytest.mark.parametrize(("command", "reason"), CASES, ids=[repr(command) for command, _ in CASES])
def test_core_refusal_gives_the_exact_reason(project: Path, command: str, reason: str) -> None:
    assert core_refusal(command, str(project)) == reason


def test_an_unknown_directory_refuses_everything(tmp_path: Path) -> None:
    assert core_refusal("pwd", None) == "the working directory is unknown"
    assert core_refusal("pwd", str(tmp_path / "gone")) == "the working directory is unknown"


def test_the_root_directory_holds_its_children() -> None:
    """At `/`, every path is inside: the comparison adds one `/` to a root that ends with none."""
    assert core_refusal("ls etc", "/") == ""
