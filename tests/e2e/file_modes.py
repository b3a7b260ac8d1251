"""The check that what flower writes is private to its user."""

from __future__ import annotations

import stat
from pathlib import Path


def flower_modes(root: Path) -> dict[str, int]:
    """Every path under `root` (itself included) with its permission bits."""
    found = {".": stat.S_IMODE(root.lstat().st_mode)}
    for path in root.rglob("*"):
        found[str(path.relative_to(root))] = stat.S_IMODE(path.lstat().st_mode)
    return found


def assert_private(root: Path, *, by_agents: frozenset[str] = frozenset()) -> dict[str, int]:
    """Directories 0700 and files 0600 under `root`; returns what it saw.

    `by_agents` names files an agent wrote with its own tools (their mode is the CLI's, not flower's).
    """
    modes = flower_modes(root)
    loose = {
        name: oct(mode)
        for name, mode in modes.items()
        if name not in by_agents and mode != (0o700 if (root / name).is_dir() else 0o600)
    }
    assert not loose, f"flower files readable by others under {root}: {loose}"
    return modes
