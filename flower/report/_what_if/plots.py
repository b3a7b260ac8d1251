"""PNG pictures of a `WhatIfReport` (the `plots` extra): each session's main thread as recorded and with
the layers, and a bar per layer of what it would have saved.

Example::

    from flower.report._what_if.plots import write_plots

    write_plots(report, "plots/")    # sessions.png and savings.png
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from .._plots import _figure, _save, _thousands
from .what_if_report import WhatIfReport

__all__ = ["SESSIONS_SHOWN", "plot_savings", "plot_sessions", "write_plots"]

SESSIONS_SHOWN = 12
"""The costliest sessions drawn in `sessions.png` (a long history has too many to draw them all)."""


def plot_sessions(report: WhatIfReport, path: str | os.PathLike[str]) -> Path:
    """The main thread's context per request of the costliest sessions: as recorded, and with spill and
    layer 4 (one small chart each)."""
    shown = sorted(report.sessions, key=lambda s: -s.as_recorded.cost_usd)[:SESSIONS_SHOWN]
    shown = [s for s in shown if s.main_context] or shown[:1]
    columns = min(3, max(1, len(shown)))
    rows = max(1, math.ceil(len(shown) / columns))
    figure = _figure(4.0 * columns, 2.6 * rows + 0.6)
    grid: Any = figure.subplots(rows, columns, squeeze=False)
    for index, axes in enumerate(grid.flat):
        if index >= len(shown):
            axes.set_visible(False)
            continue
        session = shown[index]
        requests = range(1, len(session.main_context) + 1)
        axes.plot(requests, session.main_context, color="#8c8c8c", linewidth=1.2, label="as recorded")
        axes.plot(
            requests, session.main_context_after, color="#2a7ab9", linewidth=1.5, label="spill + layer 4"
        )
        axes.set_title(f"{session.session_id[:8]} ({session.started[:10]})", fontsize=9)
        axes.set_ylim(0, max(session.main_context, default=1) * 1.1)
        axes.yaxis.set_major_formatter(_thousands())
        axes.tick_params(labelsize=7)
        axes.grid(alpha=0.3)
        if index == 0:
            axes.legend(fontsize=7, loc="upper left")
    figure.suptitle("Main-thread context per request (tokens), the costliest sessions")
    return _save(figure, path)


def plot_savings(report: WhatIfReport, path: str | os.PathLike[str]) -> Path:
    """A bar per layer: dollars saved over every session (delegation: the estimate's range)."""
    layers = report.total.layers
    recorded = report.total.as_recorded.cost_usd
    bars = [
        ("spill", layers.spill.saved_usd),
        ("layer 4", layers.layer4.saved_usd),
        ("spill + layer 4", layers.spill_and_layer4.saved_usd),
        ("handoff", layers.handoff.saved_usd),
    ]
    d = layers.delegation
    low, high = recorded - d.cost_usd_high, recorded - d.cost_usd_low
    figure = _figure(7.5, 3.6)
    axes: Any = figure.subplots()
    names = [name for name, _ in bars] + ["delegation (estimate)"]
    values = [value for _, value in bars] + [(low + high) / 2]
    colours = ["#2a7ab9"] * len(bars) + ["#d9822b"]
    axes.bar(names, values, color=colours)
    axes.errorbar([len(bars)], [(low + high) / 2], yerr=[[(high - low) / 2]], color="#333333", capsize=6)
    axes.axhline(0, color="#555555", linewidth=0.8)
    axes.set_ylabel("dollars saved")
    axes.set_title(f"What each layer would have saved (recorded: ${recorded:,.2f})")
    axes.tick_params(axis="x", labelsize=8)
    axes.grid(axis="y", alpha=0.3)
    return _save(figure, path)


def write_plots(report: WhatIfReport, directory: str | os.PathLike[str]) -> list[Path]:
    """Both plots into `directory` (created if needed): `sessions.png` and `savings.png`."""
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    return [plot_sessions(report, target / "sessions.png"), plot_savings(report, target / "savings.png")]
