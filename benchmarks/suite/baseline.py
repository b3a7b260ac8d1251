"""The stored baseline: `--update-baseline` writes the numbers, `--check` fails on a regression of flower.

Only flower's rows (full, ablations, preview sweep) can regress: the baselines and the peers move when
the CLI does, and that is reported as drift, not as a failure. A flower row regresses when it no longer
finishes, when a size or cost grows past its tolerance, or when a count that must not grow does
(facts lost, extra calls, retries, trusted stale state, compactions or handoffs).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from .metrics import Metrics

RELATIVE = 0.05
"""Sizes and costs may grow 5 % (workspace paths and the CLI's own text vary a little across machines)."""
ABSOLUTE = {"peak": 2_000, "sum_main": 2_000, "sum_all": 2_000, "cost_main": 0.01, "cost_all": 0.01}
"""...plus this much (tokens, or dollars), for the small numbers."""
SIZES = tuple(ABSOLUTE)
COUNTS = ("failed", "extra_calls", "retries", "stale_trusted", "events")
"""Counts that must not grow (a fact lost is a regression even when tokens fall)."""
FALLS = ("at_once", "verdicts_at_once")
"""Counts that must not fall."""


def load(path: Path) -> dict[str, dict[str, dict[str, dict[str, object]]]]:
    """The stored baselines (`{}` when the file does not exist yet)."""
    return json.loads(path.read_text()) if path.exists() else {}


def update(path: Path, scale: str, rows: Sequence[Metrics]) -> None:
    """Store this run's numbers for `scale` (`full` or `quick`), keeping the other scale's."""
    stored = load(path)
    table: dict[str, dict[str, dict[str, object]]] = {}
    for row in rows:
        table.setdefault(row.workload, {})[label(row)] = row.stored()
    stored[scale] = table
    path.write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n")


def label(row: Metrics) -> str:
    """A row's key in the stored table: its strategy, player and (scaling runs) size."""
    return f"{row.strategy} [{row.player}]" + (f" @{row.size}" if row.size else "")


def check(path: Path, scale: str, rows: Sequence[Metrics]) -> tuple[list[str], list[str]]:
    """(regressions of flower's rows, drift of the other rows) against the stored `scale` numbers."""
    stored = load(path).get(scale)
    if not stored:
        return [f"no stored baseline for the {scale!r} scale in {path}: run with --update-baseline"], []
    regressions: list[str] = []
    drift: list[str] = []
    for row in rows:
        old = stored.get(row.workload, {}).get(label(row))
        where = f"{row.workload} {label(row)}"
        if old is None:
            drift.append(f"{where}: not in the baseline")
            continue
        problems = _compare(row, old)
        (regressions if row.strategy.startswith("flower") else drift).extend(
            f"{where}: {p}" for p in problems
        )
    seen = {(r.workload, label(r)) for r in rows}
    for workload, strategies in stored.items():
        for strategy in strategies:
            if strategy.startswith("flower") and (workload, strategy) not in seen:
                regressions.append(f"{workload} {strategy}: in the baseline but not run")
    return regressions, drift


def _compare(row: Metrics, old: dict[str, object]) -> list[str]:
    problems: list[str] = []
    if old.get("finished") and not row.finished:
        problems.append("no longer finishes")
    for name in SIZES:
        before, now = float(old.get(name, 0)), float(getattr(row, name))  # type: ignore[arg-type]
        if now > before * (1 + RELATIVE) + ABSOLUTE[name]:
            growth = (now - before) / before if before else 1.0
            problems.append(f"{name} {before:,.3f} -> {now:,.3f} (+{growth:.0%})")
    for name in COUNTS:
        before, now = int(old.get(name, 0)), int(getattr(row, name))  # type: ignore[call-overload]
        if now > before:
            problems.append(f"{name} {before} -> {now}")
    for name in FALLS:
        before, now = int(old.get(name, 0)), int(getattr(row, name))  # type: ignore[call-overload]
        if now < before:
            problems.append(f"{name} {before} -> {now}")
    return problems
