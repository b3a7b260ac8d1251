"""The rewrites in order, as one pure function, and the fail-open runner the stores use.

Order: drop API errors, drop denials, neutralise interrupts, supersede reads, expire, trim, heal
orphans. Drops come first so that what they remove is never counted as a result to keep; healing comes
last so that added results are never counted either. Every step returns a history that holds the red
lines on its own (pairs together, chain connected), which is what lets the runner skip a step that
fails.

The prompt cache (`CachePolicy`, `flower.stores._rewrite.loads.rewrite_point`): at a warm load the steps
before healing run over the history as the last cold load saw it, with that load's time, and every
later entry is kept as it is (its links over a dropped entry repaired); healing runs over everything.

Determinism: every step depends only on its input, its policy and the time of the load (no randomness:
added uuids are `uuid5` of what they answer, file names are content hashes), so two loads of the same
history produce the same entries, byte for byte once serialised, and so the same request prefix for the
prompt cache. The time decides only whether the cache had expired, and whether the session was idle for
`EphemeralPolicy.stale_after`; in both cases the cache is cold.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from ..._errors import SpecError
from .._policies import CachePolicy, Change, EphemeralPolicy, PrunePolicy, TrimPolicy
from ._transcript import Entry, Rewritten, Spill, check_entries, content_blocks
from .branch import branch_uuids, replayed
from .expire import expire_ephemeral
from .heal import heal_orphans
from .loads import rewrite_point
from .mend import mend_links
from .prune import drop_api_errors, drop_denials, neutralise_interrupts
from .relink import drop_entries
from .supersede import supersede_reads
from .trim import trim_results

__all__ = ["Applied", "RewriteStep", "apply_steps", "rewrite_history", "rewrite_steps"]

logger = logging.getLogger("flower.stores")

Branch: TypeAlias = frozenset[str] | None
"""The uuids of the branch a resume replays (`branch_uuids`), computed once per load; None: each step
computes it."""

RewriteStep: TypeAlias = Callable[[list[Entry], float | None, Branch], Rewritten]
"""One rewrite: `(entries, time of the load or None, uuids of the replayed branch or None) -> Rewritten`."""

_FIRST = frozenset({"mend_links"})
"""Steps that run over the whole history before anything else, at every load: a missing link decides
which branch is replayed, and so what every later step sees (`mend`)."""

_EVERYWHERE = frozenset({"heal_orphans"})
"""Steps that run over the whole history even at a warm load: an orphan must be answered anyway, and
its answer is appended after the call, not written over anything already sent."""

_DEFAULT_CACHE = CachePolicy()


def rewrite_steps(
    *,
    prune: PrunePolicy | None = None,
    ephemeral: EphemeralPolicy | None = None,
    trim: TrimPolicy | None = None,
    spill_dir: str | None = None,
) -> list[tuple[str, RewriteStep]]:
    """The named steps the given policies enable, in pipeline order (`None` disables a policy)."""
    if trim is not None and spill_dir is None:
        raise SpecError("trimming needs a spill directory the agent can Read")
    mending = prune if prune is not None else PrunePolicy()
    steps: list[tuple[str, RewriteStep]] = [("mend_links", lambda e, now, b: mend_links(e, mending))]
    if prune is not None:
        if prune.drop_api_errors:
            steps.append(("drop_api_errors", lambda e, now, b: drop_api_errors(e, branch=b)))
        steps.append(("drop_denials", lambda e, now, b: drop_denials(e, prune, branch=b)))
        if prune.neutralise_interrupts:
            steps.append(
                ("neutralise_interrupts", lambda e, now, b: neutralise_interrupts(e, prune, branch=b))
            )
        if prune.supersede_reads:
            steps.append(("supersede_reads", lambda e, now, b: supersede_reads(e, prune, branch=b)))
    if ephemeral is not None:
        steps.append(
            ("expire_ephemeral", lambda e, now, b: expire_ephemeral(e, ephemeral, now=now, branch=b))
        )
    if trim is not None and spill_dir is not None:
        directory = spill_dir
        steps.append(("trim_results", lambda e, now, b: trim_results(e, trim, directory, branch=b)))
    if prune is not None and prune.heal_orphans:
        steps.append(("heal_orphans", lambda e, now, b: heal_orphans(e, prune)))
    return steps


def rewrite_history(
    entries: Sequence[Any],
    *,
    prune: PrunePolicy | None = None,
    ephemeral: EphemeralPolicy | None = None,
    trim: TrimPolicy | None = None,
    spill_dir: str | None = None,
    now: float | None = None,
    cache: CachePolicy | None = _DEFAULT_CACHE,
) -> Rewritten:
    """Run every enabled rewrite over `entries` (pure: trimmed bodies are returned, not written).

    `now` is the time of the load (seconds since the epoch): with `cache` it tells a warm load (repeat
    the last cold load's rewrites, decide nothing) from a cold one, and it is expiry's pause before the
    load. `None`: a cold load, and only the pauses inside the history count. Unlike a store, this
    raises when a step fails. With no policy given nothing is rewritten.
    """
    current = check_entries(entries)
    steps = rewrite_steps(prune=prune, ephemeral=ephemeral, trim=trim, spill_dir=spill_dir)
    changes: list[Change] = []
    spills: dict[str, Spill] = {}

    def run(
        name: str, step: RewriteStep, history: list[Entry], moment: float | None, branch: Branch
    ) -> list[Entry]:
        result = step(history, moment, branch)
        changes.extend(result.changes)
        for spill in result.spills:
            spills.setdefault(spill.name, spill)
        return result.entries

    current, _, counted = _staged(current, steps, now, cache, run)
    named, unreplayed = _counted(changes, counted)
    return Rewritten(current, named, tuple(spills.values()), unreplayed)


Runner: TypeAlias = Callable[[str, RewriteStep, list[Entry], float | None, Branch], list[Entry]]


def _staged(
    entries: list[Entry],
    steps: Sequence[tuple[str, RewriteStep]],
    now: float | None,
    cache: CachePolicy | None,
    run: Runner,
) -> tuple[list[Entry], bool, frozenset[str] | None]:
    """Run the steps over the part of the history a load may rewrite, then heal over all of it.

    Returns the history, whether the load was warm, and what a change must touch to be counted (None:
    every change). A warm load repeats the last cold load's rewrites over the branch *that* load
    replayed; a compaction, a `/clear` or a rewind written since takes those entries off what the CLI
    replays now, and their changes save nothing: only the ids `_replayed_ids` gives count then, the
    others are reported apart (`Rewritten.unreplayed`).
    """
    for name, step in steps:
        if name in _FIRST:
            entries = run(name, step, entries, now, None)
    point, moment, warm = rewrite_point(entries, now, cache)
    head, tail = entries[:point], entries[point:]
    rewritten = head
    branch = branch_uuids(head) if head else None  # once: dropping entries keeps it valid
    for name, step in steps:
        if name not in _EVERYWHERE | _FIRST:
            rewritten = run(name, step, rewritten, moment, branch)
    current = _join(head, rewritten, tail)
    for name, step in steps:
        if name in _EVERYWHERE:
            current = run(name, step, current, now, None)
    return current, warm, (_replayed_ids(entries) if tail else None)


def _replayed_ids(entries: list[Entry]) -> frozenset[str]:
    """The uuids of the entries the CLI replays now, and the ids of the calls and results they hold."""
    ids: set[str] = set()
    for index in replayed(entries):
        entry = entries[index]
        if isinstance(entry.get("uuid"), str):
            ids.add(entry["uuid"])
        for block in content_blocks(entry) or ():
            if isinstance(block, dict):
                ident = block.get("id") if block.get("type") == "tool_use" else block.get("tool_use_id")
                if isinstance(ident, str):
                    ids.add(ident)
    return frozenset(ids)


def _counted(
    changes: Sequence[Change], counted: frozenset[str] | None
) -> tuple[tuple[Change, ...], tuple[Change, ...]]:
    """`(changes to what the CLI replays, the others)`. A change counts when it touches an entry on the
    branch (`uuid`) or a call it holds (a dropped denial leaves no entry to name); an orphan's answer is
    added to the branch, so it counts. The others are a warm load's repeats of the last cold load's
    rewrites on entries the CLI no longer replays: still in the history returned, so still named."""
    if counted is None:
        return tuple(changes), ()
    named: list[Change] = []
    unreplayed: list[Change] = []
    for change in changes:
        touched = change.uuid if change.uuid is not None else change.tool_use_id
        (named if change.kind in ("orphan", "relinked") or touched in counted else unreplayed).append(change)
    return tuple(named), tuple(unreplayed)


def _join(head: list[Entry], rewritten: list[Entry], tail: list[Entry]) -> list[Entry]:
    """The rewritten head, then the tail with its links over entries the head dropped repaired."""
    if not tail:
        return rewritten
    kept = {e.get("uuid") for e in rewritten if isinstance(e.get("uuid"), str)}
    dropped = {e["uuid"] for e in head if isinstance(e.get("uuid"), str) and e["uuid"] not in kept}
    if not dropped:
        return rewritten + tail
    relinked = drop_entries([e for e in head if e.get("uuid") in dropped] + tail, dropped)
    return rewritten + relinked


@dataclass(frozen=True)
class Applied:
    """What `apply_steps` produced: the entries, the changes kept, the failed steps, the time taken."""

    entries: list[Entry]
    """The rewritten history."""
    changes: tuple[Change, ...]
    """The changes of the steps that succeeded, in order."""
    errors: tuple[str, ...]
    """One message per step that failed and was skipped."""
    seconds: float
    """Time taken by all the steps."""
    warm: bool = False
    """The load was warm: only the last cold load's rewrites were repeated."""
    unreplayed: tuple[Change, ...] = ()
    """The changes a warm load repeated on entries the CLI no longer replays (`Rewritten.unreplayed`)."""


def apply_steps(
    entries: list[Entry],
    steps: Sequence[tuple[str, RewriteStep]],
    *,
    write: Callable[[Sequence[Spill]], object] | None = None,
    now: float | None = None,
    cache: CachePolicy | None = None,
) -> Applied:
    """Run the steps one after the other; a step that raises is skipped (fail open) and logged.

    A step's spills are handed to `write` before its result is kept: when writing fails the step is
    skipped too, so no pointer ever names a missing file. `now` and `cache` as in `rewrite_history`
    (here `cache=None` by default: every load decides everything).
    """
    started = time.perf_counter()
    try:
        current = check_entries(entries)
    except TypeError as exc:
        logger.error("flower.stores: the history is returned unrewritten: %s", exc)
        return Applied(list(entries), (), (f"history: {exc}",), time.perf_counter() - started)
    changes: list[Change] = []
    errors: list[str] = []

    def run(
        name: str, step: RewriteStep, history: list[Entry], moment: float | None, branch: Branch
    ) -> list[Entry]:
        try:
            result = step(history, moment, branch)
            if result.spills:
                if write is None:
                    raise SpecError(f"{name} moved bodies to files but no writer was given")
                write(result.spills)
        except Exception as exc:
            logger.exception("flower.stores: the %s rewrite failed; the history is kept without it", name)
            errors.append(f"{name}: {type(exc).__name__}: {exc}")
            return history
        changes.extend(result.changes)
        return result.entries

    try:
        current, warm, counted = _staged(current, steps, now, cache, run)
    except Exception as exc:  # the staging itself (reading times, relinking): keep the history as stored
        logger.exception("flower.stores: the history is returned unrewritten")
        return Applied(current, (), (f"history: {type(exc).__name__}: {exc}",), time.perf_counter() - started)
    named, unreplayed = _counted(changes, counted)
    return Applied(current, named, tuple(errors), time.perf_counter() - started, warm, unreplayed)
