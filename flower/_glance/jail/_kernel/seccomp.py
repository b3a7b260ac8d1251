"""Two seccomp filters: one that refuses what Landlock does not cover, one that counts new processes.

Landlock (see `landlock.py`) decides which files may be opened for writing. It does not see a socket
being created, an identity change, a file's mode, owner, times or extended attributes being set, System V
or POSIX message queues, keyrings, io_uring (whose operations bypass seccomp), mounts, or a signal to
another process on kernels before Landlock ABI 6. The *deny* filter refuses those system calls with an
error (never by killing: a program that probes a call must be able to fall back):

- every `socket()` and `socketpair()` (EACCES), whatever the family: no TCP, UDP, raw, netlink, or Unix
  socket, so neither the network nor a local daemon's socket (the CLI's own messaging socket included)
  can be reached, and no socket buffer holds memory that no limit counts (two processes queued 1.4 GiB
  in a socket pair's buffers); no glance needs one (shells, git and the listed verbs use pipes);
- identity and capability changes, namespaces (`unshare`, `setns`, `clone` with CLONE_NEW*), mounts,
  `ptrace` and other processes' memory or file descriptors, module loading, clock setting, reboot;
- metadata writes (`chmod`, `chown`, `utimensat`, `setxattr` ... `file_setattr`), which Landlock allows;
- `setsid`/`setpgid`: every process stays in the group the launcher kills at the deadline;
- `ioctl` only with a short list of read-only requests (terminal size and mode, FIONREAD, FIOCLEX ...):
  TIOCSTI (typing into a terminal), FS_IOC_SETFLAGS (`chattr`) and the rest get ENOTTY;
- `prlimit64` on another process, and `syslog` beyond reading the buffer's content and size;
- `mmap` of shared anonymous memory (ENOMEM), `mmap` with MAP_GROWSDOWN (EPERM) and `fallocate`
  (EPERM): shmem pages and a stack-like mapping are memory RLIMIT_DATA does not count (`fallocate
  (KEEP_SIZE)` grows a memfd past RLIMIT_FSIZE), so they would be memory bombs past the data limit
  (files are bounded by RLIMIT_FSIZE, /dev/shm by Landlock, System V segments by this filter, the real
  stack by the hard RLIMIT_STACK); every file a glance can write is /dev/null, a pipe or a memfd anyway;
- every number above the newest this table knows gets ENOSYS, so that a future call is not let through
  unexamined; `clone3` too (its flags sit in memory a filter cannot read: C libraries fall back to
  `clone`, whose flags it can).

The *counter* filter sends every `clone`/`fork`/`vfork` to the launcher (SECCOMP_RET_USER_NOTIF), which
lets the first N through and fails the others (EPERM for a process, EAGAIN for a thread): RLIMIT_NPROC
counts all processes of a user and does not apply to root at all, so it cannot bound one command.
"""

from __future__ import annotations

import ctypes
import errno
import struct

from .tables import ARCH, NEWEST_KNOWN, NR, libc

__all__ = ["Program", "counter_filter", "deny_filter", "install"]

# struct seccomp_data: nr (u32), arch (u32), instruction_pointer (u64), args[6] (u64)
_NR, _ARCH = 0, 4


def _arg(index: int, high: bool = False) -> int:
    return 16 + 8 * index + (4 if high else 0)  # little-endian: the low word first


_LD_ABS, _JEQ, _JGT, _JSET, _RET = 0x20, 0x15, 0x25, 0x45, 0x06
RET_KILL_PROCESS, RET_USER_NOTIF, RET_ALLOW = 0x80000000, 0x7FC00000, 0x7FFF0000


def _errno(code: int) -> int:
    return 0x00050000 | code


CLONE_NEW_ANY = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
"""CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET."""
O_TRUNC, O_ACCMODE = 0o1000, 3
F_SETOWN, F_SETSIG, F_SETOWN_EX = 8, 10, 15
"""`fcntl` commands that make the kernel signal a chosen process on I/O (Landlock scopes them from ABI 6)."""
MAP_SHARED_BIT, MAP_ANONYMOUS, MAP_GROWSDOWN = 0x01, 0x20, 0x0100  # MAP_SHARED_VALIDATE (3) has bit 0 too

READ_ONLY_IOCTLS = (
    0x5401,  # TCGETS (isatty)
    0x802C542A,  # TCGETS2
    0x5413,  # TIOCGWINSZ
    0x540F,  # TIOCGPGRP
    0x5429,  # TIOCGSID
    0x541B,  # FIONREAD
    0x5421,  # FIONBIO
    0x5452,  # FIOASYNC
    0x5450,  # FIONCLEX
    0x5451,  # FIOCLEX
    0x80086601,  # FS_IOC_GETFLAGS (lsattr)
    0x801C581F,  # FS_IOC_FSGETXATTR
    0x80087601,  # FS_IOC_GETVERSION
    0xC020660B,  # FS_IOC_FIEMAP
    0x00000002,  # FIGETBSZ
    0x80081272,  # BLKGETSIZE64
    0x00001268,  # BLKSSZGET
)

