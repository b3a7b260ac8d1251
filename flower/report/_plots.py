"""PNG pictures of an `EconomyReport`: the main thread's context per turn, and main vs subagent shares.

matplotlib is an optional dependency (`pip install "flower-context[plots]"`), imported only when a plot is
drawn; without it these functions raise `ImportError` saying so. They draw on a `Figure` object (no
pyplot, no global backend), so they are safe to call from any thread.

Example::

    from flower.report._plots import write_plots

    write_plots(report, "plots/")                     # context.png and split.png
    write_plots({"flower": a, "plain SDK": b}, "plots/")  # several runs on the same axes
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._economy import EconomyReport

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["plot_context", "plot_split", "require_matplotlib", "write_plots"]

Runs = EconomyReport | Mapping[str, EconomyReport]
_COLOURS = ("#2a7ab9", "#d9822b", "#4c9a52", "#a34a9c", "#8c8c8c")


def require_matplotlib() -> None:
    """Raise the `ImportError` below now when matplotlib is missing (`flower report --plots` checks
    before it prints anything)."""
    try:
        import matplotlib.figure  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            'flower\'s plots need matplotlib: pip install "flower-context[plots]" (or pip install matplotlib)'
        ) from exc


def _figure(width: float, height: float) -> Figure:
    require_matplotlib()
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=110, layout="constrained")


def _runs(runs: Runs) -> dict[str, EconomyReport]:
    if isinstance(runs, EconomyReport):
        return {"": runs}
    if not runs or not all(isinstance(r, EconomyReport) for r in runs.values()):
        raise TypeError("plots take an EconomyReport or a mapping of names to EconomyReports")
    return dict(runs)


def plot_context(runs: Runs, path: str | os.PathLike[str]) -> Path:
    """The main thread's context (tokens) at each of its turns, sessions one after the other.

    A handoff shows as a drop (the successor starts from its document), a resume as a marker.
    """
    named = _runs(runs)
    figure = _figure(8.0, 4.2)
    axes: Any = figure.subplots()
    peak = 0
    for index, (name, report) in enumerate(named.items()):
        colour = _COLOURS[index % len(_COLOURS)]
        start = 1
        for number, session in enumerate(report.sessions):
            if not session.context:
                continue
            turns = range(start, start + len(session.context))
            label = name if number == 0 else None
            axes.plot(turns, session.context, color=colour, marker=".", linewidth=1.5, label=label)
            for resume in (r for r in report.resumes if r.session_id == session.session_id):
                at = start + min(resume.after_turns, len(session.context) - 1)
                axes.axvline(at, color=colour, linestyle=":", linewidth=1)
            if number:
                axes.axvline(start - 0.5, color=colour, linestyle="--", linewidth=1)
            peak = max(peak, max(session.context))
            start += len(session.context)
    axes.set_xlabel("main-thread turn (sessions in order; dashed: handoff, dotted: resume)")
    axes.set_ylabel("context (tokens)")
    window = next(iter(named.values())).context.window
    top = peak * 1.1 if peak else 1
    if peak and window <= 1.5 * peak:  # the wall is near enough to be drawn without squashing the curves
        axes.axhline(window, color="#555555", linestyle="--", linewidth=1, label=f"window ({window:,})")
        top = window * 1.05
    axes.set_ylim(0, top)
    axes.grid(alpha=0.3)
    axes.yaxis.set_major_formatter(_thousands())
    axes.set_title("Main-thread context per turn")
    if len(named) > 1 or any(named) or axes.get_legend_handles_labels()[0]:
        axes.legend(loc="center right")
    return _save(figure, path)


def plot_split(runs: Runs, path: str | os.PathLike[str]) -> Path:
    """The share of turns, body chars and tool calls made in the main thread vs in subagents."""
    named = _runs(runs)
    rows = [
        (f"{name + ': ' if name else ''}{what}", split)
        for name, report in named.items()
        for what, split in (
            ("turns", report.turns),
            ("body chars", report.body_chars),
            ("tool calls", report.tool_calls),
        )
    ]
    figure = _figure(8.0, 0.9 + 0.42 * len(rows))
    axes: Any = figure.subplots()
    labels = [label for label, _ in reversed(rows)]
    main = [100 * split.main / split.total if split.total else 0 for _, split in reversed(rows)]
    axes.barh(labels, main, color="#c44e52", label="main thread")
    axes.barh(labels, [100 - m for m in main], left=main, color="#55a868", label="subagents")
    for y, share in enumerate(main):
        axes.text(1, y, f"{share:.0f}%", va="center", fontsize=8, color="white")
        axes.text(99, y, f"{100 - share:.0f}%", va="center", ha="right", fontsize=8, color="white")
    axes.set_xlim(0, 100)
    axes.set_xlabel("% of the run")
    axes.set_title("Where the work happened: main thread vs subagents")
    axes.legend(loc="lower center", bbox_to_anchor=(0.5, 1.08), ncols=2, frameon=False)
    return _save(figure, path)


def write_plots(runs: Runs, directory: str | os.PathLike[str]) -> list[Path]:
    """Both plots into `directory` (created if needed): `context.png` and `split.png`."""
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    return [plot_context(runs, target / "context.png"), plot_split(runs, target / "split.png")]


def _thousands() -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda value, _: f"{value:,.0f}")


def _save(figure: Figure, path: str | os.PathLike[str]) -> Path:
    target = Path(path)
    figure.savefig(target, format="png")
    return target
