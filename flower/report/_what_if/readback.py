"""What a model shown only spilled outputs' previews would have read back: an expectation, calibrated.

A replay keeps the recorded requests, so it cannot see the requests a model makes to read a spilled file
back, nor what they bring into the context. Real transcripts can: the CLI saves its own largest outputs
to a file and shows a preview, as spill does (`flower.report._measured`). The estimate, per spilled output
of the plain run (one the CLI had saved itself is left as recorded: whatever the model did with it is in
the requests already):

- **copied later** (`quotes.ThreadText.copies`: a later reply carries a token found only in the part the
  preview hides): the model needed that part, so it looks it up, for certain, once per line copied, at the
  reply that copies it. A look-up takes the calls real look-ups take (`LOOKUP_CALLS`: the ones before the
  last miss, each a Read of 100 lines or a search of 20), and its last call reads the whole file
  `LOOKUP_WHOLE_READ_SHARE` of the time (once read whole, the output's later look-ups are not needed),
  else returns the line. On an output of at most 100 lines a Read of 100 lines is a whole Read, which
  cannot miss: the look-up ends at its first Read, the output read whole;
- **every output**, copied later or not: read back to be looked at, `PREVIEW_READ_BACK_SHARE` of the
  time (5 of 29 real previews, whatever came after them), by the request after it: whole when under the
  Read cap (4 of 4 real ones; an output read whole then needs no look-up), else in windows
  (`PARTIAL_READ_BACK`).

Each read-back costs its requests (each taken as the request it interrupts, sent again with what the
read-back brought written to the cache) and carries what it brought in every later request until a
compaction. Everything is weighted by its probability: the result is the expected cost and context; the
same read-backs as draws (`Chance`) give the peak a run typically shows (`typical.typical_peak`).
The range around it: the replay (nothing read back) and `PESSIMISTIC` (every output a later reply
quotes, by the loose test, read back whole; every other at the upper end of the real share's interval).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from .._measured import (
    LOOKUP_CALLS,
    LOOKUP_MISS_LINES,
    LOOKUP_READ_SHARE,
    LOOKUP_WHOLE_READ_SHARE,
    MAIN_TEXT,
    MAIN_THINKING,
    PARTIAL_READ_BACK,
    PREVIEW_READ_BACK_INTERVAL,
    PREVIEW_READ_BACK_SHARE,
    READ_CAP_CHARS,
    WHOLE_READ_CHARS_PER_CHAR,
    expected_chars,
)
from .quotes import ThreadText
from .replay import Saving, Thread
from .spill import SpillHit, boundaries, results_of, until_compacted

__all__ = [
    "CENTRAL",
    "PESSIMISTIC",
    "Chance",
    "ReadBackModel",
    "ReadBacks",
    "Repeat",
    "coordinator_look_ups",
    "read_backs",
]

_ERROR_CHARS: Final = 150
"""The CLI's refusal of a whole Read over its cap."""
REPLY_CHARS: Final = expected_chars(MAIN_THINKING) + expected_chars(MAIN_TEXT)
"""The prose a read-back's own reply is expected to write besides its call, as a main thread's reply
(`measured.MAIN_THINKING`, `MAIN_TEXT`: about 460 characters)."""


@dataclass(frozen=True, kw_only=True)
class ReadBackModel:
    """How often, and how, a model shown only a preview reads the output back."""

    look_share: float = PREVIEW_READ_BACK_SHARE
    """An output no later reply copies from is read back this often (to be looked at)."""
    lookup_whole: float = LOOKUP_WHOLE_READ_SHARE
    """A look-up's last call reads the whole file this often."""
    certain: Literal["copied", "quoted"] = "copied"
    """Which sign makes a look-up certain: a token copied (the strict test) or any value quoted."""


CENTRAL: Final = ReadBackModel()
"""The real figures."""
PESSIMISTIC: Final = ReadBackModel(
    look_share=PREVIEW_READ_BACK_INTERVAL[1], lookup_whole=1.0, certain="quoted"
)
"""The replay's pessimistic end: outputs quoted later read back whole, others at the upper 95 % bound."""


