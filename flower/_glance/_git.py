"""The git rule: `git` with a read-only subcommand, and the read-only forms of those that can also write.

`branch`, `tag`, `remote`, `config`, `stash`, `worktree` and `reflog` both read and write; each is
accepted only in its listing or reading form. Global options that change configuration, the repository,
the directory or the programs git runs are refused: `-C`, `--git-dir`, `--work-tree` and `-c` (but for
the `HARDENING` settings) would let git open a repository committed inside the project, whose own
configuration (`core.fsmonitor`, diff drivers) runs programs.

Some read-only commands still write or reach out: `git status` and `git diff` rewrite `.git/index`
to refresh cached file times, `core.fsmonitor` runs a hook, a partial clone fetches missing objects.
`HARDENING` are the options that stop that; the wall runs every accepted git command with them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ._verb import (
    Arg,
    Option,
    Pattern,
    Refusal,
    denied_option,
    names,
    opaque_refusal,
    operands,
    parse_options,
)

__all__ = ["HARDENING", "git"]

HARDENING = (
    "--no-optional-locks",
    "-c",
    "core.fsmonitor=",
    "-c",
    "diff.autoRefreshIndex=false",
    "-c",
    "safe.bareRepository=explicit",
    "-c",
    "protocol.allow=never",
)
"""Global options that make a read-only git command leave the repository as it is and run nothing else.

`--no-optional-locks` stops `git status` from refreshing the index; `diff.autoRefreshIndex=false` does
the same for `git diff` (which ignores the former); an empty `core.fsmonitor` runs no monitor hook;
`safe.bareRepository=explicit` never opens a bare repository found in the directory tree (git 2.38+);
`protocol.allow=never` forbids every transport, so a partial clone cannot fetch.
"""

_GIT_GLOBAL = frozenset({"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs"})
_GIT_GLOBAL |= frozenset({"--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs"})
_GIT_SETTINGS = frozenset(HARDENING[2::2])
_GIT_DENY = ("output", "ext-diff", "textconv", "show-signature", "open-files-in-pager")
_GIT_PLAIN = names("""status log show diff rev-parse ls-files blame describe show-ref cat-file ls-tree
    grep rev-list merge-base for-each-ref count-objects check-ignore shortlog version""")
_GIT_READS_STDIN = (
    "stdin",
    "stdin-packs",
    "batch",
    "batch-check",
    "batch-command",
    "parseopt",
    "exclude-existing",
)
"""Options that read standard input; git's option parser takes unique abbreviations (`--st`)."""
_GIT_LIST_VALUES = names("contains no-contains merged no-merged points-at sort format")
_GIT_LIST_FLAGS = names("""list all remotes verbose show-current ignore-case color no-color column
    no-column abbrev no-abbrev omit-empty quiet""")
_GIT_CONFIG_READ = names("--get --get-all --get-regexp --get-urlmatch --list -l")
_GIT_CONFIG_FLAGS = names("""--global --system --local --worktree --show-origin --show-scope --name-only
    -z --null --includes --no-includes --bool --int --bool-or-int --path --expiry-date --all --regexp
    --show-names""")
_GIT_CONFIG_VALUES = names("--file -f --blob --type --default")
_GIT_SUBLISTS = {"stash": ("list", "show"), "worktree": ("list",)}


def git(name: str, args: Sequence[Arg]) -> bool:
    """`git` with a read-only subcommand; global options other than `--no-pager` and the like are refused."""
    words = list(args)
    i = 0
    while i < len(words) and (words[i] or "-").startswith("-"):
        word = words[i]
        if word is None or isinstance(word, Pattern):
            raise opaque_refusal(name)
        if word == "-c" and i + 1 < len(words) and words[i + 1] in _GIT_SETTINGS:
            i += 2
        elif word in _GIT_GLOBAL:
            i += 1
        elif word == "--version" and i == len(words) - 1:
            return False
        else:
            raise Refusal(
                f"`git {word}` changes how git runs (configuration, repository, directory or programs)"
            )
    if i >= len(words):
        raise Refusal("`git` without a subcommand")
    sub = words[i]
    if sub is None or isinstance(sub, Pattern):
        raise opaque_refusal(name)
    if any(
        w is None or (isinstance(w, Pattern) and (sub not in _GIT_PLAIN or not _operand(w))) for w in words
    ):
        raise opaque_refusal(name)
    rest = [w for w in words[i + 1 :] if w is not None]
    deny = _GIT_DENY + (("filters",) if sub == "cat-file" else ())
    bad = denied_option(rest, "O" if sub == "grep" else "", deny, {"text"})
    if bad:
        raise Refusal(f"`git {sub} {bad}` writes a file or runs a configured program")
    if any("%G" in arg for arg in rest):
        raise Refusal("git `%G` format placeholders run the signature-verification program")
    if sub == "describe" and denied_option(rest, "", ("dirty", "broken"), ()):
        raise Refusal("`git describe --dirty` rewrites the index, whatever the options")
    if sub in _GIT_PLAIN:
        if sub == "shortlog" and not operands(rest):
            return True  # with no revision and stdin not a terminal, shortlog reads a log from stdin
        return _reads_stdin(rest)
    if sub in ("branch", "tag"):
        _git_list_form(sub, rest)
    elif sub == "remote":
        _git_remote(rest)
    elif sub == "config":
        _git_config(rest)
    elif sub in _GIT_SUBLISTS:
        if not rest or rest[0] not in _GIT_SUBLISTS[sub]:
            raise Refusal(f"`git {sub}` is read-only only as `git {sub} {_GIT_SUBLISTS[sub][0]}`")
    elif sub == "reflog":
        if (rest[:1] and rest[0] != "show" and rest[0][:1] != "-") or {"expire", "delete", "drop"} & set(
            rest
        ):
            raise Refusal("`git reflog` is read-only only as `git reflog` or `git reflog show`")
    else:
        raise Refusal(f"`git {sub}` is not a read-only git command")
    return False


