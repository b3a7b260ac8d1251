"""What layer 4 rewrote at each resume of a session, recomputed from the stored history.

The history before each prompt that started a new process (`flower.stores._rewrite.resumes`) is run
through layer 4's pure rewrites (`flower.stores._rewrite.rewrite_history`) with the given policies and
the resume's time: that is what a `PruningSessionStore` handed the CLI then, so it works for any store.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from .._handoff.document import HANDOFF_PROMPT
from ..stores import CachePolicy, EphemeralPolicy, PrunePolicy, TrimPolicy
from ..stores._rewrite import resumes, rewrite_history, rewrite_point
from . import _metrics as m
from ._load import SessionData
from ._parts import ResumeSummary

__all__ = ["HANDOFF", "recomputed", "resume_points"]

HANDOFF = HANDOFF_PROMPT.split("{", 1)[0].strip()
"""The start of the prompt asking a session for its handoff document (asked in the same process)."""
_SPILL_ROOT = "/nonexistent/flower-report"  # trim is recomputed, never written: any directory will do


def resume_points(
    entries: Sequence[m.Entry], cache: CachePolicy | None
) -> list[tuple[int, int, float | None]]:
    """`(ordinal, index, time)` of each prompt that started a new process, the handoff-writing prompt
    (asked in the same process) left out."""
    ordinals = {index: ordinal for ordinal, (index, _) in enumerate(m.prompts(entries), start=1)}
    found = []
    for point in resumes([dict(e) for e in entries], cache or CachePolicy()):
        text = m.prompts(entries[point.index : point.index + 1])
        if text and text[0][1].lstrip().startswith(HANDOFF):
            continue
        found.append((ordinals.get(point.index, 0), point.index, point.time))
    return found


def recomputed(
    session: SessionData,
    prune: PrunePolicy,
    ephemeral: EphemeralPolicy | None,
    trim: TrimPolicy | None,
    cache: CachePolicy | None,
    notes: list[str],
) -> list[ResumeSummary]:
    """What each resume of `session` rewrote, with these policies; a history the rewrites cannot read
    adds a note and counts nothing."""
    found = []
    for ordinal, index, moment in resume_points(session.main, cache):
        history = [dict(e) for e in session.main[:index]]
        try:
            rewritten = rewrite_history(
                history,
                prune=prune,
                ephemeral=ephemeral,
                trim=trim,
                spill_dir=_SPILL_ROOT if trim is not None else None,
                now=moment,
                cache=cache,
            )
            warm = rewrite_point(history, moment, cache)[2]
        except Exception as exc:  # a history the rewrites cannot read: say so, count nothing
            notes.append(f"resume {ordinal} of {session.session_id}: not recomputed ({exc})")
            continue
        kinds = Counter(change.kind for change in rewritten.changes)
        found.append(
            ResumeSummary(
                session_id=session.session_id,
                prompt=ordinal,
                after_turns=len(m.turns(history)),
                warm=warm,
                expired=kinds["expired"],
                trimmed=kinds["trimmed"],
                superseded=kinds["superseded"],
                denials=kinds["denial"],
                api_errors=kinds["api_error"],
                interrupts=kinds["interrupt"],
                orphans=kinds["orphan"],
                chars_saved=sum(change.chars_saved for change in rewritten.changes),
            )
        )
    return found
