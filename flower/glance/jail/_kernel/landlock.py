"""Landlock: no file may be written, created, removed, renamed or linked, but /dev/null written.

The ruleset *handles* every write right the running kernel knows (ABI 1: write, remove, make-*; 2: refer;
3: truncate; 5: device ioctl) and grants them only on /dev/null, so the kernel refuses them on every other
path, whatever the spelling (`/var/run/../x`, links, `/proc/self/root/...`), to root as well.

Reads stay allowed everywhere but under /dev: reading a terminal there (`/dev/pts/N`) would take the
user's keystrokes, and a FIFO or device is no glance. So READ_FILE is handled too and granted beneath
every entry of `/` except `dev`, and on the few devices programs read (`null`, `random`, `urandom`);
`/dev/stdin` and `/dev/fd/N` lead through `/proc` to the command's own descriptors.

ABI 4 adds TCP: bind and connect are handled with no rule, so both are refused (seccomp refuses every
socket anyway). ABI 6 adds scopes: the command can neither reach an abstract Unix socket nor signal a
process outside its own domain (the CLI, the launcher, the user's other programs).

Landlock also stops ptrace-like access (`/proc/PID/fd/N`, `/proc/PID/mem`, `process_vm_*`) to any
process outside the domain, from ABI 1 on.
"""

from __future__ import annotations

import ctypes
import errno
import os

from .tables import NR, libc

__all__ = ["abi", "restrict"]

_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_WRITES_BY_ABI = {
    1: (1 << 1) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 11)
    | (1 << 12),  # WRITE_FILE REMOVE_DIR REMOVE_FILE MAKE_CHAR MAKE_DIR MAKE_REG MAKE_SOCK MAKE_FIFO ...
    2: 1 << 13,  # REFER
    3: 1 << 14,  # TRUNCATE
    5: 1 << 15,  # IOCTL_DEV
}  # fmt: skip
_TRUNCATE, _IOCTL_DEV = 1 << 14, 1 << 15
_NET_BIND_TCP, _NET_CONNECT_TCP = 1, 2
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1, 2
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
READABLE_DEVICES = ("null", "random", "urandom")
"""Not /dev/zero: it never ends, and a shared mapping of it would be memory no limit counts."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _syscall(name: str, *args: object) -> int:
    result = int(libc().syscall(ctypes.c_long(NR[name]), *args))
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{name}: {os.strerror(code)}")
    return result


def abi() -> int:
    """The Landlock ABI version of the running kernel; 0 when Landlock is absent or disabled."""
    if "landlock_create_ruleset" not in NR:
        return 0
    try:
        return _syscall(
            "landlock_create_ruleset", ctypes.c_void_p(None), ctypes.c_size_t(0),
            ctypes.c_uint32(_CREATE_RULESET_VERSION),
        )  # fmt: skip
    except OSError as error:
        if error.errno in (errno.ENOSYS, errno.EOPNOTSUPP):
            return 0
        raise


def restrict(version: int) -> None:
    """Confine this thread and its future descendants (no_new_privs must be set). Raises `OSError`."""
    writes = 0
    for level, rights in _WRITES_BY_ABI.items():
        if version >= level:
            writes |= rights
    attr = _RulesetAttr(fs=writes | _READ_FILE)
    size = 8
    if version >= 4:
        attr.net, size = _NET_BIND_TCP | _NET_CONNECT_TCP, 16
    if version >= 6:
        attr.scoped, size = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL, 24
    ruleset = _syscall(
        "landlock_create_ruleset", ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)
    )
    try:
        file_rights = _READ_FILE | (writes & (_WRITE_FILE | _TRUNCATE | _IOCTL_DEV))
        _allow(ruleset, "/dev/null", file_rights, required=True)
        for name in READABLE_DEVICES[1:]:
            _allow(ruleset, f"/dev/{name}", _READ_FILE)
        for name in sorted(os.listdir("/")):
            if name != "dev":
                _allow(ruleset, "/" + name, _READ_FILE)
        _syscall("landlock_restrict_self", ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)


def _allow(ruleset: int, path: str, rights: int, *, required: bool = False) -> None:
    """Grant `rights` beneath `path` (followed if it is a link); a read grant that fails only loses reads."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        if required:
            raise
        return
    try:
        _syscall(
            "landlock_add_rule", ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
            ctypes.byref(_PathBeneath(rights, fd)), ctypes.c_uint32(0),
        )  # fmt: skip
    except OSError:
        if required:
            raise
    finally:
        os.close(fd)
