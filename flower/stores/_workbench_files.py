"""The workbench files a shared store carries: listing them, reading them, writing them back safely.

What travels: every regular file under the workbench's `scripts/`, `artifacts/`, `notes/` and `spill/`
(the history points into all four: spill and trim pointers, saved worker reports, handoff documents,
scripts the index lists). What does not: `INDEX.md` (regenerated from the disk), the spill manifest
`spill/INDEX.jsonl` (an append log per machine: its rows travel as rows), hidden and temporary files,
symlinks and anything that is not a regular file, and files over the size limit.

Writing back never replaces a local file and never leaves the workbench: the relative path is checked
(no `..`, no absolute path, no hidden part), every directory on the way is created 0700 and must be a
real directory inside the root, and the file is written to a temporary name, then linked into place
only if nothing is there yet.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Final, Literal

from .._spill._files import MANIFEST

__all__ = ["SYNCED", "LocalFile", "check_relative", "read_file", "read_manifest", "restore_file", "scan"]

SYNCED: Final = ("scripts", "artifacts", "notes", "spill")
_SKIP: Final = frozenset({f"spill/{MANIFEST}"})
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class LocalFile:
    """A workbench file as listed: relative POSIX path, size, modification time and permission bits."""

    path: str
    size: int
    mtime_ns: int
    mode: int


def scan(root: Path) -> list[LocalFile]:
    """The files that travel, sorted by path (a directory that cannot be listed is skipped)."""
    found: list[LocalFile] = []
    for top in SYNCED:
        pending = [(root / top, top)]
        while pending:
            directory, prefix = pending.pop()
            try:
                with os.scandir(directory) as listing:
                    items = list(listing)
            except OSError:
                continue
            for item in items:
                if item.name.startswith("."):
                    continue
                relative = f"{prefix}/{item.name}"
                try:
                    info = item.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(info.st_mode):
                    pending.append((Path(item.path), relative))
                elif stat.S_ISREG(info.st_mode) and relative not in _SKIP:
                    found.append(
                        LocalFile(relative, info.st_size, info.st_mtime_ns, stat.S_IMODE(info.st_mode))
                    )
    found.sort(key=lambda f: f.path)
    return found


def read_file(root: Path, relative: str, limit: int) -> tuple[bytes, str] | None:
    """The bytes and sha256 of a listed file; None when it is gone, not regular, or over `limit` bytes."""
    try:
        fd = os.open(root / relative, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            if sum(map(len, chunks)) > limit:
                return None
    except OSError:
        return None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return data, hashlib.sha256(data).hexdigest()


def read_manifest(root: Path, offset: int) -> tuple[list[str], int]:
    """The complete lines of `spill/INDEX.jsonl` from byte `offset`, and the offset after them."""
    try:
        with open(root / "spill" / MANIFEST, "rb") as manifest:
            manifest.seek(offset)
            data = manifest.read()
    except OSError:
        return [], offset
    end = data.rfind(b"\n") + 1  # a line still being written waits for the next time
    lines = [line.decode("utf-8", "replace") for line in data[:end].splitlines() if line.strip()]
    return lines, offset + end


def check_relative(relative: str) -> PurePosixPath | None:
    """`relative` as a path inside one of the synced directories, or None when it could leave them or
    names a file that never travels (the spill manifest)."""
    if not isinstance(relative, str) or not relative or "\x00" in relative or "\\" in relative:
        return None
    path = PurePosixPath(relative)
    parts = path.parts
    if path.is_absolute() or len(parts) < 2 or parts[0] not in SYNCED or relative in _SKIP:
        return None
    if any(part in ("", ".", "..") or part.startswith(".") for part in parts):
        return None
    return path


Outcome = Literal["restored", "same", "kept", "refused"]


def restore_file(root: Path, relative: str, data: bytes, mode: int) -> Outcome:
    """Write a stored file into the workbench when it is missing there.

    `"restored"` when written, `"same"` when the local file already has these bytes, `"kept"` when a
    local file with other content is there (it is never replaced), `"refused"` for a path that could
    leave the workbench or a symlink or non-directory on the way.
    """
    path = check_relative(relative)
    if path is None:
        return "refused"
    real_root = os.path.realpath(root)
    directory = root
    for part in path.parts[:-1]:
        directory = directory / part
        with contextlib.suppress(FileExistsError):
            os.mkdir(directory, 0o700)
        if os.path.islink(directory) or not directory.is_dir():
            return "refused"
        if os.path.commonpath([os.path.realpath(directory), real_root]) != real_root:
            return "refused"
    target = directory / path.name
    if os.path.lexists(target):
        if target.is_symlink() or not target.is_file():
            return "kept"
        same = read_file(root, relative, len(data))
        return "same" if same is not None and same[0] == data else "kept"
    temporary = directory / f".restore-{secrets.token_hex(8)}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, (mode & 0o700) | 0o600)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(temporary)
        raise
    os.close(fd)
    try:
        os.link(temporary, target)  # fails if something appeared meanwhile: the local file wins
    except FileExistsError:
        return "kept"
    finally:
        os.unlink(temporary)
    return "restored"
