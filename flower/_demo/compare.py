"""The side-by-side table of the demo: the same scenario with flower and as a plain SDK session."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..report import EconomyReport
from ..report._growth import pooled_slope
from ..report._metrics import turns_to_wall
from ..report._text import human, percent

__all__ = ["NOTES", "WALL", "Side", "compare", "growth"]

WALL = 200_000
"""The window the growth is extrapolated to: the CLI's for Sonnet and Haiku models (CLI 2.1.332)."""


@dataclass(frozen=True)
class Side:
    """One run of the comparison: its report and the main thread's request sizes (chars of history)."""

    report: EconomyReport
    resident: Sequence[int]
    seconds: float
    layer4: bool = True
    """Its store rewrote resumes (a plain store does not: the report's recomputation is then hypothetical)."""
    compactions: int = 0
    """The CLI's compactions (the plain run compacts at the window flower hands off at)."""


def _rows(wall: int) -> list[tuple[str, Callable[[Side], str]]]:
    def crossing(side: Side) -> str:
        series = [c for session in side.report.sessions for c in session.context]
        over = [turn for turn, context in enumerate(series, start=1) if context >= wall]
        return f"turn {over[0]}" if over else "never"

    return [
        ("main-thread turns", lambda s: f"{s.report.turns.main}"),
        ("main-thread tool calls", lambda s: f"{s.report.tool_calls.main}"),
        ("subagent tool calls", lambda s: f"{s.report.tool_calls.subagents}"),
        ("delegations (mandates)", lambda s: f"{s.report.mandates.count}"),
        ("mandate chars restating rules", lambda s: percent(s.report.mandates.restated_share)),
        ("history chars, last main request", lambda s: human(s.resident[-1] if s.resident else 0)),
        ("history chars, largest main request", lambda s: human(max(s.resident, default=0))),
        ("main-thread context peak (tokens)", lambda s: human(s.report.context.peak)),
        ("main-thread growth (tokens/turn) [1]", lambda s: f"{growth(s) or 0:+,.0f}"),
        (f"first turn at or over {human(wall)} tokens", crossing),
        ("turns to a 200K window at that growth [2]", _to_wall),
        ("main-thread tokens sent, all turns", lambda s: human(s.report.tokens.main.context)),
        (
            "tokens sent, all turns",
            lambda s: human((s.report.tokens.main + s.report.tokens.subagents).context),
        ),
        ("spills (chars kept out)", lambda s: f"{s.report.spills.count} ({human(s.report.spills.kept_out)})"),
        ("expired / pruned at resume", _rewritten),
        ("handoffs / compactions", lambda s: f"{s.report.handoffs} / {s.compactions}"),
        ("cache hit rate (simulated cache)", lambda s: percent(s.report.tokens.hit_rate)),
        ("estimated cost", lambda s: f"${s.report.cost.usd:,.2f}"),
        ("wall time", lambda s: f"{s.seconds:.1f} s"),
    ]


def _rewritten(side: Side) -> str:
    if not side.layer4:
        return "0 / 0"
    resumes = side.report.resumes
    return f"{sum(r.expired for r in resumes)} / {sum(r.pruned for r in resumes)}"


def growth(side: Side) -> float | None:
    """Tokens the main thread's context grows by per turn, between restarts: each session's series is cut
    where the context drops by half or more (a compaction; a handoff starts a session of its own), and
    one least-squares slope is fitted through the pieces, each with its own intercept."""
    pieces: list[list[int]] = []
    for session in side.report.sessions:
        pieces.append([])
        for before, context in zip([0, *session.context], session.context, strict=False):
            if pieces[-1] and context <= before / 2:
                pieces.append([])
            pieces[-1].append(context)
    return pooled_slope(pieces)


def _to_wall(side: Side) -> str:
    turns = turns_to_wall(side.report.context.start, growth(side), WALL)
    return "never" if turns is None else f"~{turns:,.0f}"


NOTES = (
    "[1] tokens per main-thread turn, least squares, restarting where a handoff (flower) or a compaction",
    "    (the plain session) drops the context: a slope across a drop would flatten it. flower's main",
    "    thread grows by a mandate and a short report per delegation; the plain one by every command",
    "    output it reads itself, until the CLI compacts it.",
    "[2] from the first turn's context at that growth, if no handoff or compaction intervened.",
)
"""The notes printed under the table: how the growth rows are measured."""


def compare(flower: Side, plain: Side, *, wall: int) -> str:
    """The table, one row per measurement; `wall` is the context the handoff threshold was set to."""
    rows = _rows(wall)
    width = max(len(label) for label, _ in rows) + 2
    lines = [f"  {'':<{width}}{'flower':>14}{'plain SDK':>14}"]
    for label, cell in rows:
        lines.append(f"  {label:<{width}}{cell(flower):>14}{cell(plain):>14}")
    lines += [f"  {note}" for note in NOTES]
    return "\n".join(lines)