_ALWAYS_DENIED = [
    "connect",
    "bind",
    "listen",
    "accept",
    "accept4",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    "setuid",
    "setgid",
    "setreuid",
    "setregid",
    "setgroups",
    "setresuid",
    "setresgid",
    "setfsuid",
    "setfsgid",
    "capset",
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "mount_setattr",
    "move_mount",
    "open_tree",
    "open_tree_attr",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "swapon",
    "swapoff",
    "reboot",
    "sethostname",
    "setdomainname",
    "iopl",
    "ioperm",
    "init_module",
    "delete_module",
    "finit_module",
    "kexec_load",
    "kexec_file_load",
    "quotactl",
    "quotactl_fd",
    "acct",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "request_key",
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
    "msgget",
    "semget",
    "shmget",
    "msgctl",
    "semctl",
    "shmctl",
    "msgsnd",
    "msgrcv",
    "semop",
    "semtimedop",
    "shmat",
    "shmdt",
    "setsid",
    "setpgid",
    "setpriority",
    "sched_setscheduler",
    "sched_setparam",
    "sched_setaffinity",
    "sched_setattr",
    "ioprio_set",
    "migrate_pages",
    "move_pages",
    "process_madvise",
    "process_mrelease",
    "open_by_handle_at",
    "fanotify_init",
    "lookup_dcookie",
    "vhangup",
    "uselib",
    "sync",
    "syncfs",
    "nfsservctl",
    "create_module",
    "_sysctl",
    "lsm_set_self_attr",
    "chmod",
    "fchmod",
    "fchmodat",
    "fchmodat2",
    "chown",
    "fchown",
    "lchown",
    "fchownat",
    "utime",
    "utimes",
    "futimesat",
    "utimensat",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
    "setxattrat",
    "removexattrat",
    "file_setattr",
    "fallocate",
]
_SIGNALS = ["tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_send_signal"]
_TRUNCATION = ["truncate", "ftruncate"]


