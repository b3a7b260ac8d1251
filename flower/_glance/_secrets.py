"""What a glance must not print because it holds credentials: the environment, other processes, stores.

A glance runs without the user's approval, so it must not widen what the coordinator sees. The CLI passes
its whole environment to Bash (`AWS_BEARER_TOKEN_BEDROCK`, `GH_TOKEN`, `CLAUDE_CODE_OAUTH_REFRESH_TOKEN`
…) and keeps its OAuth tokens in `~/.claude/.credentials.json` on Linux. The jail is the wall (the
command gets an allow-listed environment, and Landlock lets it read neither home directories nor
credential stores); the parser refuses the same things first, with a reason the model can act on:

- commands that dump the environment or other processes: `env`, `printenv`, `set` (and the declarations
  `export -p`, `declare -x`, refused as declarations), `ps` (every process's command line);
- a process's environment (`/proc/*/environ`, the command's own included) and any other process's /proc
  directory (`/proc/1/cmdline`: an app's arguments, the CLI's system prompt);
- the credential stores of `reads.HOME_SECRETS` in any home directory (`~/.ssh`, `$HOME/.aws`,
  `/home/alice/.claude`, `/home/*/.netrc` …), those of the system (`/etc/shadow`, private TLS keys …), the
  CLI's configuration directory (`$CLAUDE_CONFIG_DIR`), and files named like credentials anywhere
  (`.credentials.json`, `id_ed25519` …); for a recursive read, also a start above one (`grep -r x ~`).

A path is compared part by part after `..` is resolved as text and, when absolute, by the file system
too; a part known only at run time (`~/.s*`, `~/$X`) counts as matching whatever its literal text allows.
From a working directory the parser does not know, a relative path may reach a store at any of its parts
(`alice/.aws/credentials` read from /home).
"""

from __future__ import annotations

import os
import re
import stat

from ._paths import UNKNOWN, candidates, join, resolve
from ._repo_config import REASON, secret_config
from .jail._kernel.links import credential_inodes
from .jail._kernel.reads import GIT_CONFIG_FILES, HOME_SECRETS, SECRET_NAMES, SYSTEM_SECRETS, stores

__all__ = ["DUMPS", "secret_refusal"]

_CREDENTIALS = "which may hold credentials (API keys, tokens)"
DUMPS = {
    "env": f"`env` prints the environment, {_CREDENTIALS}",
    "printenv": f"`printenv` prints the environment, {_CREDENTIALS}",
    "set": f"`set` prints every shell variable, the environment's included, {_CREDENTIALS}",
    "compgen": f"`compgen` lists the shell's variables, {_CREDENTIALS}",
    "ps": f"`ps` prints other processes' command lines, {_CREDENTIALS}; a glance sees only its own processes",
}
"""Verbs that print the environment or other processes, with the reason each is refused."""

_HOME_SECRETS = [name.split("/") for name in (*HOME_SECRETS, *GIT_CONFIG_FILES)]
_SYSTEM_SECRETS = [path.strip("/").split("/") for path in (*SYSTEM_SECRETS, "/etc/gitconfig")]
_GIT_CONFIG = frozenset({*GIT_CONFIG_FILES, "etc/gitconfig"})
_CONFIG_MARKS = (".claude.json", ".credentials.json")
"""Files the CLI keeps in its configuration directory: a directory that holds one is that directory."""
_HOME_PARENTS = ("home", "Users")
_ROOT_HOMES = (["root"], ["var", "root"])


def secret_refusal(template: str, cwd: str | None = None, *, recursive: bool = False) -> str:
    """Why the argument `template`, read from `cwd` (None: unknown), names credentials, or ''.

    `recursive`: the verb walks the tree below the path, so a path above a credential store counts too.
    Besides the whole argument, an option's value is checked (`--file=~/.netrc`, `-f~/.netrc`).
    """
    for candidate in candidates(template):
        path = join(cwd, candidate)
        real = resolve(path) if _parts(path)[:1] != ["proc"] else None  # /proc/self is a magic link
        for form in dict.fromkeys([path, *([real] if real else [])]):
            reason = _check(_parts(form), form.startswith("/"), cwd is None, recursive)
            if reason:
                return reason
        if real and UNKNOWN not in real and (reason := _hard_link(real) or _repo_config(real, recursive)):
            return reason
    return ""


