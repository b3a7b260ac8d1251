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
ABSOLUTE = 2_000
"""...plus this many tokens (or cost units), for the small numbers."""
SIZES = ("peak", "sum_main", "sum_all", "cost_main", "cost_all")
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
        table.setdefault(row.workload, {})[row.strategy] = row.stored()
    stored[scale] = table
    path.write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n")


def check(path: Path, scale: str, rows: Sequence[Metrics]) -> tuple[list[str], list[str]]:
    """(regressions of flower's rows, drift of the other rows) against the stored `scale` numbers."""
    stored = load(path).get(scale)
    if not stored:
        return [f"no stored baseline for the {scale!r} scale in {path}: run with --update-baseline"], []
    regressions: list[str] = []
    drift: list[str] = []
    for row in rows:
        old = stored.get(row.workload, {}).get(row.strategy)
        where = f"{row.workload} {row.strategy}"
        if old is None:
            drift.append(f"{where}: not in the baseline")
            continue
        problems = _compare(row, old)
        (regressions if row.strategy.startswith("flower") else drift).extend(
            f"{where}: {p}" for p in problems
        )
    seen = {(r.workload, r.strategy) for r in rows}
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
        if now > before * (1 + RELATIVE) + ABSOLUTE:
            problems.append(f"{name} {before:,.0f} -> {now:,.0f} (+{(now - before) / max(before, 1):.0%})")
    for name in COUNTS:
        before, now = int(old.get(name, 0)), int(getattr(row, name))  # type: ignore[call-overload]
        if now > before:
            problems.append(f"{name} {before} -> {now}")
    for name in FALLS:
        before, now = int(old.get(name, 0)), int(getattr(row, name))  # type: ignore[call-overload]
        if now < before:
            problems.append(f"{name} {before} -> {now}")
    return problems
