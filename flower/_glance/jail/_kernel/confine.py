"""Confine the calling process, in the order the kernel needs, or raise: never half a jail.

`confine()` runs in the launcher's child between fork and exec. Each step either succeeds or raises
`JailError`; the launcher then exits without running the command (fail closed).

1. resource limits (CPU seconds, data segment, stack, address space, no file growth, no core dump),
   lowered hard as well, so that the command cannot raise them again;
2. capabilities: all dropped, from the bounding and ambient sets too (root keeps no CAP_DAC_OVERRIDE or
   CAP_DAC_READ_SEARCH to read past file permissions: what it may read is Landlock's allow-list); then
   verified with capget;
3. no_new_privs: a set-user-ID program or file capability cannot give them back;
4. Landlock (ABI 1 at least), then the seccomp deny filter, then the counter filter, whose notification
   descriptor is returned to the launcher.
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource

from . import landlock, seccomp
from .tables import ARCH, NR, libc

__all__ = ["JailError", "Limits", "confine", "landlock_abi"]

PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP, PR_CAP_AMBIENT = 1, 38, 24, 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAP_VERSION_3 = 0x20080522


class JailError(RuntimeError):
    """Confinement could not be applied in full; the command must not run."""


class Limits:
    """The bounds of one glance, as the launcher's command line carries them (see `JailLimits`).

    A plain class, not a dataclass: importing `dataclasses` costs the launcher ~10 ms at every glance.
    """

    __slots__ = (
        "address_bytes",
        "cpu_seconds",
        "data_bytes",
        "memory_bytes",
        "open_files",
        "output_bytes",
        "processes",
        "stack_bytes",
        "threads",
        "wall_seconds",
    )

    def __init__(self, wall_seconds: float = 5.0, cpu_seconds: int = 5, data_bytes: int = 512 << 20,
                 memory_bytes: int = 1 << 30, processes: int = 128, output_bytes: int = 24_000,
                 open_files: int = 1024, threads: int = 256, stack_bytes: int = 8 << 20,
                 address_bytes: int = 4 << 30) -> None:  # fmt: skip
        self.wall_seconds, self.cpu_seconds, self.data_bytes = wall_seconds, cpu_seconds, data_bytes
        self.memory_bytes, self.processes, self.output_bytes = memory_bytes, processes, output_bytes
        self.open_files, self.threads = open_files, threads
        self.stack_bytes, self.address_bytes = stack_bytes, address_bytes


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def prctl(option: int, arg: int = 0) -> int:
    result = int(libc().prctl(ctypes.c_int(option), ctypes.c_ulong(arg), ctypes.c_ulong(0),
                               ctypes.c_ulong(0), ctypes.c_ulong(0)))  # fmt: skip
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"prctl({option}): {os.strerror(code)}")
    return result


def landlock_abi() -> int:
    try:
        return landlock.abi()
    except OSError:
        return 0


def confine(limits: Limits, *, pgid: int, readable: list[str], private_proc: bool,
            max_abi: int = 1 << 30) -> int:  # fmt: skip
    """Apply every restriction to this process; return the counter filter's notification descriptor.

    `readable` and `private_proc` are Landlock's reads (see `landlock.restrict`). `max_abi` makes the
    jail use an older Landlock ABI than the kernel offers (tests of the seccomp stand-ins that older
    kernels need); it can only take Landlock features away, never add any.
    """
    if ARCH is None:
        raise JailError(f"no system call table for {os.uname().machine}")
    version = min(landlock_abi(), max_abi)
    if version < 1:
        raise JailError(
            "Landlock is not available in this kernel (Linux 5.13+ with landlock in the LSM list)"
        )
    try:
        _limit(limits)
        _drop_capabilities()
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        landlock.restrict(version, readable, private_proc=private_proc)
        seccomp.install(seccomp.deny_filter(landlock_abi=version, pgid=pgid))
        return seccomp.install(seccomp.counter_filter(), listener=True)
    except (OSError, ValueError) as error:
        raise JailError(str(error)) from error


def _limit(limits: Limits) -> None:
    cpu = max(1, int(limits.cpu_seconds))
    for kind, soft, hard in (
        (resource.RLIMIT_CPU, cpu, cpu + 1),  # SIGXCPU at the soft limit, SIGKILL a second later
        (resource.RLIMIT_DATA, limits.data_bytes, limits.data_bytes),
        (resource.RLIMIT_STACK, limits.stack_bytes, limits.stack_bytes),  # a stack is not data
        (resource.RLIMIT_AS, limits.address_bytes, limits.address_bytes),  # whatever a mapping is
        (resource.RLIMIT_FSIZE, 0, 0),  # no regular file can grow (Landlock allows none to be written)
        (resource.RLIMIT_CORE, 1, 1),  # 1, not 0: the kernel then skips a core_pattern pipe helper too
        (resource.RLIMIT_NOFILE, limits.open_files, limits.open_files),
        (resource.RLIMIT_MSGQUEUE, 0, 0),
        (resource.RLIMIT_MEMLOCK, 64 << 10, 64 << 10),
    ):
        _current_soft, current_hard = resource.getrlimit(kind)
        if current_hard != resource.RLIM_INFINITY:
            hard = min(hard, current_hard)
        resource.setrlimit(kind, (min(soft, hard), hard))


def _capabilities() -> tuple[int, int, int]:
    """(effective, permitted, inheritable) of this thread, the first 32 capabilities and the next 32."""
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    if libc().syscall(ctypes.c_long(NR["capget"]), ctypes.byref(header), ctypes.byref(data)) < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"capget: {os.strerror(code)}")
    low, high = data[0], data[1]
    return (
        low.effective | high.effective << 32,
        low.permitted | high.permitted << 32,
        low.inheritable | high.inheritable << 32,
    )


def _drop_capabilities() -> None:
    try:
        prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    except OSError as error:
        if error.errno != errno.EINVAL:  # before Linux 4.3 there is no ambient set
            raise
    effective, permitted, inheritable = _capabilities()
    if permitted or inheritable:
        with open("/proc/sys/kernel/cap_last_cap") as file:
            last = int(file.read())
        for cap in range(last + 1):
            try:
                prctl(PR_CAPBSET_DROP, cap)
            except OSError as error:  # without CAP_SETPCAP; no_new_privs still caps what exec gives
                if error.errno not in (errno.EPERM, errno.EINVAL):
                    raise
        header = _CapHeader(_CAP_VERSION_3, 0)
        data = (_CapData * 2)()  # all zero: no capability left
        if libc().syscall(ctypes.c_long(NR["capset"]), ctypes.byref(header), ctypes.byref(data)) < 0:
            code = ctypes.get_errno()
            raise OSError(code, f"capset: {os.strerror(code)}")
    effective, permitted, inheritable = _capabilities()
    if effective | permitted | inheritable:
        raise JailError(f"capabilities remain after dropping them (permitted {permitted:#x})")
