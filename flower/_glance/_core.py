"""The core glances: the few commands the coordinator may run itself on a machine without a jail.

Without the kernel's confinement, a command glance wrongly accepts would run unbounded. So the core
is small enough to check by hand, and every file it reads is looked at first:

- words are plain (`[A-Za-z0-9._/:=@%+,-]`, not starting with `=`: no quote, `$`, glob, brace, `~`,
  backslash or redirection but `2>/dev/null`); at most eight commands, joined by `&&`, `||` or `;`,
  each optionally piped into `head`, `tail -n N` or `wc -l`;
- `pwd`, `whoami`, `id`, `uptime`, `true`, `false`, `date [+FORMAT]`, `uname [-asrmno]`, `echo WORDS`;
- `ls [-lahAtrS1dF]` of directories or regular files, `cat` of regular files up to 1 MiB, `head`/`tail`
  `[-n N]` and `wc [-lcwm]` of regular files: every path resolved by the file system (links followed)
  to a place inside the working directory;
- git, with the read-only options: `status [-s|--short|-b|--branch|--porcelain]`,
  `log [--oneline|--stat|-N|-n N|--decorate]`, `diff [--stat|--name-only|--name-status|--cached|--staged]`,
  `show [--stat|--name-only]`, each with revisions and `-- PATHS`; `branch [-a|-v]`;
  `rev-parse [--abbrev-ref|--short|--show-toplevel] [HEAD]`.

A file swapped by another process between this check and the read is the one race left.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable

__all__ = ["CORE_CAT_BYTES", "core_refusal"]

CORE_CAT_BYTES = 1 << 20
"""The largest file `cat` may print without a jail (a glance is a look, and nothing else bounds it)."""
_MAX_COMMANDS = 8
_TOKEN = re.compile(r"\s*(2>/dev/null|&&|\|\||[;|]|[A-Za-z0-9._/:@%+,-][A-Za-z0-9._/:=@%+,-]*)(?=\s|$|[;|&])")
_NUMBER = re.compile(r"[0-9]{1,6}")
_REVISION = re.compile(r"[A-Za-z0-9._/-][A-Za-z0-9._/~^:-]*")
_GIT_FLAGS = {
    "status": {"-s", "--short", "-b", "--branch", "--porcelain"},
    "log": {"--oneline", "--stat", "--decorate", "--no-decorate"},
    "diff": {"--stat", "--name-only", "--name-status", "--cached", "--staged"},
    "show": {"--stat", "--name-only", "--oneline"},
    "branch": {"-a", "-v", "--all"},
    "rev-parse": {"--abbrev-ref", "--short", "--show-toplevel"},
}
_FILTERS = ("head", "tail", "wc")


def core_refusal(command: str, cwd: str | None) -> str:
    """Why `command` is not a core glance in the directory `cwd`, or ''."""
    if cwd is None or not os.path.isdir(cwd):
        return "the working directory is unknown"
    tokens, position = [], 0
    text = command.rstrip()
    while position < len(text):
        found = _TOKEN.match(text, position)
        if found is None:
            return "only plain words (no quotes, `$`, globs or redirections but `2>/dev/null`)"
        tokens.append(found.group(1))
        position = found.end()
    commands: list[list[str]] = [[]]
    piped = [False]
    for token in tokens:
        if token in ("&&", "||", ";", "|"):
            commands.append([])
            piped.append(token == "|")
        elif token != "2>/dev/null":
            commands[-1].append(token)
    if len(commands) > _MAX_COMMANDS or any(not words for words in commands):
        return f"at most {_MAX_COMMANDS} commands, each joined by `&&`, `||`, `;` or a pipe"
    root = os.path.realpath(cwd)
    for words, fed in zip(commands, piped, strict=True):
        check = _VERBS.get(words[0])
        if check is None or (fed and words[0] not in _FILTERS):
            return f"`{words[0]}` is not one of the core commands" + (" after a pipe" if fed else "")
        reason = check(words[1:], root, fed)
        if reason:
            return f"`{' '.join(words)}`: {reason}"
    return ""


def _inside(root: str, path: str, *, kind: str) -> str:
    """'' when `path` resolves inside `root` to a regular file (`file`), a directory, or either (`any`)."""
    real = os.path.realpath(os.path.join(root, path))
    if real != root and not real.startswith(root.rstrip("/") + "/"):
        return f"`{path}` is outside the working directory"
    try:
        info = os.stat(real)
    except OSError:
        return f"`{path}` does not exist"
    is_file, is_dir = stat.S_ISREG(info.st_mode), stat.S_ISDIR(info.st_mode)
    if (kind == "file" and not is_file) or (kind == "any" and not (is_file or is_dir)):
        return f"`{path}` is not a regular file"
    if kind == "cat" and (not is_file or info.st_size > CORE_CAT_BYTES):
        return f"`{path}` is not a regular file of at most {CORE_CAT_BYTES >> 20} MiB"
    return ""


def _operands(words: list[str], root: str, kind: str, flags: Callable[[str], bool]) -> str:
    values = iter(words)
    for word in values:
        if word.startswith("-"):
            if word in ("-n", "-c") and kind != "any":
                if not _NUMBER.fullmatch(next(values, "")):
                    return f"`{word}` needs a number"
            elif not flags(word):
                return f"option `{word}` is not allowed here"
            continue
        reason = _inside(root, word, kind=kind)
        if reason:
            return reason
    return ""


def _none(words: list[str], root: str, fed: bool) -> str:
    return "no arguments here" if words else ""


def _ls(words: list[str], root: str, fed: bool) -> str:
    return _operands(words, root, "any", lambda w: re.fullmatch(r"-[lahAtrS1dF]+", w) is not None)


def _cat(words: list[str], root: str, fed: bool) -> str:
    if not words:
        return "needs a file"
    return _operands(words, root, "cat", lambda w: False)


def _lines(words: list[str], root: str, fed: bool) -> str:
    """`head`/`tail`: a count, and files (none after a pipe)."""
    files = [w for i, w in enumerate(words) if not w.startswith("-") and (i == 0 or words[i - 1] != "-n")]
    if bool(files) == fed:
        return "reads the pipe, or files, but not both" if fed else "needs a file"
    return _operands(words, root, "file", lambda w: re.fullmatch(r"-[0-9]{1,6}", w) is not None)


def _wc(words: list[str], root: str, fed: bool) -> str:
    files = [w for w in words if not w.startswith("-")]
    if bool(files) == fed:
        return "reads the pipe, or files, but not both" if fed else "needs a file"
    return _operands(words, root, "file", lambda w: re.fullmatch(r"-[lcwm]+", w) is not None)


def _echo(words: list[str], root: str, fed: bool) -> str:
    return "no options" if any(w.startswith("-") and w != "-n" for w in words) else ""


def _date(words: list[str], root: str, fed: bool) -> str:
    return "only `date` or `date +FORMAT`" if len(words) > 1 or (words and words[0][:1] != "+") else ""


def _uname(words: list[str], root: str, fed: bool) -> str:
    return "" if all(re.fullmatch(r"-[asrmno]+", w) for w in words) else "only `uname -asrmno`"


def _id(words: list[str], root: str, fed: bool) -> str:
    return "" if all(re.fullmatch(r"-[ugnG]+", w) for w in words) else "only `id -ugnG`"


def _git(words: list[str], root: str, fed: bool) -> str:
    if not words or words[0] not in _GIT_FLAGS:
        return f"only git {', '.join(sorted(_GIT_FLAGS))}"
    sub, rest = words[0], words[1:]
    paths = False
    values = iter(rest)
    for word in values:
        if word == "--" and sub in ("log", "diff", "show", "status"):
            paths = True
        elif paths:
            if word.startswith("-") or os.path.isabs(word) or ".." in word.split("/"):
                return f"`{word}` is not a path inside the working directory"
        elif word in _GIT_FLAGS[sub] or (sub == "log" and re.fullmatch(r"-[0-9]{1,6}", word)):
            continue
        elif sub == "log" and word == "-n":
            if not _NUMBER.fullmatch(next(values, "")):
                return "`-n` needs a number"
        elif word.startswith("-") or sub in ("status", "branch") or not _REVISION.fullmatch(word):
            return f"`{word}` is not allowed here"
    return ""


_VERBS: dict[str, Callable[[list[str], str, bool], str]] = {
    **dict.fromkeys(("pwd", "whoami", "uptime", "true", "false"), _none),
    "id": _id,
    "date": _date,
    "uname": _uname,
    "echo": _echo,
    "ls": _ls,
    "cat": _cat,
    "head": _lines,
    "tail": _lines,
    "wc": _wc,
    "git": _git,
}