def _git_list_form(sub: str, rest: Sequence[str]) -> None:
    """`git branch` / `git tag` in list form only; a bare name would create one."""
    listing = False
    found: list[str] = []
    letters = "arvlqi" if sub == "branch" else "li"
    plural = "branches" if sub == "branch" else "tags"
    items = parse_options(
        rest,
        long_values=_GIT_LIST_VALUES,
        short_attached="n" if sub == "tag" else "",  # `git tag -n5`: lines of each annotation
        value_may_start_with_dash=False,
        dash_is_operand=False,
    )
    for item in items:
        if not isinstance(item, Option):
            found.append(str(item))
        elif item.name.startswith("--"):
            if item.name[2:] not in _GIT_LIST_VALUES and item.name[2:] not in _GIT_LIST_FLAGS:
                raise Refusal(f"`git {sub} {item.word}` changes {plural}")
            listing |= item.name == "--list"
        elif item.name == "-n" and sub == "tag":
            if not re.fullmatch(r"\d*", item.value or ""):
                raise Refusal(f"`git {sub} {item.word}` changes {plural}")
            listing = True
        elif item.name == "-" or item.name[1:] not in letters:
            raise Refusal(f"`git {sub} {item.word}` changes {plural}")
        else:
            listing |= item.name == "-l"
    if found and not listing:
        raise Refusal(f"`git {sub} NAME` creates a {sub}")


def _git_remote(rest: Sequence[str]) -> None:
    words = [a for a in rest if a not in ("-v", "--verbose")]
    if not words:
        return
    if words[0] == "get-url" and len([w for w in words[1:] if w not in ("--push", "--all")]) == 1:
        return
    if words[0] == "show" and "-n" in words and all(w == "-n" or not w.startswith("-") for w in words[1:]):
        return
    raise Refusal("`git remote` is read-only only as `-v`, `get-url NAME` or `show -n NAME`")


def _git_config(rest: Sequence[str]) -> None:
    words = list(rest)
    action = bool(words[:1] and words[0] in ("list", "get"))
    i = 1 if action else 0
    keys: list[str] = []
    while i < len(words):
        key = words[i].partition("=")[0]
        if key in _GIT_CONFIG_READ:
            action = True
        elif key in _GIT_CONFIG_VALUES:
            # git takes the next word as the value whatever it is: `--file --list KEY VALUE` writes KEY
            # into a file named `--list`
            i += "=" not in words[i]
        elif key.startswith("-"):
            if key not in _GIT_CONFIG_FLAGS:
                raise Refusal(f"`git config {words[i]}` is not a read-only config option")
        else:
            keys.append(words[i])
        i += 1
    # `git config KEY` reads, `git config KEY VALUE` writes; a key has a dot, a subcommand (`edit`) none.
    if not action and not (len(keys) == 1 and "." in keys[0]):
        raise Refusal("`git config` writes, but with one key alone, `--get`, `--get-regexp` or `--list`")


def _reads_stdin(rest: Sequence[str]) -> bool:
    """`--stdin` and its abbreviations, `--batch`..., `git blame --contents -`, a lone `-`."""
    for i, arg in enumerate(rest):
        if arg == "-":
            return True
        name, eq, value = arg[2:].partition("=") if arg.startswith("--") else ("", "", "")
        if name and any(option.startswith(name) for option in _GIT_READS_STDIN):
            return True
        if name and "contents".startswith(name) and (value == "-" if eq else rest[i + 1 : i + 2] == ["-"]):
            return True
    return False


def _operand(word: Pattern) -> bool:
    """A pattern after a read-only subcommand is a revision or a path (`HEAD^` to zsh's EXTENDED_GLOB)."""
    return bool(word.prefix) and not word.prefix.startswith("-")
