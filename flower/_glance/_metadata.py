"""What a glance must not list with sizes and times: credential files, by name or by another name.

Landlock keeps a credential file's content from a glance, not its size and times: `stat`, which `ls -l`
runs on every entry, needs no right on the file. The parser names a store when it is the argument
(`stat ~/.netrc`, refused in `_secrets`); this module covers the entries a listing shows:

- `ls` with any option that shows or sorts by metadata (`-l`, `-s`, `-S`, `-t`, `--full-time` …) of a
  directory that holds a credential file (a home, `/etc`, `~/.pulumi`, `~/.config/git` …, or any
  directory with a file named like credentials such as `id_ed25519`): `ls -la ~` would show the size of
  `~/.netrc`. Names alone stay a glance (`ls -a ~`).
- `ls` (as above), `stat`, `du`, `find` and `tree` (with `-s`, `-h`, `-D`, `--du` …) of a directory that
  holds another name (a hard link) of a credential file (`links.py`, as the jail finds them): only when
  such a file has more than one name on the directory's file system, which costs a walk of the stores
  (bounded) per listing, and then a walk of the directory (bounded: past it, refused).
- `ls -L` and `stat -L` (with sizes) of a directory that holds a symbolic link to a credential store:
  they show what the link leads to.

In the trees a glance may read (the workspace), the launcher refuses every command while such a link is
there (`reads.LINKED`): this module only gives the reason first, and covers directories elsewhere
(`ls -l /tmp`).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Sequence

from ._paths import UNKNOWN, candidates, join
from ._secrets import secret_refusal
from ._verb import Arg
from .jail._kernel import links
from .jail._kernel.links import credential_inodes, find_links
from .jail._kernel.reads import GIT_CONFIG_FILES, HOME_SECRETS, SECRET_NAMES, SYSTEM_SECRETS, stores

__all__ = ["metadata_refusal", "shows_metadata"]

_LS_NAMES_ONLY = frozenset("aA1CxmFpdrRUfhQbNqvXwITBHkL")
"""`ls` letters that show or order names only (`-h`, `-k`: how a size shows, when another shows one)."""
_LS_LONG_NAMES_ONLY = frozenset({
    "all", "almost-all", "color", "colour", "classify", "indicator-style", "directory", "reverse",
    "recursive", "hide", "ignore", "ignore-backups", "quoting-style", "literal", "escape",
    "hide-control-chars", "show-control-chars", "group-directories-first", "width", "tabsize",
    "human-readable", "si", "zero", "hyperlink", "file-type", "dereference", "dereference-command-line",
    "dereference-command-line-symlink-to-dir", "kibibytes", "block-size",
})  # fmt: skip
_LS_LISTS = frozenset({"across", "commas", "horizontal", "single-column", "vertical"})
_LS_ORDERS = frozenset({"none", "version", "extension", "width"})
_TREE_METADATA = frozenset("shDpugi")
_TREE_LONG = ("--du", "--inodes", "--device", "--timefmt", "--sort")
_HOMES = (["root"], ["var", "root"], ["home", "*"], ["Users", "*"])
_IN_A_HOME = [list(parts) for parts in dict.fromkeys(
    tuple(name.split("/")[:-1]) for name in (*HOME_SECRETS, *GIT_CONFIG_FILES)
)]  # fmt: skip
"""The directories of a home that hold credential stores: the home itself, `.config`, `.pulumi` …"""
_SYSTEM_HOLDERS = [path.strip("/").split("/")[:-1] for path in (*SYSTEM_SECRETS, "/etc/gitconfig")]


def shows_metadata(name: str, args: Sequence[Arg]) -> bool:
    """Whether the command shows (or orders by) its entries' sizes and times, not their names alone."""
    if name in ("stat", "du", "find"):
        return True
    if name == "tree":
        return any(
            arg is None or arg.startswith(_TREE_LONG) or (arg[:1] == "-" and arg[1:2] != "-" and
                                                          bool(_TREE_METADATA.intersection(arg[1:])))
            for arg in args
        )  # fmt: skip
    return name == "ls" and bool(_ls_metadata(args))