@dataclass(frozen=True)
class Repeat:
    """Extra requests: `weight` times request `request` sent again, with `tokens` more written; their
    replies write `output` tokens of prose (`REPLY_CHARS` each)."""

    request: int
    weight: float
    tokens: float
    output: float = 0.0


@dataclass(frozen=True)
class Chance:
    """One output's read-backs as a run makes them or does not, for a run's peak (`typical.typical_peak`):
    with probability `share`, its look-ups are made one after another, each carried by requests `start`
    to `end - 1` of a `spans` entry; each reads the whole output with probability `whole` (it brings
    `whole_tokens`, and no later look-up of the output follows), else it brings `part_tokens`."""

    spans: tuple[tuple[int, int], ...]
    share: float
    whole: float
    whole_tokens: float
    part_tokens: float


@dataclass(frozen=True)
class ReadBacks:
    """A thread's expected read-backs: what they add to later requests, the requests they take."""

    added: list[Saving]
    repeats: list[Repeat]
    expected: float
    """Expected read-backs (look-ups and reads to look)."""
    chars: float
    """Expected characters they bring back."""
    chances: tuple[Chance, ...] = ()
    """The same read-backs as draws a run makes (`Chance`), for a typical run's peak."""


def _factor(hit: SpillHit) -> float:
    return 1.0 if hit.tool == "Read" else WHOLE_READ_CHARS_PER_CHAR  # a Read's text is numbered already


@dataclass(frozen=True)
class _LookUp:
    """One look-up in a spilled output's file, expected: its calls, what its misses bring, what its last
    call brings when it reads the whole file and when it returns the line, and how often it reads whole."""

    requests: float
    missed: float
    whole: float
    part: float
    whole_share: float


def _lookup(hit: SpillHit, whole_share: float) -> _LookUp:
    """One look-up in `hit`'s file, its last call a whole Read `whole_share` of the time.

    A miss is a Read of the file's first `LOOKUP_MISS_LINES[0]` lines or a search; on an output no longer
    than that window the Read brings the whole file, so it cannot miss: the look-up ends at the first
    Read it makes, with the whole output read (counted as the whole Read it is)."""
    line = hit.chars / max(hit.lines, 1)
    full = hit.chars * _factor(hit)
    window, found = LOOKUP_MISS_LINES
    reads, searches = (min(hit.chars, n * line) for n in (window, found))
    if hit.lines <= window and full <= READ_CAP_CHARS:
        stay = 1 - LOOKUP_READ_SHARE  # a miss that searches, and the look-up goes on
        calls = misses = whole = 0.0
        for number, share in LOOKUP_CALLS:
            first = [stay**j * LOOKUP_READ_SHARE for j in range(number - 1)]  # the first Read at miss j
            none = stay ** (number - 1)
            calls += share * (sum(p * (j + 1) for j, p in enumerate(first)) + none * number)
            misses += share * (sum(p * j for j, p in enumerate(first)) + none * (number - 1))
            whole += share * (sum(first) + none * whole_share)
        return _LookUp(calls, misses * searches, full, line, whole)
    misses = sum(share * (calls - 1) for calls, share in LOOKUP_CALLS)
    missed = misses * (LOOKUP_READ_SHARE * reads * _factor(hit) + (1 - LOOKUP_READ_SHARE) * searches)
    requests = sum(share * calls for calls, share in LOOKUP_CALLS)
    if full > READ_CAP_CHARS:  # the CLI refuses the whole Read: an error, then a search (a request more)
        return _LookUp(requests + whole_share, missed, _ERROR_CHARS + line, line, whole_share)
    return _LookUp(requests, missed, full, line, whole_share)


def _look(hit: SpillHit) -> tuple[float, float]:
    """(requests, characters) of a read-back to look at the output."""
    full = hit.chars * _factor(hit)
    return (
        (1.0, full) if full <= READ_CAP_CHARS else (float(PARTIAL_READ_BACK[0]), float(PARTIAL_READ_BACK[1]))
    )


