"""The history rewrites of layer 4, as pure functions over a list of transcript entries.

Each takes the entries (and its policy) and returns a `Rewritten`: new entries, the changes made, and,
for a trim, the bodies to write. None mutates its input or does I/O; `write_spills` is the one function
here that touches the disk. The stores in `flower.stores` compose them on `load()`.

Every rewrite acts only on what a resume replays (`replayed`: the current branch after the last
compaction), and an expiry or a trim only where the note is shorter than the body. Red lines every
rewrite keeps: a `tool_use` and its `tool_result` are removed together or not at all;
other blocks of the same message are left as they are; the `parentUuid` chain stays connected (a dropped
entry's children point at its nearest surviving ancestor); entries with `isCompactSummary` or `isMeta`
keep their content (only a parent link over a dropped entry is repaired).

Example::

    from flower.stores import EphemeralPolicy, PrunePolicy
    from flower.stores._rewrite import rewrite_history

    result = rewrite_history(entries, prune=PrunePolicy(), ephemeral=EphemeralPolicy(keep_recent=6))
    result.entries    # what a resume would replay
    result.changes    # what was expired, dropped, neutralised, healed
"""

from __future__ import annotations

from ._transcript import Entry, Rewritten, Spill
from .branch import replayed
from .denials import OLD_INTERRUPTS, OLD_REJECTION, denial_kind, tool_calls
from .expire import expire_ephemeral, short_command
from .files import write_spills
from .heal import CLI_ORPHAN_NOTE, HEAL_NAMESPACE, heal_orphans
from .loads import (
    MARKS_SINCE,
    LoadPoint,
    is_command,
    is_prompt,
    load_points,
    resumes,
    rewrite_point,
    session_start,
)
from .mend import mend_links
from .pipeline import Applied, apply_steps, rewrite_history, rewrite_steps
from .prune import drop_api_errors, drop_denials, neutralise_interrupts
from .relink import REFERENCE_FIELDS, drop_entries
from .supersede import READ_STUBS, supersede_reads
from .trim import spill_name, trim_results

__all__ = [
    "CLI_ORPHAN_NOTE",
    "HEAL_NAMESPACE",
    "MARKS_SINCE",
    "OLD_INTERRUPTS",
    "OLD_REJECTION",
    "READ_STUBS",
    "REFERENCE_FIELDS",
    "Applied",
    "Entry",
    "LoadPoint",
    "Rewritten",
    "Spill",
    "apply_steps",
    "denial_kind",
    "drop_api_errors",
    "drop_denials",
    "drop_entries",
    "expire_ephemeral",
    "heal_orphans",
    "is_command",
    "is_prompt",
    "load_points",
    "mend_links",
    "neutralise_interrupts",
    "replayed",
    "resumes",
    "rewrite_history",
    "rewrite_point",
    "rewrite_steps",
    "session_start",
    "short_command",
    "spill_name",
    "supersede_reads",
    "tool_calls",
    "trim_results",
    "write_spills",
]
