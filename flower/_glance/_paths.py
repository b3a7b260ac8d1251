"""Paths a glance must not read: devices, endless or linking /proc and /sys files, gawk's network files.

`/dev/zero` never ends, `/dev/tty` waits, `/proc/kmsg` blocks, `/proc/self/root/…` and `/proc/self/fd/…`
lead back to any device, and gawk connects when a file operand is `/inet/tcp/…`. Any spelling counts:
`//dev/zero`, `/./dev/zero`, `/usr/../dev/zero`, `../../dev/zero` (enough `..` reach `/` from anywhere),
and `$X/dev/zero` or `/d?v/zero`, where a part known only at run time could be empty or match `dev`.

A path is checked as a template: its literal text, with `UNKNOWN` standing for each part known only at
run time (a variable, a glob character, a brace expansion, a leading `~`), read from the directory the
command runs in when that is known (`cd sub && cat x` reads `sub/x`). `..` is resolved as text, and
then, for an absolute path, by the file system too: symbolic links and `..` followed the way the kernel
follows them (`/var/run` is a link to `/run`, so `/var/run/../dev/zero` is `/dev/zero`), up to the first
part known only at run time. A path known in full is looked at: a named pipe, a device or a socket
(`data -> /dev/zero`, a FIFO under an ordinary name) is refused. Nothing is opened: `realpath` and
`stat` only read directory entries.
"""

from __future__ import annotations

import os
import re
import stat

from ._verb import names
from .jail._kernel.reads import PROC_FILES, PROC_TREES

__all__ = ["UNKNOWN", "candidates", "join", "path_refusal", "reaches_root", "resolve"]

UNKNOWN = "\0"
"""Stands for a part of a word that is known only at run time."""

_SPECIAL_ROOTS = {
    "dev": "a device file other than /dev/null (`/dev/zero` never ends, `/dev/tty` waits)",
    "proc": "a /proc file that never ends, blocks or leads to another file (`/proc/kmsg`, `/proc/*/fd/…`)",
    "sys": "a /sys file (some block forever, such as the tracing pipes)",
    "inet": "a gawk network special file (`/inet/tcp/…` connects)",
    "inet4": "a gawk network special file (`/inet4/tcp/…` connects)",
    "inet6": "a gawk network special file (`/inet6/tcp/…` connects)",
}
_UNKNOWN_TOP = "a path whose top-level directory is known only at run time (it may be /dev or /proc)"
_PROC_FILES = frozenset(PROC_FILES)
"""Top-level /proc files with a short, finite content."""
_PROC_TREES = frozenset({"net", *PROC_TREES})
"""/proc directories of plain, finite files only."""
_PROC_PROCESS_FILES = names("""status stat statm cmdline comm limits io maps smaps smaps_rollup
    mountinfo mounts mountstats cgroup oom_score oom_score_adj oom_adj sched schedstat wchan cpuset
    personality loginuid sessionid uid_map gid_map projid_map setgroups timerslack_ns stack syscall""")
"""Files of a process directory (`/proc/self/…`) with a short, finite content (never `environ`)."""
_PROCESS = re.compile(r"self|thread-self|[0-9]+")
_SHORT_VALUE_START = frozenset("/.~" + UNKNOWN)


def path_refusal(template: str, cwd: str | None = None) -> str:
    """Why the argument `template`, read from the directory `cwd` (None: unknown), must not be read, or ''.

    Besides the whole argument, the value of an option is checked: after the first `=`
    (`--file=/dev/zero`, `if=/dev/zero`) and after any letter of a short cluster (`-f/dev/zero`).
    """
    if "/" not in template and cwd is None:
        return ""  # one component: it is not under `/` (and `..` or a run-time part alone names no file)
    for candidate in candidates(template):
        path = join(cwd, candidate)
        reason = _special(path)
        real = resolve(path)
        if not reason and real is not None:
            reason = _special(real) or _special_file(real)
        if reason:
            return reason
    return ""


