"""System call numbers and kernel constants the jail needs, for x86_64 and aarch64.

Numbers come from the kernel's uapi headers (`asm/unistd_64.h` and `asm-generic/unistd.h`); since 424
(`pidfd_send_signal`) every architecture shares one numbering. A name missing on an architecture (x86's
`open`, `fork`, `chmod` ... have no aarch64 twin) is simply absent there.
"""

from __future__ import annotations

import ctypes
import os

__all__ = ["ARCH", "AUDIT_ARCH", "NEWEST_KNOWN", "NR", "Arch", "libc"]

_LIBC: list[ctypes.CDLL] = []


def libc() -> ctypes.CDLL:
    """The C library, loaded once (each `ctypes.CDLL` costs a `dlopen`), with `syscall` returning a long."""
    if not _LIBC:
        lib = ctypes.CDLL(None, use_errno=True)
        lib.syscall.restype = ctypes.c_long
        lib.prctl.restype = ctypes.c_int
        _LIBC.append(lib)
    return _LIBC[0]


class Arch:
    """One architecture: its audit tag (checked first by the filter) and its system call numbers."""

    def __init__(self, name: str, audit: int, numbers: dict[str, int], x32_bit: int = 0) -> None:
        self.name, self.audit, self.numbers, self.x32_bit = name, audit, numbers, x32_bit


_SHARED = {  # 424 and up: the same on every architecture
    "pidfd_send_signal": 424, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "pidfd_open": 434, "clone3": 435, "openat2": 437, "pidfd_getfd": 438, "process_madvise": 440,
    "mount_setattr": 442, "quotactl_fd": 443, "landlock_create_ruleset": 444, "landlock_add_rule": 445,
    "landlock_restrict_self": 446, "process_mrelease": 448, "fchmodat2": 452, "lsm_set_self_attr": 460,
    "setxattrat": 463, "removexattrat": 466, "open_tree_attr": 467, "file_setattr": 469,
}  # fmt: skip

NEWEST_KNOWN = 469
"""The highest number this table knows (`file_setattr`, Linux 6.17). The filter refuses every number above
it with ENOSYS: a system call added later may write in a way no rule here foresaw, and C libraries fall
back to older calls when they meet ENOSYS."""

_X86_64 = {
    "mmap": 9, "ioctl": 16, "shmget": 29, "shmat": 30, "shmctl": 31, "socket": 41, "connect": 42,
    "accept": 43,
    "bind": 49, "listen": 50, "socketpair": 53, "clone": 56, "fork": 57, "vfork": 58, "kill": 62,
    "semget": 64, "semop": 65, "semctl": 66, "shmdt": 67, "msgget": 68, "msgsnd": 69, "msgrcv": 70,
    "msgctl": 71, "truncate": 76, "ftruncate": 77, "creat": 85, "chmod": 90, "fchmod": 91, "chown": 92,
    "fchown": 93, "lchown": 94, "ptrace": 101, "syslog": 103, "setuid": 105, "setgid": 106,
    "setpgid": 109, "setsid": 112, "setreuid": 113, "setregid": 114, "setgroups": 116, "setresuid": 117,
    "setresgid": 119, "setfsuid": 122, "setfsgid": 123, "capget": 125, "capset": 126, "rt_sigqueueinfo": 129,
    "utime": 132, "uselib": 134, "setpriority": 141, "sched_setparam": 142, "sched_setscheduler": 144,
    "vhangup": 153, "pivot_root": 155, "adjtimex": 159, "chroot": 161, "sync": 162, "acct": 163,
    "settimeofday": 164, "mount": 165, "umount2": 166, "swapon": 167, "swapoff": 168, "reboot": 169,
    "sethostname": 170, "setdomainname": 171, "iopl": 172, "ioperm": 173, "init_module": 175,
    "delete_module": 176, "quotactl": 179, "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190,
    "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199, "tkill": 200, "sched_setaffinity": 203,
    "lookup_dcookie": 212, "semtimedop": 220, "clock_settime": 227, "tgkill": 234, "utimes": 235,
    "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243, "mq_notify": 244,
    "mq_getsetattr": 245, "kexec_load": 246, "add_key": 248, "request_key": 249, "keyctl": 250,
    "ioprio_set": 251, "migrate_pages": 256, "open": 2, "openat": 257, "fchownat": 260, "futimesat": 261,
    "fchmodat": 268, "unshare": 272, "move_pages": 279, "utimensat": 280, "accept4": 288,
    "rt_tgsigqueueinfo": 297, "perf_event_open": 298, "fanotify_init": 300, "prlimit64": 302,
    "open_by_handle_at": 304, "clock_adjtime": 305, "syncfs": 306, "setns": 308, "process_vm_readv": 310,
    "process_vm_writev": 311, "kcmp": 312, "finit_module": 313, "sched_setattr": 314, "seccomp": 317,
    "kexec_file_load": 320, "bpf": 321, "userfaultfd": 323, "nfsservctl": 180, "create_module": 174,
    "_sysctl": 156, "setrlimit": 160, "prctl": 157, "fallocate": 285, "fcntl": 72,
}  # fmt: skip

