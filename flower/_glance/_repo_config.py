"""A repository's own git configuration that holds a token: what a glance must not print of it.

The jail hides the secrets of the user's and the system's git configuration (git reads a copy), but a
repository's own `.git/config` is part of the workspace, which git must read as it is. A CI checkout
writes its token there (`http.https://github.com/.extraheader = AUTHORIZATION: basic …`, or a remote URL
`https://x-access-token:TOKEN@github.com/…`). When it holds one, the parser refuses what would print it:
reading the file (`cat .git/config`, `grep -r x .git`), `git config --list` (any listing or pattern form,
and a key that may hold one), and `git remote -v`, `get-url` and `show`. It reads the file to know.
"""

from __future__ import annotations

import os

from .jail._kernel.gitconfig import holds_secret

__all__ = ["REASON", "git_refusal", "secret_config"]

REASON = (
    "the repository's git configuration (`{path}`), which holds a token (a CI checkout's "
    "`http.*.extraheader`, a URL with a password), which a glance does not print"
)
_LISTINGS = frozenset({"-l", "--list", "--get-regexp", "--get-urlmatch", "--show-origin", "--show-scope"})
_SECRET_SECTIONS = frozenset({"credential", "url", "http", "remote", "include", "includeif"})
_SECRET_PARTS = ("pass", "token", "secret", "cookie", "auth", "extraheader")


def secret_config(cwd: str | None) -> str:
    """The path of the git configuration of the repository `cwd` is in, when it holds a secret; or ''."""
    if cwd is None:
        return ""
    try:
        directory = os.path.realpath(cwd)
    except (OSError, ValueError):
        return ""
    while True:
        dot_git = os.path.join(directory, ".git")
        if os.path.isdir(dot_git):
            return _holding([os.path.join(dot_git, "config")])
        if os.path.isfile(dot_git):
            return _holding(_from_file(directory, dot_git))
        parent = os.path.dirname(directory)
        if parent == directory:
            return ""
        directory = parent


def _from_file(directory: str, dot_git: str) -> list[str]:
    try:
        with open(dot_git, encoding="utf-8") as file:
            line = file.readline(4096).strip()
        gitdir = os.path.join(directory, line.removeprefix("gitdir:").strip())
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as file:
            common = os.path.join(gitdir, file.readline(4096).strip())
    except (OSError, ValueError):
        return [os.path.join(directory, ".git", "config")]
    return [os.path.join(gitdir, "config"), os.path.join(common, "config")]


def _holding(paths: list[str]) -> str:
    for path in paths:
        try:
            with open(path, encoding="utf-8", errors="replace") as file:
                text = file.read(1 << 20)
        except (OSError, ValueError):
            continue
        if holds_secret(text):
            return path
    return ""


def git_refusal(args: list[str | None], cwds: list[str | None]) -> str:
    """Why `git ARGS` would print a secret of the repository's configuration, from any of `cwds`; or ''."""
    words = [arg for arg in args if arg is not None]
    sub = next((word for word in words if not word.startswith("-")), "")
    rest = words[words.index(sub) + 1 :] if sub else []
    if sub == "config":
        keys = [word.lower() for word in rest if not word.startswith("-")][:1]
        prints = bool(_LISTINGS & set(rest)) or any(_secret_key(key) for key in keys)
    elif sub == "remote":
        prints = bool({"-v", "--verbose", "get-url", "show"} & set(rest))
    else:
        prints = False
    if not prints:
        return ""
    found = next((path for cwd in cwds if (path := secret_config(cwd))), "")
    return REASON.format(path=found) if found else ""


def _secret_key(key: str) -> bool:
    section = key.split(".", 1)[0]
    return section in _SECRET_SECTIONS or any(part in key for part in _SECRET_PARTS)
