"""What the delegation estimate assumes (`DelegationAssumptions`) and what it says (`DelegationLine`).

The estimate (`delegation.delegation_line`) is computed at two ends, each a named scenario: *lean*, the
low-cost end (short reports and mandates, documents rarely read back, workers checking their own work),
and *heavy*, the high-cost end. Where the two savings lie within ±`NARROW` of their midpoint the estimate
is told as one range; else as the two scenarios, each with its sign (a loss is told as a loss).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from .._measured import (
    READ_BACK_INTERVAL,
    REPORT_CHARS_DECILES,
    SUBAGENT_TEXT,
    SUBAGENT_THINKING,
    expected_chars,
)

__all__ = ["NARROW", "DelegationAssumptions", "DelegationLine"]

NARROW = 0.3
"""How far from its midpoint a delegation range may reach to be told as one range (±30 %)."""


@dataclass(frozen=True, kw_only=True)
class DelegationAssumptions:
    """What the delegation estimate assumes, as (low cost, high cost) pairs; printed with it."""

    report_chars: tuple[int, int] = (REPORT_CHARS_DECILES[1], REPORT_CHARS_DECILES[9])
    """A worker's report (1st and 9th deciles of real project agents with a set report format)."""
    read_back: tuple[float, float] = READ_BACK_INTERVAL
    """Share of reports after which the coordinator reads a document back (as long as the report)."""
    mandate_chars: tuple[int, int] = (400, 1_600)
    """A mandate (flower's demo: 367 on average, 577 the longest)."""
    frame_tokens: int = 150
    """The CLI's hand-back frame around a report."""
    worker_prefix_tokens: int = 5_350
    """A worker's fixed prefix (tools, system prompt): flower's worker through the bundled CLI 2.1.332, as
    its first request's cached part measured (5,348 tokens at 4 characters a token)."""
    worker_prose_chars: float = expected_chars(SUBAGENT_THINKING) + expected_chars(SUBAGENT_TEXT)
    """Prose a worker writes in each reply before its report: what real subagents write, expected (71
    chars: no thinking, a text in 87 % of replies, median 77, p90 119)."""
    own_steps: int = 0
    """Hands-on calls in a row the coordinator takes itself: 0, flower's default (`coordinator()` is strict:
    every hands-on call goes to a worker); with `n`, a stretch of no more than `n` stays on the main
    thread, as `coordinator(own_steps=n)` lets it."""
    inline_until: int | None = None
    """None, flower's default (every hands-on call delegated from the start); with `t` tokens, a
    `Runtime`'s run of `coordinator(inline_until=t)`: up to the first request whose recorded context reached
    `t`, the main thread is the inline session (its own fixed prefix, its calls its own), then it hands off
    to the coordinator, which delegates the rest of the session (with handoff disabled: one session, the
    wall switching at `t`)."""
    worker_glances: tuple[bool, bool] = (True, False)
    """Whether the replies right after a stretch, in the same tool loop, that only make glances (Bash calls
    glance accepts: looking at the state its calls left) are the worker's: at the low end it checks
    what its own calls did before it reports (as flower's workers do in the benchmark's runs), at the high
    end the coordinator runs them, as glance lets it."""
    keep_warm: bool = True
    """The coordinator's cache kept warm by pings while it waits (flower's default, `KeepWarmPolicy()`);
    False: 5-minute marks that lapse during a long wait."""


@dataclass(frozen=True, kw_only=True)
class DelegationLine:
    """The estimate: the session's cost and main-thread peak with its tool loops delegated, low to high."""

    _derived: ClassVar[tuple[str, ...]] = ("estimate", "saved_usd_lean", "saved_usd_heavy", "narrow")

    loops: int = 0
    """Tool loops that would have gone to a worker."""
    calls: int = 0
    """Their tool calls."""
    requests: int = 0
    """Their requests, made by workers instead of the main thread."""
    cost_usd_low: float = 0.0
    cost_usd_high: float = 0.0
    main_peak_low: int = 0
    main_peak_high: int = 0
    prefix_delta: int = 0
    """Tokens by which each of the coordinator's requests carries a longer (negative: shorter) fixed prefix
    than the recorded one: flower's coordinator's system prompt and tools against the request shape the
    transcript records (`prefix.coordinator_delta`), else `WhatIfOptions.prefix_delta`. In a total, the sum
    over the sessions (`prefix_sessions` of them computed it)."""
    prefix_sessions: int = 0
    """Sessions whose coordinator prefix was computed from the request shape their transcript records."""
    inline_prefix_delta: int = 0
    """With `inline_until`: the same for the coordinator's inline session (no `Agent`, flower's short inline
    prompt; `prefix.coordinator_delta(inline_until=...)`), which the main thread carries up to its switch;
    0 without."""
    switches: int = 0
    """With `inline_until`: sessions whose inline session reached it and handed off to the coordinator."""
    assumptions: DelegationAssumptions = field(default_factory=DelegationAssumptions)
    recorded_usd: float = 0.0
    """The recorded cost the estimate is compared with."""

    @property
    def estimate(self) -> bool:
        """Always True: nothing here was recorded."""
        return True

    @property
    def saved_usd_lean(self) -> float:
        """The saving in the *lean* scenario, the low-cost end: short reports and mandates, documents
        rarely read back, workers checking their own work (negative: a loss)."""
        return self.recorded_usd - self.cost_usd_low

    @property
    def saved_usd_heavy(self) -> float:
        """The saving in the *heavy* scenario, the high-cost end: long reports and mandates, documents
        read back often, the coordinator running the glances (negative: a loss)."""
        return self.recorded_usd - self.cost_usd_high

    @property
    def narrow(self) -> bool:
        """The two scenarios' savings lie within ±`NARROW` of their midpoint (so share its sign): the
        estimate can be told as one range; else it is told as the two scenarios, each with its sign."""
        lean, heavy = self.saved_usd_lean, self.saved_usd_heavy
        middle = (lean + heavy) / 2
        return middle != 0 and abs(lean - heavy) / 2 <= NARROW * abs(middle)
