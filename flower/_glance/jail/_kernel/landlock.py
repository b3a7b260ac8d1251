"""Landlock: the command writes nothing but /dev/null, and reads only what `reads.plan()` allows.

The ruleset *handles* every write right the running kernel knows (ABI 1: write, remove, make-*; 2: refer;
3: truncate; 5: device ioctl) and grants them only on /dev/null, so the kernel refuses them on every other
path, whatever the spelling (`/var/run/../x`, links, `/proc/self/root/...`), to root as well.

Reads are an allow-list too: READ_FILE and READ_DIR are handled and granted only on the workspace, the
program and library trees, the few /etc files programs need (`reads.plan()`, credential stores cut out),
the devices programs read (`null`, `random`, `urandom`) and /proc: the whole of a private /proc (mounted
in the command's own PID namespace, where it shows the command's processes only), else only the files
about the machine (`reads.PROC_FILES`), so no process's directory, the command's own included. Root has
no capability left to bypass file permissions, so for root too this list is the wall (`/etc/shadow`,
another user's keys). A path is granted with everything below it, as the kernel resolves it: a link or
`..` cannot lead outside.

ABI 4 adds TCP: bind and connect are handled with no rule, so both are refused (seccomp refuses every
socket anyway). ABI 6 adds scopes: the command can neither reach an abstract Unix socket nor signal a
process outside its own domain (the CLI, the launcher, the user's other programs).

Landlock also stops ptrace-like access (`/proc/PID/fd/N`, `/proc/PID/environ`, `process_vm_*`) to any
process outside the domain, from ABI 1 on.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat

from . import reads
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
_READ = _READ_FILE | _READ_DIR


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


def restrict(version: int, readable: list[str], *, private_proc: bool) -> None:
    """Confine this thread and its future descendants (no_new_privs must be set). Raises `OSError`.

    `readable`: the paths a glance may read (`reads.plan()`); one that does not exist is skipped.
    `private_proc`: /proc is this command's own (a PID namespace's), readable as a whole.
    """
    writes = 0
    for level, rights in _WRITES_BY_ABI.items():
        if version >= level:
            writes |= rights
    attr = _RulesetAttr(fs=writes | _READ)
    size = 8
    if version >= 4:
        attr.net, size = _NET_BIND_TCP | _NET_CONNECT_TCP, 16
    if version >= 6:
        attr.scoped, size = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL, 24
    ruleset = _syscall(
        "landlock_create_ruleset", ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)
    )
    try:
        _allow(
            ruleset,
            "/dev/null",
            _READ_FILE | (writes & (_WRITE_FILE | _TRUNCATE | _IOCTL_DEV)),
            required=True,
        )
        proc = (
            ["/proc"]
            if private_proc
            else [f"/proc/{name}" for name in (*reads.PROC_FILES, *reads.PROC_TREES)]
        )
        for path in [*(f"/dev/{name}" for name in reads.DEVICES[1:]), *proc, *reads.SYS_TREES, *readable]:
            if path.startswith(reads.LIST_ONLY):
                _allow(ruleset, path[len(reads.LIST_ONLY) :], _READ_DIR)
            else:
                _allow(ruleset, path, _READ)
        _syscall("landlock_restrict_self", ctypes.c_int(ruleset), ctypes.c_uint32(0))
    finally:
        os.close(ruleset)


def _allow(ruleset: int, path: str, rights: int, *, required: bool = False) -> None:
    """Grant `rights` beneath `path` (followed if it is a link; a file gets only the file rights among
    them); a read grant that fails only loses reads."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        if required:
            raise
        return
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= ~_READ_DIR
        _syscall(
            "landlock_add_rule", ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
            ctypes.byref(_PathBeneath(rights, fd)), ctypes.c_uint32(0),
        )  # fmt: skip
    except OSError:
        if required:
            raise
    finally:
        os.close(fd)
