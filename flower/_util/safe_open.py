"""Open a file of the workbench so that it can neither block nor lead elsewhere: regular files only.

Agents write in the workbench, so anything may sit where flower expects a file: a FIFO (opening it
blocks until a writer or reader comes, a thread lost for good), a device, a socket, or a symlink to a file
outside. Every read or append of a workbench or spill file goes through `open_regular`:

1. `lstat` first: anything but a regular file (a symlink included) is refused before it is opened, so a
   device is never opened at all;
2. `open` with `O_NOFOLLOW | O_NONBLOCK`: a symlink swapped in after the `lstat` fails (`ELOOP`), and a
   FIFO swapped in cannot block (a read opens at once, a write fails with `ENXIO`);
3. `fstat` on the descriptor: still a regular file, or it is closed and refused;
4. `O_NONBLOCK` is cleared: it means nothing for a regular file, and the descriptor is then an ordinary one.

A refusal is `NotRegularFileError`, an `OSError` naming the path and what was found there.
"""

from __future__ import annotations

import os
import stat
from typing import Final

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: O_NONBLOCK does not exist either
    fcntl = None  # type: ignore[assignment]

__all__ = ["NotRegularFileError", "append_regular", "open_regular", "read_regular"]

_SAFE: Final = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_KINDS: Final = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


class NotRegularFileError(OSError):
    """Something other than a regular file is where a file was expected; it was not opened (or not used)."""


def _refuse(path: str | os.PathLike[str], mode: int) -> NotRegularFileError:
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return NotRegularFileError(f"{os.fspath(path)!r} is {kind}, not a regular file: flower does not open it")


def open_regular(path: str | os.PathLike[str], flags: int = os.O_RDONLY, mode: int = 0o600) -> int:
    """A descriptor on the regular file `path` (created with `mode` when `flags` has `O_CREAT`).

    Raises `NotRegularFileError` for a symlink, a FIFO, a directory, a device or a socket, and the usual
    `OSError` otherwise (`FileNotFoundError` without `O_CREAT`...). It never blocks.
    """
    try:
        before = os.lstat(path)
    except FileNotFoundError:
        if not flags & os.O_CREAT:
            raise
    else:
        if not stat.S_ISREG(before.st_mode):
            raise _refuse(path, before.st_mode)
    try:
        fd = os.open(path, flags | _SAFE, mode)
    except OSError as exc:
        if exc.errno in (getattr(os, "ELOOP", -1), getattr(os, "ENXIO", -1)):
            # a symlink or a FIFO appeared since the lstat
            raise NotRegularFileError(f"{os.fspath(path)!r} changed into a non-regular file: {exc}") from exc
        raise
    try:
        found = os.fstat(fd).st_mode
        if not stat.S_ISREG(found):
            raise _refuse(path, found)
        if fcntl is not None:
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The bytes of the regular file `path` (at most `limit` of them); refuses as `open_regular` does."""
    fd = open_regular(path)
    try:
        if limit is not None:
            return os.read(fd, limit)
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def append_regular(path: str | os.PathLike[str], data: bytes, mode: int = 0o600) -> None:
    """Append `data` to the regular file `path` (created with `mode` when missing), in one `write` loop."""
    fd = open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
