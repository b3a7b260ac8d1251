"""The main thread's growth: tokens per turn over a run's sessions, and the turns left before a window.

Pure functions over context sizes (tokens per main-thread reply); `flower.report.build_report` and the
demo use them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["least_squares_slope", "pooled_slope", "turns_to_wall"]


def least_squares_slope(points: Sequence[float]) -> float | None:
    """The least-squares slope of `points` against their index (None under two points)."""
    return pooled_slope([points])


def pooled_slope(series: Iterable[Sequence[float]]) -> float | None:
    """One slope for several series, each with its own intercept (a handoff restarts low).

    It is the growth per turn within any session: the sawtooth of a handoff chain does not flatten it.
    """
    num = den = 0.0
    for points in series:
        count = len(points)
        if count < 2:
            continue
        mean_x = (count - 1) / 2
        mean_y = sum(points) / count
        num += sum((x - mean_x) * (y - mean_y) for x, y in enumerate(points))
        den += sum((x - mean_x) ** 2 for x in range(count))
    return num / den if den else None


def turns_to_wall(start: float, slope: float | None, window: int) -> float | None:
    """Turns from a context of `start` tokens until `window`, at `slope` tokens per turn (None if flat)."""
    if slope is None or slope <= 0:
        return None
    return max(0.0, (window - start) / slope)