def _repo_config(path: str, recursive: bool) -> str:
    """Why `path` must not be read: it is a repository's git configuration that holds a token, or (for a
    recursive read) the git directory or work tree above one; or ''."""
    if path.endswith("/config") and os.path.isfile(os.path.dirname(path) + "/HEAD"):
        found = secret_config(os.path.dirname(os.path.dirname(path)))
        return REASON.format(path=found) if found and os.path.samefile(found, path) else ""
    found = secret_config(path) if recursive and os.path.isdir(path) else ""
    inside = os.path.dirname(found) == path or os.path.dirname(found).startswith(path.rstrip("/") + "/")
    return REASON.format(path=found) if found and inside else ""


def _hard_link(path: str) -> str:
    """Why the regular file at `path` must not be read: it is another name (a hard link) of a credential
    file, as the jail finds them (`links.py`); or ''. Costs one `stat` unless the file has several names."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return ""
    if not stat.S_ISREG(info.st_mode) or info.st_nlink < 2:
        return ""
    inodes = credential_inodes(stores(dict(os.environ), [path]), {info.st_dev})
    if (info.st_dev, info.st_ino) in inodes:
        return "a hard link to a credential file, which a glance does not read"
    return ""


def _parts(path: str) -> list[str]:
    """The path's parts with `.` and `..` resolved as text (a `..` above the start is kept)."""
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if (
            part == ".."
            and parts
            and parts[-1] != ".."
            and not parts[-1].startswith("~")
            and not _anywhere(parts[-1], first=len(parts) == 1)
        ):
            parts.pop()
        else:
            parts.append(part)
    return parts


def _anywhere(part: str, *, first: bool) -> bool:
    """Whether `part` (`first`: the path's first) may stand for several directories, so that a `..` after
    it may lead anywhere: a variable alone (`$PWD`), or `~+` and `~-` first. A glob is one name (`*/..` is
    `.`)."""
    return part == UNKNOWN or (first and part[:1] == UNKNOWN and part[1:] in ("+", "-"))


def _check(parts: list[str], absolute: bool, cwd_unknown: bool, recursive: bool) -> str:
    if absolute and parts[:1] == ["proc"]:
        return _proc(parts[1:])
    if recursive and absolute and (not parts or parts in ([name] for name in (*_HOME_PARENTS, "var"))):
        return "every home directory below it, with their credential stores"
    stores = [(rest, ["~", *secret]) for rest in _home_relative(parts, absolute, cwd_unknown)
              for secret in _HOME_SECRETS]  # fmt: skip
    if absolute:
        stores += [(parts, ["", *secret]) for secret in [*_SYSTEM_SECRETS, *_config_dir()]]
    for rest, store in stores:
        name = "/".join(store)
        if _inside(rest, store[1:]) and "/".join(store[1:]) in _GIT_CONFIG:
            return (
                f"git's configuration (`{name}`), which may hold tokens (`url.*.insteadOf`, "
                "`http.*.extraheader`); `git config --get NAME` shows a value with its secrets hidden"
            )
        if _inside(rest, store[1:]):
            return f"a credential store (`{name}`), which a glance does not read"
        if recursive and _inside(store[1:], rest):
            return f"a tree that holds a credential store (`{name}`), which a glance does not read"
    if parts and _name_matches(parts[-1], SECRET_NAMES):
        return f"a file named like credentials (`{parts[-1].replace(UNKNOWN, '*')}`)"
    if absolute and (config := _config_dir_above(parts)):
        return f"the CLI's configuration directory (`{config}`), which a glance does not read"
    return ""


def _config_dir_above(parts: list[str]) -> str:
    """The directory at or above the path (its parts known in full, up to the first known only at run
    time) that holds a file of the CLI's configuration (`$CLAUDE_CONFIG_DIR` spelled out, when this
    process does not have the CLI's environment), not a home directory; or ''."""
    known = parts[: next((i for i, p in enumerate(parts) if UNKNOWN in p), len(parts))]
    homes = {"/".join(home) for home in (*_ROOT_HOMES, _own_home()) if home}
    for end in range(len(known), 1, -1):
        directory = "/" + "/".join(known[:end])
        if "/".join(known[:end]) in homes or (known[0] in _HOME_PARENTS and end == 2):
            continue
        if any(os.path.isfile(f"{directory}/{mark}") for mark in _CONFIG_MARKS):
            return directory
    return ""


