"""Scripts in the workbench: which the agents wrote into `scripts/`, and which commands ran them.

A pure function over the `tool_use` blocks of a run's transcripts; `flower.report.build_report` uses it.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["ScriptActivity", "script_activity"]

_WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})


@dataclass(frozen=True, kw_only=True)
class ScriptActivity:
    """Scripts written into the workbench's `scripts/` and the commands that ran them."""

    written: tuple[str, ...]
    """Distinct script paths written or edited."""
    writes: int
    """Write/Edit calls into `scripts/`."""
    runs: int
    """Bash commands that ran a script of `scripts/` (a command running two counts twice)."""
    run: tuple[str, ...]
    """Distinct scripts run."""


def _script_pattern(roots: Sequence[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(root.rstrip("/")) for root in sorted(roots, key=len, reverse=True))
    return re.compile(rf"(?:{alternatives})/([^\s'\"`;|&<>()]+)")


def script_activity(
    calls: Iterable[Mapping[str, Any]],
    roots: Sequence[str] = (".flower/scripts",),
    refused: Collection[str] = (),
) -> ScriptActivity:
    """Count script writes and runs among `calls` (tool_use blocks); calls whose id is in `refused` did
    not happen (`refused_calls`) and are not counted.

    `roots` are the `scripts/` directories (absolute paths, or a relative tail such as `.flower/scripts`
    that any path ending so matches). A Bash command runs a script when it names one and is not a mere
    look (`flower.is_ephemeral`: `cat scripts/x.sh` reads it, `sh scripts/x.sh` runs it).
    """
    from .._glance import is_ephemeral  # loads the shell parser only when needed

    pattern = _script_pattern(roots)
    written: dict[str, None] = {}
    run: dict[str, None] = {}
    writes = runs = 0
    for call in calls:
        tool_input = call.get("input")
        if not isinstance(tool_input, Mapping) or call.get("id") in refused:
            continue
        if call.get("name") in _WRITE_TOOLS:
            path = str(tool_input.get("file_path") or tool_input.get("notebook_path") or "")
            found = pattern.search(path)
            if found:
                writes += 1
                written.setdefault(found.group(1), None)
        elif call.get("name") == "Bash":
            command = str(tool_input.get("command") or "")
            names = list(dict.fromkeys(m.group(1) for m in pattern.finditer(command)))
            if names and not is_ephemeral(command):
                runs += len(names)
                for name in names:
                    run.setdefault(name, None)
    return ScriptActivity(written=tuple(written), writes=writes, runs=runs, run=tuple(run))
