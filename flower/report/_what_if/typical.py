"""The peak a run typically shows, where the estimate's read-backs are expectations.

The replay weights each read-back by its probability, so its context is the expected one: a whole Read
of a 50,000-character output read back 5 times in 29 adds about a sixth of it to every later request.
A run reads it back whole or not at all, so its peak holds the read-backs that happened, whole. The
typical peak is the median, over `PEAK_DRAWS` runs drawn with the same probabilities (`readback.Chance`:
which outputs are read back, which look-ups read the whole output), of each run's largest context. The
draws are seeded (`PEAK_SEED`), so a report is the same every time.
"""

from __future__ import annotations

import bisect
import itertools
import random
import statistics
from collections.abc import Sequence
from typing import Final

from .readback import Chance
from .replay import Saving

__all__ = ["PEAK_DRAWS", "PEAK_SEED", "typical_peak"]

PEAK_DRAWS: Final = 101
"""Runs drawn (odd, so the median is one of them)."""
PEAK_SEED: Final = "typical peak"
"""The draws' seed."""


def _drawn(rng: random.Random, chance: Chance) -> list[tuple[int, int, float]]:
    """The read-backs one run makes of `chance`'s output: (start, end, tokens) each."""
    if rng.random() >= chance.share:
        return []
    made = []
    for start, end in chance.spans:
        whole = rng.random() < chance.whole
        made.append((start, end, chance.whole_tokens if whole else chance.part_tokens))
        if whole:
            break
    return made


def typical_peak(
    contexts: Sequence[int], added: Sequence[Saving], chances: Sequence[Chance], draws: int = PEAK_DRAWS
) -> int:
    """The median over `draws` runs of the largest of `contexts` (each request's expected context, with
    `added`: the read-backs' expected tokens) once the expectation is replaced by the read-backs `chances`
    draws."""
    size = len(contexts)
    if not size:
        return 0
    shift = [0.0] * (size + 1)
    for saving in added:  # take the expectation out: `added` carries negative tokens (added context)
        if saving.start < min(saving.end, size):
            shift[saving.start] += saving.tokens
            shift[min(saving.end, size)] -= saving.tokens
    base, running = [], 0.0
    for number in range(size):
        running += shift[number]
        base.append(contexts[number] + running)
    cuts = sorted({0, size, *(min(max(p, 0), size) for c in chances for span in c.spans for p in span)})
    tops = [max(base[a:b]) for a, b in itertools.pairwise(cuts) if a < b]
    starts = [a for a, b in itertools.pairwise(cuts) if a < b]
    rng = random.Random(PEAK_SEED)
    peaks = []
    for _ in range(draws):
        delta = [0.0] * (len(starts) + 1)
        for chance in chances:
            for start, end, tokens in _drawn(rng, chance):
                first, last = bisect.bisect_left(starts, start), bisect.bisect_left(starts, min(end, size))
                if first < last:
                    delta[first] += tokens
                    delta[last] -= tokens
        running, peak = 0.0, float("-inf")
        for top, step in zip(tops, delta, strict=False):
            running += step
            peak = max(peak, top + running)
        peaks.append(peak)
    return round(statistics.median(peaks))
