"""The economy report: what a run did with its context, measured from its store.

Example::

    from flower.report import build_report_sync

    report = build_report_sync("repo")        # a workspace, its .flower/, a .db file, or a SessionStore
    print(report.render_text())
    report.to_json()

The measurements flower's design was built on (the guide's "Design and rationale" tells where they come from):
turns, body chars and tool calls in the main thread vs subagents, mandates and the share that restates the
worker rules, scripts written vs run, spills, long reports sent back, what each resume expired, trimmed and
pruned, the main thread's context per turn (slope, extrapolated wall), cache hit rate and an estimated cost.
`build_fleet_report` reads a whole fleet's PostgreSQL store: per session and in total; `build_what_if`
replays flower's layers on a Claude Code history (`flower report --what-if`). Every dollar comes from one
cost model: `PromptCache` (the API's prompt cache, simulated) and `price` / `estimate` (a
`CostBreakdown`). See docs/report.md, docs/what-if.md, docs/cost.md and docs/fleet.md.
"""

from __future__ import annotations

from .._cost import CostBreakdown, PromptCache, estimate, price
from ._build import ReportOptions, build_report, build_report_sync
from ._delegation import Delegation
from ._economy import EconomyReport
from ._fleet_report import FleetReport, FleetSession, build_fleet_report
from ._parts import (
    ContextGrowth,
    Cost,
    Mandates,
    Reports,
    ResumeSummary,
    Scripts,
    SessionSummary,
    Spills,
    Split,
    Tokens,
)
from ._what_if import (
    DelegationAssumptions,
    SessionWhatIf,
    WhatIfOptions,
    WhatIfReport,
    WhatIfTotal,
    build_what_if,
    build_what_if_sync,
)

__all__ = [
    "ContextGrowth",
    "Cost",
    "CostBreakdown",
    "Delegation",
    "DelegationAssumptions",
    "EconomyReport",
    "FleetReport",
    "FleetSession",
    "Mandates",
    "PromptCache",
    "ReportOptions",
    "Reports",
    "ResumeSummary",
    "Scripts",
    "SessionSummary",
    "SessionWhatIf",
    "Spills",
    "Split",
    "Tokens",
    "WhatIfOptions",
    "WhatIfReport",
    "WhatIfTotal",
    "build_fleet_report",
    "build_report",
    "build_report_sync",
    "build_what_if",
    "build_what_if_sync",
    "estimate",
    "price",
]