def _needs(hit: SpillHit, model: ReadBackModel) -> list[int]:
    """Entry indices of the replies that need a look-up in `hit`'s output (certain ones)."""
    if model.certain == "quoted":
        return [hit.quoted_at] if hit.quoted_at is not None else []
    return [copy.at for copy in hit.copies]


def read_backs(thread: Thread, hits: Sequence[SpillHit], rate: float, model: ReadBackModel) -> ReadBacks:
    """The expected read-backs of `thread`'s spilled outputs under `model` (see the module docstring)."""
    cuts = boundaries(thread.entries)
    added: list[Saving] = []
    repeats: list[Repeat] = []
    chances: list[Chance] = []
    expected = chars = 0.0

    def bring(request: int, weight: float, calls: float, back: float, since: int) -> tuple[int, int]:
        """Add a read-back at `request` with its weight; the requests that carry it."""
        nonlocal expected, chars
        if request >= len(thread.requests) or weight <= 0:
            return (0, 0)
        tokens = weight * back * rate
        repeats.append(Repeat(request, weight * calls, tokens, weight * calls * REPLY_CHARS * rate))
        end = until_compacted(thread, since, cuts)
        if request + 1 < end:
            added.append(Saving(request + 1, end, thread.end_of(request), tokens, -tokens))
        expected += weight
        chars += weight * back
        return (request + 1, end)

    for hit in hits:
        if hit.cli_saved or hit.saved_read:
            continue
        # read back to look at it when the preview arrives, whatever the replies after it need
        requests, back = _look(hit)
        span = bring(thread.first_after(hit.entry), model.look_share, requests, back, hit.entry)
        chances.append(Chance((span,), model.look_share, 1.0, back * rate, back * rate))
        needs = _needs(hit, model)
        if not needs:
            continue
        seen = model.look_share if hit.chars * _factor(hit) <= READ_CAP_CHARS else 0.0  # then read whole
        look = _lookup(hit, model.lookup_whole)
        w = look.whole_share
        back = look.missed + w * look.whole + (1 - w) * look.part
        spans = tuple(  # once read whole, no later look-up is needed
            bring(thread.first_after(at - 1), (1 - seen) * (1 - w) ** number, look.requests, back, at)
            for number, at in enumerate(sorted(needs))
        )
        chances.append(
            Chance(spans, 1 - seen, w, (look.missed + look.whole) * rate, (look.missed + look.part) * rate)
        )
    return ReadBacks(added, repeats, expected, chars, tuple(chances))


def coordinator_look_ups(
    thread: Thread, loops: Sequence[tuple[int, int, int]], rate: float, model: ReadBackModel = CENTRAL
) -> ReadBacks:
    """The look-ups a coordinator makes for what its workers saw: every tool output inside a stretch of
    `loops` (`delegation.tool_loops`) that a later reply of the coordinator (after the stretch, in a
    request no worker makes) copies a token from, looked up as `read_backs` looks up what a preview hid.
    The coordinator saw none of it, so the whole output is hidden; what the report carries is not counted
    (reports point to files)."""
    moved = {n for first, last, _ in loops for n in range(first + 1, last)}
    said: ThreadText | None = None
    hits: list[SpillHit] = []
    for first, last, _ in loops:
        start, end = thread.requests[first].entry, thread.requests[last].entry
        for index, text, call in results_of(thread, start, end):
            if said is None:
                said = ThreadText.of(thread.entries, [(r.entry, r.blocks) for r in thread.requests])
            found = said.copies(index, text, call, 0, 0, after=end)
            copies = tuple(c for c in found if thread.first_after(c.at - 1) not in moved)
            if copies:
                ident, tool = str(call.get("id")), str(call.get("name"))
                lines = text.count("\n") + 1
                hits.append(SpillHit(index, ident, tool, len(text), 0, lines, copies=copies))
    return read_backs(thread, hits, rate, dataclasses.replace(model, look_share=0.0))