def _ls_metadata(args: Sequence[Arg]) -> str:
    """The first `ls` option that shows or orders by metadata, or ''."""
    for arg in args:  # a word known only at run time is a path: the jail's environment holds no option
        if arg is None or arg in ("-", "--") or not arg.startswith("-"):
            continue
        if arg.startswith("--"):
            option, _, value = arg[2:].partition("=")
            if option in _LS_LONG_NAMES_ONLY or (option == "format" and value in _LS_LISTS):
                continue
            if option == "sort" and value in _LS_ORDERS:
                continue
            return arg
        if not _LS_NAMES_ONLY.issuperset(arg[1:]):
            return arg
    return ""


def metadata_refusal(
    name: str,
    args: Sequence[Arg],
    words: Sequence[tuple[Arg, str]],
    cwd: str | None,
    *,
    recursive: bool = False,
) -> str:
    """Why `name` with `args` (its path `words`, each as its value and template, read from `cwd`) would
    show a credential file's size or times, or ''. `recursive`: it lists the whole tree below (`ls -R`;
    `du`, `find` and `tree` always do). A command that shows names only is never refused here."""
    if not shows_metadata(name, args):
        return ""
    targets = [
        join(cwd, spelling) for value, template in words for spelling in candidates(_home(value) or template)
    ] or [cwd or "."]
    if name == "ls" and not _lists_itself(args):
        for target in targets:
            if found := _holds_credential_file(target):
                return (f"`ls {_ls_metadata(args)}` would show the size and times of {found}; `ls -a` "
                        "lists the names alone")  # fmt: skip
    walks = recursive or name != "ls"
    return (
        _linked(name, targets, walks)
        or _unknown(name, targets)
        or (_dereferenced(name, targets, walks) if _dereferences(name, args) else "")
    )


def _dereferences(name: str, args: Sequence[Arg]) -> bool:
    """Whether `ls` or `stat` shows what a symbolic link leads to (`-L`), not the link itself."""
    return name in ("ls", "stat") and any(
        arg and (arg == "--dereference" or (arg[:1] == "-" and arg[1:2] != "-" and "L" in arg))
        for arg in args
    )


def _dereferenced(name: str, targets: list[str], walks: bool) -> str:
    """Why a listing that follows symbolic links would show a credential store's size through a link to
    it among the entries it lists (one level, or the tree below a glob or for `ls -R`), or ''."""
    budget = links.TREE_ENTRIES
    for target in targets:
        known = target.split(UNKNOWN)[0]
        top = known if UNKNOWN not in target else os.path.dirname(known) or "."
        if not top.startswith("/"):
            continue
        stack, deep = [os.path.realpath(top)], walks or UNKNOWN in target
        while stack:
            directory = stack.pop()
            try:
                entries = list(os.scandir(directory))
            except OSError:
                continue
            budget -= len(entries)
            if budget < 0:
                return f"`{name}` would follow the links of a tree too large to look through"
            for entry in entries:
                if entry.is_symlink() and (reason := secret_refusal(os.path.realpath(entry.path))):
                    return (
                        f"`{name}` would show, through the link `{entry.path}`, the size and times of "
                        + reason
                    )
                if deep and entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
    return ""


def _lists_itself(args: Sequence[Arg]) -> bool:
    """Whether `ls` shows a directory itself, not its entries (`-d`)."""
    return any(
        arg and (arg.startswith("--directory") or (arg[:1] == "-" and arg[1:2] != "-" and "d" in arg))
        for arg in args
    )


def _home(value: Arg) -> str:
    """`~` and `~/…` in this process's home, or ''."""
    home = os.path.expanduser("~")
    if value is not None and (value == "~" or value.startswith("~/")) and os.path.isabs(home):
        return home.rstrip("/") + value[1:]
    return ""


def _holds_credential_file(path: str) -> str:
    """What credential file a listing of `path` (absolute, or relative from an unknown directory) would
    show, or '': a directory where credential stores are kept (a home, `~/.config`, `/etc` …), whatever
    it holds now, a path known only in part when it may be one; or a directory that holds a store or a
    file named like credentials."""
    spellings = [path] if UNKNOWN in path or not path.startswith("/") else [path, os.path.realpath(path)]
    home = os.path.expanduser("~")
    homes = [*_HOMES, *([home.strip("/").split("/")] if os.path.isabs(home) and home != "/" else [])]
    holders = [[*top, *inside] for top in homes for inside in _IN_A_HOME] + _SYSTEM_HOLDERS
    for spelling in spellings:
        parts = [part for part in spelling.split("/") if part not in ("", ".")]
        if holder := next((top for top in holders if _may_be(parts, top)), None):
            return f"the credential files `/{'/'.join(holder)}` may hold"
    if len(spellings) == 1 or not os.path.isdir(real := spellings[1]):
        return ""
    found = [store for store in stores(dict(os.environ), [real]) if os.path.dirname(store) == real]
    with contextlib.suppress(OSError):
        found += [f"{real.rstrip('/')}/{entry}" for entry in os.listdir(real) if entry in SECRET_NAMES]
    for store in found:
        try:
            if stat.S_ISREG(os.lstat(store).st_mode):
                return f"a credential file (`{store}`)"
        except OSError:
            continue
    return ""