class Program:
    """A classic BPF program with forward jumps to named labels, assembled into `struct sock_filter`."""

    def __init__(self) -> None:
        self.code: list[tuple[int, int | str, int | str, int]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def load(self, offset: int) -> None:
        self.code.append((_LD_ABS, 0, 0, offset))

    def jump(self, op: int, k: int, true: int | str = 0, false: int | str = 0) -> None:
        self.code.append((op, true, false, k))

    def ret(self, value: int) -> None:
        self.code.append((_RET, 0, 0, value))

    def assemble(self) -> bytes:
        out = bytearray()
        for index, (op, true, false, k) in enumerate(self.code):
            offsets = [self._offset(index, target) for target in (true, false)]
            out += struct.pack("=HBBI", op, offsets[0], offsets[1], k & 0xFFFFFFFF)
        return bytes(out)

    def _offset(self, index: int, target: int | str) -> int:
        if isinstance(target, int):
            return target
        offset = self.labels[target] - index - 1
        if not 0 <= offset <= 255:
            raise ValueError(f"seccomp: jump to {target} out of range ({offset})")
        return offset


def deny_filter(*, landlock_abi: int, pgid: int) -> Program:
    """The deny filter for this machine; what Landlock covers at `landlock_abi` is not repeated.

    Below ABI 3 Landlock does not see truncation (`open(O_RDONLY|O_TRUNC)`, `truncate()`); below ABI 6
    it does not scope signals, so `kill` may reach only the command's own group (`pgid`) and the other
    signal calls are refused. Raises `RuntimeError` where the architecture has no table.
    """
    if ARCH is None:
        raise RuntimeError("seccomp: no system call table for this architecture")
    p = Program()
    p.load(_ARCH)
    p.jump(_JEQ, ARCH.audit, 0, "kill")
    p.load(_NR)
    if ARCH.x32_bit:
        p.jump(_JSET, ARCH.x32_bit, "kill", 0)
    p.jump(_JGT, NEWEST_KNOWN, "enosys", 0)
    denied = list(_ALWAYS_DENIED)
    special = {"socket": "eacces", "socketpair": "eacces", "clone3": "enosys", "clone": "clone"}
    special |= {"ioctl": "ioctl", "prlimit64": "prlimit", "syslog": "syslog", "mmap": "mmap"}
    if landlock_abi < 6:
        denied += _SIGNALS
        special |= {"kill": "kill_syscall", "fcntl": "fcntl"}
    if landlock_abi < 3:
        denied += _TRUNCATION
        special |= {"open": "open", "openat": "openat", "openat2": "enosys"}
    for name in denied:
        if name in NR:
            p.jump(_JEQ, NR[name], "eperm", 0)
    for name, target in special.items():
        if name in NR:
            p.jump(_JEQ, NR[name], target, 0)
    p.ret(RET_ALLOW)  # anything not named above
    p.label("clone")
    p.load(_arg(0))
    p.jump(_JSET, CLONE_NEW_ANY, "eperm", "allow")
    p.label("prlimit")
    p.load(_arg(0))
    p.jump(_JEQ, 0, "allow", 0)  # pid 0: this process
    p.load(_arg(2))
    p.jump(_JEQ, 0, 0, "eperm")  # another process: reading its limits only
    p.load(_arg(2, high=True))
    p.jump(_JEQ, 0, "allow", "eperm")
    p.label("mmap")
    p.load(_arg(3))
    p.jump(_JSET, MAP_GROWSDOWN, "eperm", 0)
    p.jump(_JSET, MAP_ANONYMOUS, 0, "allow")
    p.jump(_JSET, MAP_SHARED_BIT, "enomem", "allow")
    p.label("syslog")
    p.load(_arg(0))
    p.jump(_JEQ, 3, "allow", 0)  # SYSLOG_ACTION_READ_ALL
    p.jump(_JEQ, 10, "allow", "eperm")  # SYSLOG_ACTION_SIZE_BUFFER
    if landlock_abi < 6:
        p.label("kill_syscall")
        p.load(_arg(0))
        p.jump(_JEQ, 0, "allow", 0)
        p.jump(_JEQ, -pgid & 0xFFFFFFFF, "allow", "eperm")
        p.label("fcntl")  # F_SETOWN names the process to signal; F_SETSIG picks the signal
        p.load(_arg(1))
        p.jump(_JEQ, F_SETOWN, "eperm", 0)
        p.jump(_JEQ, F_SETOWN_EX, "eperm", 0)
        p.jump(_JEQ, F_SETSIG, "eperm", "allow")
    if landlock_abi < 3:
        p.label("open")
        p.load(_arg(1))
        p.jump(_JSET, O_TRUNC, 0, "allow")
        p.jump(_JSET, O_ACCMODE, "allow", "eperm")
        p.label("openat")
        p.load(_arg(2))
        p.jump(_JSET, O_TRUNC, 0, "allow")
        p.jump(_JSET, O_ACCMODE, "allow", "eperm")
    p.label("ioctl")  # its list ends in the ENOTTY return
    p.load(_arg(1))
    for request in READ_ONLY_IOCTLS:
        p.jump(_JEQ, request, "allow", 0)
    p.ret(_errno(errno.ENOTTY))
    p.label("allow")  # the shared returns come last: classic BPF jumps only forward
    p.ret(RET_ALLOW)
    for name, code in (
        ("eperm", errno.EPERM),
        ("eacces", errno.EACCES),
        ("enosys", errno.ENOSYS),
        ("enomem", errno.ENOMEM),
    ):
        p.label(name)
        p.ret(_errno(code))
    p.label("kill")
    p.ret(RET_KILL_PROCESS)
    return p


def counter_filter() -> Program:
    """Every process creation goes to the launcher, which counts it (`SECCOMP_RET_USER_NOTIF`)."""
    if ARCH is None:
        raise RuntimeError("seccomp: no system call table for this architecture")
    p = Program()
    p.load(_ARCH)
    p.jump(_JEQ, ARCH.audit, 0, "allow")  # another architecture is killed by the deny filter
    p.load(_NR)
    for name in ("clone", "fork", "vfork"):
        if name in NR:
            p.jump(_JEQ, NR[name], "notify", 0)
    p.label("allow")
    p.ret(RET_ALLOW)
    p.label("notify")
    p.ret(RET_USER_NOTIF)
    return p


SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER = 1, 1 << 3


class _Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install(program: Program, *, listener: bool = False) -> int:
    """Load `program` for this thread and its descendants; with `listener`, return the notification fd.

    Needs no_new_privs (set by the caller). Raises `OSError` when the kernel refuses: the caller must not
    go on to run the command.
    """
    code = program.assemble()
    buffer = ctypes.create_string_buffer(code, len(code))
    fprog = _Fprog(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    flags = SECCOMP_FILTER_FLAG_NEW_LISTENER if listener else 0
    result = libc().syscall(
        ctypes.c_long(NR["seccomp"]), ctypes.c_long(SECCOMP_SET_MODE_FILTER), ctypes.c_long(flags),
        ctypes.byref(fprog),
    )  # fmt: skip
    if result < 0:
        code_ = ctypes.get_errno()
        raise OSError(code_, f"seccomp filter not installed: {errno.errorcode.get(code_, code_)}")
    return int(result)
