"""Moving a history to another place: the paths of the workspaces it ran in, rewritten to this one.

A session that ran in `/jobs/41/repo` and resumes in `/jobs/97/repo` carries absolute paths of the
first place everywhere: spill and report pointers, the handoff document a takeover prompt names, the
workbench block of its system prompt, the commands it ran. Its files are restored under the new
workbench, so each such path is rewritten to the same place under the new root. Pure: entries in, new
entries out, only strings changed (keys never), each old root replaced only where a path continues
after it or ends (so `/jobs/4` never matches inside `/jobs/41`). The stored entries are not modified.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

__all__ = ["Moves", "relocate"]

Moves = Sequence[tuple[str, str]]
"""(old root, new root) pairs, both absolute paths without a trailing slash."""


def _pattern(moves: Moves) -> tuple[re.Pattern[str], dict[str, str]] | None:
    table = {old: new for old, new in moves if old and old != new}
    if not table:
        return None
    # the longest first, so a workbench outside its workspace is matched before the workspace
    alternatives = "|".join(re.escape(old) for old in sorted(table, key=len, reverse=True))
    return re.compile(f"(?:{alternatives})(?![^/\\s\"'`:;,)\\]}}>|])"), table


def relocate(entries: Sequence[Any], moves: Moves) -> list[Any]:
    """`entries` with every old root in their strings replaced by its new root (unchanged ones shared)."""
    compiled = _pattern(moves)
    if compiled is None:
        return list(entries)
    pattern, table = compiled

    def fix(value: Any) -> Any:
        if isinstance(value, str):
            return pattern.sub(lambda found: table[found.group(0)], value) if pattern.search(value) else value
        if isinstance(value, dict):
            changed = {key: fix(item) for key, item in value.items()}
            return value if all(changed[k] is value[k] for k in value) else changed
        if isinstance(value, list):
            items = [fix(item) for item in value]
            return value if all(a is b for a, b in zip(items, value, strict=True)) else items
        return value

    return [fix(entry) for entry in entries]
