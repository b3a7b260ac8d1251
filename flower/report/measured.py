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
"""

from __future__ import annotations

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