def reaches_root(template: str, cwd: str | None = None) -> bool:
    """Whether the path may be `/` itself (`/`, `/.`, `..`, `$X`): a recursive read there meets /proc."""
    path = join(cwd, template)
    real = resolve(path)
    return _resolve(path, check=False)[1] or (real is not None and _resolve(real, check=False)[1])


def join(cwd: str | None, template: str) -> str:
    """`template` read from the directory `cwd` (a path, or None when unknown)."""
    if cwd is None or template.startswith(("/", UNKNOWN, "~")):
        return template
    return cwd.rstrip("/") + "/" + template


def resolve(template: str) -> str | None:
    """An absolute `template` with its leading literal parts resolved by the file system, or None.

    The parts after the first one known only at run time stay text. None when the template is not
    absolute, or when resolving fails (a loop of links, a name too long): the text checks still apply.
    """
    if not template.startswith("/"):
        return None
    parts = template.split("/")
    known = next((i for i, part in enumerate(parts) if UNKNOWN in part), len(parts))
    try:
        real = os.path.realpath("/".join(parts[:known]) or "/")
    except (OSError, ValueError):
        return None
    rest = "/".join(parts[known:])
    return real if not rest else real.rstrip("/") + "/" + rest


def _special_file(path: str) -> str:
    """Why the file at `path` (absolute, resolved) must not be read: a pipe, device or socket; or ''."""
    if UNKNOWN in path or path == "/dev/null":
        return ""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return ""
    if stat.S_ISFIFO(mode):
        return f"a named pipe (`{path}`), which waits for a writer"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return f"a device file (`{path}`)"
    if stat.S_ISSOCK(mode):
        return f"a socket (`{path}`)"
    return ""


def candidates(template: str) -> list[str]:
    """The argument, and the values an option may carry in it: after `=`, after a short option's letter."""
    found = [template]
    if "=" in template:
        found.append(template.partition("=")[2])
    if template.startswith("-") and not template.startswith("--"):
        found.extend(template[k:] for k in range(2, len(template)) if template[k] in _SHORT_VALUE_START)
    return found


def _special(path: str) -> str:
    return _resolve(path, check=True)[0]


def _resolve(path: str, check: bool) -> tuple[str, bool]:
    """Walk `path`, resolving `.` and `..` as text; with `check`, the reason it must not be read, or ''.

    Also returns whether the end may be `/`. A relative path may climb to `/` with enough `..`; a part
    known only at run time may be empty, `/` or `..`, so after one the position may be `/` too.
    """
    parts = path.split("/")
    stack: list[str] = []
    root = path.startswith("/")
    for i, part in enumerate(parts):
        if part in ("", "."):
            continue
        if part == "..":
            if stack:
                stack.pop()
            else:
                root = True
            continue
        unknown = UNKNOWN in part or (i == 0 and part.startswith("~"))
        if check and root and not stack and (UNKNOWN in part or part in _SPECIAL_ROOTS):
            rest = [p for p in parts[i + 1 :] if p not in ("", ".")]
            if UNKNOWN not in part:
                allowed = (part == "dev" and rest == ["null"]) or (part == "proc" and _proc_allowed(rest))
                return ("" if allowed else _SPECIAL_ROOTS[part]), False
            if rest:
                return _UNKNOWN_TOP, False
        if unknown:
            stack, root = [], True
        else:
            stack.append(part)
    return "", root and not stack


def _proc_allowed(rest: list[str]) -> bool:
    """Whether a path below /proc names a file of short, finite content (never `..`, links or unknowns)."""
    if not rest or any(part == ".." or UNKNOWN in part for part in rest):
        return False
    top = rest[0]
    if top in _PROC_TREES:
        return True
    if top in _PROC_FILES:
        return len(rest) == 1
    if _PROCESS.fullmatch(top) and len(rest) >= 2:
        if rest[1] == "task" and len(rest) >= 4 and rest[2].isdigit():
            rest = rest[2:]
        if rest[1] == "net":
            return True
        if rest[1] == "fdinfo":
            return len(rest) == 3 and rest[2].isdigit()
        return len(rest) == 2 and rest[1] in _PROC_PROCESS_FILES
    return False