def _proc(rest: list[str]) -> str:
    if "environ" in rest or any(UNKNOWN in part for part in rest[1:]):
        return f"a process's environment (`/proc/…/environ`), {_CREDENTIALS}"
    if rest and (rest[0].isdigit() or UNKNOWN in rest[0]):  # a number or unknown: not `self`
        return f"another process's /proc directory: its command line and environment {_CREDENTIALS[6:]}"
    return ""


def _home_relative(parts: list[str], absolute: bool, cwd_unknown: bool) -> list[list[str]]:
    """The parts after a home directory the path may start with (`~`, `$HOME`, `/root`, `/home/NAME`),
    one list per way it may; a relative path from an unknown directory may start in a home too."""
    found: list[list[str]] = []
    if not parts:
        return found
    # `$PWD/..`, `~+/..`: a `..` after a part known only at run time (found in one pass: a long path of
    # `..` parts must not cost the wall more than its length)
    anywhere = next((k for k, part in enumerate(parts) if _anywhere(part, first=k == 0)), len(parts))
    up = next((i for i in range(anywhere + 1, len(parts)) if parts[i] == ".."), None)
    if up is not None:
        found.extend(parts[j:] for j in range(up + 1, len(parts)) if parts[j] != "..")
    if not absolute:
        if parts[0].startswith("~") or UNKNOWN in parts[0]:
            found.append(parts[1:])
        # the unknown working directory may be a home (`.aw?/credentials`; an unknown part alone, `$X/…`,
        # is taken as the home) or a directory above or below one (`alice/.aws/credentials` from /home,
        # `../.ssh` from a project in a home): a store may start at a later part too, one whose start is
        # written out (`src/**/*.py` names no store)
        if cwd_unknown and not parts[0].startswith("~") and parts[0] != UNKNOWN:
            found.append(parts)
            found.extend(
                parts[start:]
                for start in range(1, len(parts))
                if parts[start][:1] not in ("", UNKNOWN) and _may_start_a_store(parts[start])
            )
        return found
    if parts[0] in _HOME_PARENTS and len(parts) >= 2:
        found.append(parts[2:])
    for home in [*_ROOT_HOMES, _own_home()]:
        if home and parts[: len(home)] == home:
            found.append(parts[len(home) :])
    if UNKNOWN in parts[0]:
        found.append(parts[1:])
    return found


def _may_start_a_store(part: str) -> bool:
    """Whether a home's credential store may start at `part` (a cheap filter: a long path of other
    names must not cost the wall its length squared)."""
    return any(_part_matches(part, secret[0]) for secret in _HOME_SECRETS)


def _own_home() -> list[str]:
    home = os.path.expanduser("~")
    return home.strip("/").split("/") if os.path.isabs(home) and home != "/" else []


def _config_dir() -> list[list[str]]:
    config = os.environ.get("CLAUDE_CONFIG_DIR", "")
    return [os.path.normpath(config).strip("/").split("/")] if os.path.isabs(config) else []


def _inside(parts: list[str], top: list[str]) -> bool:
    """Whether `parts` may be `top` or below it, a part known only at run time matching what it may."""
    for i, name in enumerate(top):
        if i >= len(parts):
            return False
        if parts[i] == UNKNOWN:
            return True  # `$X` alone may hold several parts
        if not _part_matches(parts[i], name):
            return False
    return True


def _name_matches(part: str, names: tuple[str, ...]) -> bool:
    """A file name: a pattern counts only with a literal start (`.cred*`, not `*.json`)."""
    if part.startswith(UNKNOWN):
        return False
    return any(_part_matches(part, name) for name in names)


def _part_matches(part: str, name: str) -> bool:
    if UNKNOWN not in part:
        return part == name
    pattern = ".*".join(re.escape(piece) for piece in part.split(UNKNOWN))
    return re.fullmatch(pattern, name, re.S) is not None
