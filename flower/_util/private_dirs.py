"""flower's own directories: created 0700, and kept out of git by a `.gitignore` holding `*`.

The workbench and the session database hold tool outputs and whole transcripts, which can hold secrets.
They live in the user's repository (`<workspace>/.flower/`), where a plain `git add -A` would commit them
and the coordinator's own `git status` would show them. So the top directory flower creates for them gets
a `.gitignore` that ignores everything in it (itself included), and the workbench root always has one.

An existing `.gitignore` is never touched: to commit part of the workbench, edit it (say `*` then
`!scripts/`); deleting it only brings the default back.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Final

__all__ = ["GITIGNORE", "ignore_all", "make_private_dirs"]

GITIGNORE: Final = (
    "# Written by flower: this directory holds tool outputs and transcripts, which can hold secrets.\n"
    "# Edit this file to commit part of it (say `!scripts/`); flower never overwrites it.\n"
    "*\n"
)
_FLAGS: Final = (
    os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)


def ignore_all(directory: str | os.PathLike[str]) -> bool:
    """Write `directory/.gitignore` (`*`) unless something is there already; True when it was written.

    Raises `OSError` when the file cannot be created (a read-only directory, a full disk).
    """
    try:
        fd = os.open(os.path.join(directory, ".gitignore"), _FLAGS, 0o600)  # git reads it as its owner
    except FileExistsError:
        return False
    try:
        data = memoryview(GITIGNORE.encode("ascii"))
        while data:
            data = data[os.write(fd, data) :]
    finally:
        os.close(fd)
    return True


def make_private_dirs(directory: str | os.PathLike[str]) -> None:
    """Create `directory` and its missing parents (0700); the topmost one created gets a `.gitignore`.

    A directory that exists is left as it is: it is the user's (or was set up by an earlier call).
    """
    path = Path(os.path.abspath(directory))
    missing: list[Path] = []
    while not os.path.lexists(path) and path.parent != path:
        missing.append(path)
        path = path.parent
    for created in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another process made it meanwhile
            os.mkdir(created, 0o700)
    if missing:
        ignore_all(missing[-1])
