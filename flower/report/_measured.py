"""How real Claude Code agents behave, measured once and used wherever flower estimates a run it did not make.

These numbers come from public Claude Code transcripts, not from flower's own scripted runs, so an estimate
built on them (the benchmark's realistic player, `flower report --what-if`'s delegation range) describes
agents as they are rather than as flower would like them to be.

`REPORT_CHARS_DECILES`: the length, in characters, of the final report of subagents **defined in the
project with a set report format that points to files** (the closest real match to flower's
`WORKER_RULES`), after the CLI's own trailing `agentId: …` / `<usage>` block was stripped. Min, the nine
deciles, max: median 1,946 chars (about 35 lines), p90 3,480, 91 % under 4,000. Agents never asked to be
brief report several times more (the built-in Explore agent: median 8,460 chars), so these are the sizes
of workers that follow a report rule, not of every subagent.

`READ_BACK_SHARE`: the share of such reports after which the caller opened a document the report pointed
to (5 of 23 cases, 95 % interval 10-42 %).

`PREVIEW_READ_BACK_*`: what real agents did with an output the CLI saved to a file and showed them as a
2 KB preview (a Bash output over 30,000 characters, a Grep's content over about 20,000): the closest real
match to an output flower spills. Over 167 public transcript files (`benchmarks/calibrate_read_back.py`), 29
such outputs (18 on main threads, 11 in subagents; 11 Bash, 18 Grep; median 52,399 characters): 5 were read
back, each by the next reply or the one after; the 4 under the Read cap were read whole in one Read
(1.07 to 1.13 characters back per character of output: the Read numbers its lines), the one over it in two
windows (1,583 characters). None of the 5 was followed by a reply copying a token from the hidden part
(they were read to be looked at), and no reply copied one where the file was not read (0 of 15 whose text
the transcript keeps).

`LOOKUP_*`: how real agents look a fact up in a file (`benchmarks/calibrate.py` over 18 transcripts, 100
look-up runs, 348 look-up calls): one call 48 % of the time, two 18 %, three or more 34 %; the calls
before the last miss; 57 % of look-up calls are Reads and 57 % of Reads take the whole file, so the last
call is a whole Read 32 % of the time, else a search that finds the line. The benchmark's realistic player
draws from the same figures.

`SUBAGENT_THINKING`, `SUBAGENT_TEXT`: the prose a real subagent writes in a reply before its report
(`benchmarks/calibrate_workers.py` over 70 such replies of 14 public subagent transcripts, Haiku 4.5,
Sonnet 4.5 and Opus 4.5 agents of CLI 2.0.74 to 2.1.39): none had a thinking block, 87 % a text block
(median 77 chars, p90 119). Main threads of the same corpus write far more: thinking in 39 % of 15,357
replies (median 246, p90 1,505), text in 50 % (median 104, p90 859). The CLI runs its subagents without
extended thinking (their final requests' output tokens match their reports' length, 3.4 chars a token over
316 calls), so no thinking is hidden from the transcript either. So a worker does not write what a main
thread wrote for the same calls: `expected_chars` of these shapes, about 71 chars a reply.
"""

from __future__ import annotations

import math
from typing import Final

REPORT_CHARS_DECILES: Final[tuple[int, ...]] = (
    230,
    1027,
    1268,
    1542,
    1765,
    1946,
    2056,
    2277,
    2678,
    3480,
    15129,
)
"""Report lengths (chars) of project-defined agents with a set report format: min, deciles 1-9, max."""

READ_BACK_SHARE: Final[float] = 5 / 23
"""Share of such reports after which the caller read a document the report pointed to (5 of 23)."""

READ_BACK_INTERVAL: Final[tuple[float, float]] = (0.10, 0.42)
"""95 % interval of `READ_BACK_SHARE` (Wilson, n = 23)."""

PREVIEW_READ_BACK: Final[tuple[int, int]] = (5, 29)
"""Outputs saved by the CLI and shown as a preview that a later call read back, of those seen."""

PREVIEW_READ_BACK_SHARE: Final[float] = 5 / 29
"""The share read back (17 %)."""

PREVIEW_READ_BACK_INTERVAL: Final[tuple[float, float]] = (0.076, 0.345)
"""95 % interval of `PREVIEW_READ_BACK_SHARE` (Wilson, n = 29)."""

WHOLE_READ_CHARS_PER_CHAR: Final[float] = 1.09
"""Characters a whole Read of a saved output brings back per character of it (median of 4: 1.07-1.13)."""

READ_CAP_CHARS: Final[int] = 100_000
"""A Read of a file over about 25,000 tokens fails ("exceeds maximum allowed tokens"): no whole Read."""

PARTIAL_READ_BACK: Final[tuple[int, int]] = (2, 1_583)
"""(requests, characters) of the one read-back of a saved output over the Read cap (two windows)."""

LOOKUP_CALLS: Final[tuple[tuple[int, float], ...]] = ((1, 0.48), (2, 0.18), (3, 0.34))
"""Calls a look-up takes, with their shares (100 real look-up runs); the calls before the last miss."""

LOOKUP_READ_SHARE: Final[float] = 0.572
"""Look-up calls that are Reads (the rest search: Grep, or a Bash grep/head/tail)."""

LOOKUP_WHOLE_READ_SHARE: Final[float] = 0.325
"""A look-up's last call is a whole-file Read this often (57.2 % Reads times 56.8 % of Reads whole); else
a search that returns the line."""

LOOKUP_MISS_LINES: Final[tuple[int, int]] = (100, 20)
"""(lines a missing Read returns, lines a missing search returns): the windows the benchmark's player
uses (a Read of the first 100 lines, a `grep | head -n 20`)."""

SUBAGENT_THINKING: Final[tuple[float, int, int]] = (0.0, 0, 0)
"""A real subagent's thinking per reply before its report: (share of replies with a block, median chars,
p90 chars); none of 70 had one."""

SUBAGENT_TEXT: Final[tuple[float, int, int]] = (0.871, 77, 119)
"""A real subagent's text per reply before its report: (share of replies with a block, median chars, p90
chars) over 70 replies."""

MAIN_THINKING: Final[tuple[float, int, int]] = (0.39, 246, 1_505)
"""A main thread's thinking per reply (`benchmarks/calibrate_workers.py`, every reply but the last of the
main threads of the same corpus, 15,357): (share of replies with a block, median chars, p90 chars)."""

MAIN_TEXT: Final[tuple[float, int, int]] = (0.50, 104, 859)
"""A main thread's text per reply, as `MAIN_THINKING`."""

SUMMARY_CHARS: Final[int] = 10_745
"""A compaction summary of the CLI in real sessions (the median of the 4 in flower's test corpus: 10,113,
10,339, 11,151 and 14,599 characters, CLI 2.0.74 to 2.1.42): the length a what-if gives a handoff
document where the session it replays never compacted (`what_if.threshold`)."""

_P90_Z: Final = 1.2816
"""The standard normal's 90th percentile."""


def expected_chars(shape: tuple[float, int, int]) -> float:
    """The expected characters of a block shaped `(share, median, p90)` in one reply: its share times the
    mean of a lognormal length with that median and p90 (the shape the benchmark's player draws from)."""
    share, median, p90 = shape
    if share <= 0 or median <= 0:
        return 0.0
    sigma = math.log(p90 / median) / _P90_Z
    return share * median * math.exp(sigma * sigma / 2)