_AARCH64 = {
    "mmap": 222, "ioctl": 29, "shmget": 194, "shmat": 196, "shmctl": 195, "socket": 198, "connect": 203,
    "accept": 202,
    "bind": 200, "listen": 201, "socketpair": 199, "clone": 220, "kill": 129, "semget": 190, "semop": 193,
    "semctl": 191, "shmdt": 197, "msgget": 186, "msgsnd": 189, "msgrcv": 188, "msgctl": 187,
    "truncate": 45, "ftruncate": 46, "fchmod": 52, "fchown": 55, "ptrace": 117, "syslog": 116,
    "setuid": 146, "setgid": 144, "setpgid": 154, "setsid": 157, "setreuid": 145, "setregid": 143,
    "setgroups": 159, "setresuid": 147, "setresgid": 149, "setfsuid": 151, "setfsgid": 152, "capget": 90,
    "capset": 91,
    "rt_sigqueueinfo": 138, "setpriority": 140, "sched_setparam": 118, "sched_setscheduler": 119,
    "vhangup": 58, "pivot_root": 41, "adjtimex": 171, "chroot": 51, "sync": 81, "acct": 89,
    "settimeofday": 170, "mount": 40, "umount2": 39, "swapon": 224, "swapoff": 225, "reboot": 142,
    "sethostname": 161, "setdomainname": 162, "init_module": 105, "delete_module": 106, "quotactl": 60,
    "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14, "lremovexattr": 15,
    "fremovexattr": 16, "tkill": 130, "sched_setaffinity": 122, "lookup_dcookie": 18, "semtimedop": 192,
    "clock_settime": 112, "tgkill": 131, "mq_open": 180, "mq_unlink": 181, "mq_timedsend": 182,
    "mq_timedreceive": 183, "mq_notify": 184, "mq_getsetattr": 185, "kexec_load": 104, "add_key": 217,
    "request_key": 218, "keyctl": 219, "ioprio_set": 30, "migrate_pages": 238, "openat": 56,
    "fchownat": 54, "fchmodat": 53, "unshare": 97, "move_pages": 239, "utimensat": 88, "accept4": 242,
    "rt_tgsigqueueinfo": 240, "perf_event_open": 241, "fanotify_init": 262, "prlimit64": 261,
    "open_by_handle_at": 265, "clock_adjtime": 266, "syncfs": 267, "setns": 268, "process_vm_readv": 270,
    "process_vm_writev": 271, "kcmp": 272, "finit_module": 273, "sched_setattr": 274, "seccomp": 277,
    "kexec_file_load": 294, "bpf": 280, "userfaultfd": 282, "nfsservctl": 42, "setrlimit": 164, "prctl": 167,
    "fallocate": 47, "fcntl": 25,
}  # fmt: skip

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}

_ARCHES = {
    "x86_64": Arch("x86_64", AUDIT_ARCH["x86_64"], {**_X86_64, **_SHARED}, x32_bit=0x40000000),
    "aarch64": Arch("aarch64", AUDIT_ARCH["aarch64"], {**_AARCH64, **_SHARED}),
}
_ARCHES["amd64"], _ARCHES["arm64"] = _ARCHES["x86_64"], _ARCHES["aarch64"]

ARCH: Arch | None = _ARCHES.get(os.uname().machine.lower())
"""This machine's architecture, or None where the jail has no table (it then refuses to run)."""
NR: dict[str, int] = ARCH.numbers if ARCH else {}
