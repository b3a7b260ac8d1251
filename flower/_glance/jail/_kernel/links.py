"""Hard links to credential files: found by inode, so that the jail cuts them out of what a glance reads.

Landlock judges a path, and a hard link is another path to the same file: a link in the workspace to
`~/.aws/credentials` (made by a worker, or unpacked from an archive) reads as a workspace file. A file
has another name only when its link count says so, so the launcher looks at the credential files
(`credential_inodes`: each regular file of the stores `reads.plan()` knows, in every home it meets) and,
only when one of them has more than one name on the file system of a tree the glance may read, walks
those trees for the other names (`find_links`). Finding one, `reads.plan()` refuses the glance: cutting
the link out of what Landlock grants would hide its content, not its size and times, which `stat` shows
whatever Landlock says (`ls -l`, `find -size`, zsh's `*(L+10)`). On a machine without such a link (nearly
all), the cost is one `stat` per credential file.

Bounded: at most `STORE_ENTRIES` entries of the stores are looked at (a larger `~/.claude` is looked at
up to there), and at most `TREE_ENTRIES` of the trees; past that, `find_links` raises `OSError` and the
launcher refuses to run the command (fail closed: it cannot say the link is not there). Standard library
only: the launcher imports this module.
"""

from __future__ import annotations

import os

__all__ = ["STORE_ENTRIES", "TREE_ENTRIES", "credential_inodes", "find_links"]

STORE_ENTRIES = 50_000
"""Entries of the credential stores looked at, at most."""
TREE_ENTRIES = 400_000
"""Entries of the readable trees walked for a link, at most."""


def credential_inodes(paths: list[str], devices: set[int]) -> set[tuple[int, int]]:
    """(device, inode) of each regular file at or below `paths` (not following links) that has more than
    one name and lies on one of `devices`."""
    found: set[tuple[int, int]] = set()
    budget = [STORE_ENTRIES]
    for path in paths:
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if info.st_dev not in devices:
            continue
        if info.st_mode & 0o170000 == 0o040000:
            _walk_store(path, devices, found, budget)
        elif info.st_mode & 0o170000 == 0o100000 and info.st_nlink > 1:
            found.add((info.st_dev, info.st_ino))
    return found


def _walk_store(top: str, devices: set[int], found: set[tuple[int, int]], budget: list[int]) -> None:
    stack = [top]
    while stack and budget[0] > 0:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            budget[0] -= 1
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    info = entry.stat(follow_symlinks=False)
                    if info.st_nlink > 1 and info.st_dev in devices:
                        found.add((info.st_dev, info.st_ino))
            except OSError:
                continue


def find_links(trees: list[str], inodes: set[tuple[int, int]]) -> list[str]:
    """The paths in `trees` (not following links) of the files in `inodes`. Raises `OSError` when the
    trees hold more than `TREE_ENTRIES` entries."""
    found: list[str] = []
    if not inodes:
        return found
    budget = TREE_ENTRIES
    stack = list(trees)
    while stack:
        top = stack.pop()
        try:
            info = os.lstat(top)
        except OSError:
            continue
        if info.st_mode & 0o170000 != 0o040000:
            if (info.st_dev, info.st_ino) in inodes:
                found.append(top)
            continue
        try:
            entries = list(os.scandir(top))
        except OSError:
            continue
        for entry in entries:
            budget -= 1
            if budget < 0:
                raise OSError(
                    f"a credential file has a second name (a hard link), and the readable trees hold more "
                    f"than {TREE_ENTRIES:,} entries to look for it in"
                )
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    stat = entry.stat(follow_symlinks=False)
                    if stat.st_nlink > 1 and (stat.st_dev, stat.st_ino) in inodes:
                        found.append(entry.path)
            except OSError:
                continue
    return found