def _may_be(parts: list[str], top: list[str]) -> bool:
    """Whether `parts` may name exactly the directory `top` (a part known only at run time may be any
    name, or several; a `*` of `top` is any one name)."""
    for i, name in enumerate(top):
        if i >= len(parts):
            return False
        part = parts[i]
        if part == UNKNOWN:
            return True
        if name != "*" and part != name and not _matches(part, name):
            return False
    return len(parts) == len(top) or parts[len(top)] == UNKNOWN


def _matches(part: str, name: str) -> bool:
    if UNKNOWN not in part:
        return False
    pieces = part.split(UNKNOWN)
    if not (name.startswith(pieces[0]) and name.endswith(pieces[-1])):
        return False
    at = len(pieces[0])
    for piece in pieces[1:-1]:
        at = name.find(piece, at)
        if at < 0:
            return False
        at += len(piece)
    return at <= len(name) - len(pieces[-1])


def _linked(name: str, targets: list[str], recursive: bool) -> str:
    """Why listing `targets` would show another name of a credential file, or ''."""
    tops: dict[str, bool] = {}  # each directory to look in (its known part), and whether to walk it
    for target in targets:
        known = target.split(UNKNOWN)[0]
        top = known if UNKNOWN not in target else os.path.dirname(known) or "."
        if top.startswith("/"):
            real = os.path.realpath(top)
            tops[real] = tops.get(real, False) or UNKNOWN in target or recursive
    devices = set()
    for top in tops:
        try:
            devices.add(os.stat(top).st_dev)
        except OSError:
            continue
    if not devices or (not any(tops.values()) and not any(_one_level(top, None) for top in tops)):
        return ""  # (one level: no file there has several names, so the stores need no look)
    inodes = credential_inodes(stores(dict(os.environ), list(tops)), devices)
    if not inodes:
        return ""
    for top, walk in tops.items():
        try:
            found = find_links([top], inodes) if walk else _one_level(top, inodes)
        except OSError:
            return f"`{name}` would list `{top}`, too large to look for a credential file's other names in"
        if found:
            return (f"`{name}` would show the size and times of `{found[0]}`, another name (a hard link) of "
                    "a credential file")  # fmt: skip
    return ""


def _unknown(name: str, targets: list[str]) -> str:
    """Why a target whose start is known only at run time (`$HOME/x/link`, `~+/link`) may show another
    name of a credential file: one has several names on the file system of a home or of `/`; or ''."""
    if not any(target.startswith(UNKNOWN) for target in targets):
        return ""
    devices = set()
    for top in ("/", os.path.expanduser("~")):
        with contextlib.suppress(OSError):
            devices.add(os.stat(top).st_dev)
    if not credential_inodes(stores(dict(os.environ), []), devices):
        return ""
    return (f"`{name}` names a path known only at run time, and a credential file has another name (a hard "
            "link) on this machine, whose size and times it may show; write the path out")  # fmt: skip


def _one_level(top: str, inodes: set[tuple[int, int]] | None) -> list[str]:
    """`top` and its entries that are names of the files in `inodes` (None: of any file with several
    names), not following links."""
    found: list[str] = []
    try:
        entries = [top, *(f"{top.rstrip('/')}/{entry}" for entry in os.listdir(top))]
    except OSError:
        entries = [top]
    for entry in entries:
        try:
            info = os.lstat(entry)
        except OSError:
            continue
        if (
            stat.S_ISREG(info.st_mode)
            and info.st_nlink > 1
            and (inodes is None or (info.st_dev, info.st_ino) in inodes)
        ):
            found.append(entry)
    return found
