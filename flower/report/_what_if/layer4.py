"""Layer 4 replayed: at each resume of a session, what `PruningSessionStore.load` would have handed the CLI.

Nothing here rewrites anything itself: the history before each resume (`flower.report._resumed.resume_points`:
the prompts the CLI marked as starting a new process) goes into a throwaway in-memory store under a
`PruningSessionStore` with the Runtime's policies, whose clock is set to the resume's time, and its own
`load()` says what it returns and what it changed (`LoadReport`). A cold load decides anew; a warm one
(within the prompt cache's lifetime) repeats the last cold one's decisions, as the store does. What the
load left out is measured as the model would have read it (`metrics.body_chars` before and after); it is
gone from the resume's first request until the next resume or compaction.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from claude_agent_sdk import InMemorySessionStore, SessionKey, SessionStoreEntry

from ...stores import PrunePolicy, PruningSessionStore
from .. import _metrics as m
from .._options import ReportOptions
from .._resumed import resume_points
from .replay import Saving, Thread
from .spill import boundaries, until_compacted

__all__ = ["RESIDUE", "ResumeReplay", "layer4_savings", "replay_resumes"]

RESIDUE = ("api_error", "interrupt", "orphan")
"""The `Change` kinds of interruption residue (synthetic API errors, interrupted results, orphan calls)."""


@dataclass(frozen=True)
class ResumeReplay:
    """One resume, as the layer would have loaded it."""

    entry: int
    """Index of the resume's prompt in the main transcript."""
    warm: bool
    """Within the prompt cache's lifetime: the load repeated the last cold one's decisions."""
    chars: int
    """Characters of the history the load left out (negative: it added more than it removed)."""
    kinds: Mapping[str, int]
    """Changes by kind (`expired`, `denial`, `api_error`, `interrupt`, `orphan`...)."""
    errors: int = 0
    """Rewrites that failed and were skipped."""


async def replay_resumes(
    project_key: str, session_id: str, entries: Sequence[Mapping[str, Any]], options: ReportOptions
) -> list[ResumeReplay]:
    """Each resume of the main transcript `entries`, loaded through a `PruningSessionStore`."""
    found: list[ResumeReplay] = []
    points = [(index, moment) for _, index, moment in resume_points(entries, options.cache) if moment]
    if not points:
        return found
    key = cast(SessionKey, {"project_key": project_key or "-", "session_id": session_id or "-"})
    with tempfile.TemporaryDirectory(prefix="flower-what-if-") as nowhere:  # never an import from disk
        for index, moment in points:
            history = [dict(e) for e in entries[:index]]
            inner = InMemorySessionStore()
            await inner.append(key, cast(list[SessionStoreEntry], history))
            layer = PruningSessionStore(
                inner,
                prune=PrunePolicy(keep_denials=options.keep_denials),
                ephemeral=options.ephemeral or False,
                trim=False,
                cache=options.cache,
                config_dir=nowhere,
            )
            layer.clock = _at(moment)
            loaded = await layer.load(key) or []
            report = layer.last_report
            kinds = Counter(change.kind for change in report.changes) if report else Counter()
            chars = m.body_chars(history) - m.body_chars(cast(list[Mapping[str, Any]], loaded))
            found.append(
                ResumeReplay(
                    index,
                    bool(report and report.warm),
                    chars,
                    {str(kind): count for kind, count in kinds.items()},
                    len(report.errors) if report else 0,
                )
            )
    return found


def _at(moment: float) -> Callable[[], float]:
    return lambda: moment


def layer4_savings(thread: Thread, resumes: Sequence[ResumeReplay], rate: float) -> list[Saving]:
    """Each resume's cut as a `Saving` over the history before it, until the next resume or compaction."""
    cuts = boundaries(thread.entries)
    savings = []
    for number, resume in enumerate(resumes):
        start = thread.first_after(resume.entry)
        end = until_compacted(thread, resume.entry, cuts)
        if number + 1 < len(resumes):
            end = min(end, thread.first_after(resumes[number + 1].entry))
        if start < end and resume.chars:
            before = thread.end_of(start - 1)
            savings.append(Saving(start, end, 0.0, float(before), resume.chars * rate))
    return savings
