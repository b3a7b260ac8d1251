"""The rewrites in order, as one pure function, and the fail-open runner the stores use.

Order: drop API errors, drop denials, neutralise interrupts, expire, trim, heal orphans. Drops come
first so that what they remove is never counted as a result to keep; healing comes last so that added
results are never counted either. Every step returns a history that holds the red lines on its own
(pairs together, chain connected), which is what lets the runner skip a step that fails.

Determinism: every step depends only on its input, its policy and, for expiry, the time of the load (no
randomness: added uuids are `uuid5` of what they answer, file names are content hashes), so two loads of
the same history produce the same entries, byte for byte once serialised, and so the same request prefix
for the prompt cache. The time matters only when the session was idle for `EphemeralPolicy.stale_after`
before the load, when the cache has expired anyway.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from ..._errors import SpecError
from ..policies import Change, EphemeralPolicy, PrunePolicy, TrimPolicy
from ._transcript import Entry, Rewritten, Spill, check_entries
from .expire import expire_ephemeral
from .heal import heal_orphans
from .prune import drop_api_errors, drop_denials, neutralise_interrupts
from .trim import trim_results

__all__ = ["Applied", "RewriteStep", "apply_steps", "rewrite_history", "rewrite_steps"]

logger = logging.getLogger("flower.stores")

RewriteStep: TypeAlias = Callable[[list[Entry]], Rewritten]


def rewrite_steps(
    *,
    prune: PrunePolicy | None = None,
    ephemeral: EphemeralPolicy | None = None,
    trim: TrimPolicy | None = None,
    spill_dir: str | None = None,
    clock: Callable[[], float] | None = None,
) -> list[tuple[str, RewriteStep]]:
    """The named steps the given policies enable, in pipeline order (`None` disables a policy).

    `clock` gives the time of each run (seconds since the epoch) for expiry's pause before the load;
    `None`: only the pauses inside the history count.
    """
    if trim is not None and spill_dir is None:
        raise SpecError("trimming needs a spill directory the agent can Read")
    steps: list[tuple[str, RewriteStep]] = []
    if prune is not None:
        if prune.drop_api_errors:
            steps.append(("drop_api_errors", drop_api_errors))
        steps.append(("drop_denials", lambda entries: drop_denials(entries, prune)))
        if prune.neutralise_interrupts:
            steps.append(("neutralise_interrupts", lambda entries: neutralise_interrupts(entries, prune)))
    if ephemeral is not None:
        steps.append(
            (
                "expire_ephemeral",
                lambda entries: expire_ephemeral(entries, ephemeral, now=clock() if clock else None),
            )
        )
    if trim is not None and spill_dir is not None:
        directory = spill_dir
        steps.append(("trim_results", lambda entries: trim_results(entries, trim, directory)))
    if prune is not None and prune.heal_orphans:
        steps.append(("heal_orphans", lambda entries: heal_orphans(entries, prune)))
    return steps


def rewrite_history(
    entries: Sequence[Any],
    *,
    prune: PrunePolicy | None = None,
    ephemeral: EphemeralPolicy | None = None,
    trim: TrimPolicy | None = None,
    spill_dir: str | None = None,
    now: float | None = None,
) -> Rewritten:
    """Run every enabled rewrite over `entries` (pure: trimmed bodies are returned, not written).

    `now` is the time of the load (seconds since the epoch), for expiry's pause before it; `None`: only
    the pauses inside the history count. Unlike a store, this raises when a step fails. With no policy
    given nothing is rewritten.
    """
    current = check_entries(entries)
    changes: list[Change] = []
    spills: dict[str, Spill] = {}
    clock = None if now is None else (lambda: now)
    steps = rewrite_steps(prune=prune, ephemeral=ephemeral, trim=trim, spill_dir=spill_dir, clock=clock)
    for _, step in steps:
        result = step(current)
        current = result.entries
        changes.extend(result.changes)
        for spill in result.spills:
            spills.setdefault(spill.name, spill)
    return Rewritten(current, tuple(changes), tuple(spills.values()))


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


def apply_steps(
    entries: list[Entry],
    steps: Sequence[tuple[str, RewriteStep]],
    *,
    write: Callable[[Sequence[Spill]], object] | None = None,
) -> Applied:
    """Run the steps one after the other; a step that raises is skipped (fail open) and logged.

    A step's spills are handed to `write` before its result is kept: when writing fails the step is
    skipped too, so no pointer ever names a missing file.
    """
    started = time.perf_counter()
    try:
        current = check_entries(entries)
    except TypeError as exc:
        logger.error("flower.stores: the history is returned unrewritten: %s", exc)
        return Applied(list(entries), (), (f"history: {exc}",), time.perf_counter() - started)
    changes: list[Change] = []
    errors: list[str] = []
    for name, step in steps:
        try:
            result = step(current)
            if result.spills:
                if write is None:
                    raise SpecError(f"{name} moved bodies to files but no writer was given")
                write(result.spills)
        except Exception as exc:
            logger.exception("flower.stores: the %s rewrite failed; the history is kept without it", name)
            errors.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        current = result.entries
        changes.extend(result.changes)
    return Applied(current, tuple(changes), tuple(errors), time.perf_counter() - started)
