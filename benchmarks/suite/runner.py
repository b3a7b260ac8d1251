"""Run the suite: every workload under every real strategy, then the peers' transforms, then metrics."""

from __future__ import annotations

import time
from collections.abc import Callable

from .actions import Workload
from .metrics import Metrics, compute
from .runs import HARD_LIMIT, RECORDER, Recording, record, strategies_for
from .trace import from_recording, main_bodies
from .transforms import PEERS, transform

Progress = Callable[[str], None]


def _resume(rec: Recording) -> tuple[int, int] | None:
    """(index of the first main request after the first pause, the true state version at the resume)."""
    if not rec.resume_states:
        return None
    pause = min(rec.resume_states)
    mains = [r.seq for r in rec.requests if r.caller == "main"]
    after = [i for i, seq in enumerate(mains) if seq > pause]
    return (after[0], rec.resume_states[pause]) if after else None


async def run_workload(workload: Workload, *, quick: bool, progress: Progress = print) -> list[Metrics]:
    """Metrics of one workload: real runs first (baselines, flower, ablations), peers after baseline_raw."""
    rows: list[Metrics] = []
    source: Recording | None = None
    for strategy in strategies_for(workload, quick=quick):
        started = time.perf_counter()
        rec = await record(workload, strategy)
        row = compute(from_recording(rec))
        rows.append(row)
        progress(
            f"  {workload.key} {strategy.name:38s} {time.perf_counter() - started:5.1f}s "
            f"finished={row.finished} peak={row.peak:,} cost_all={row.cost_all:,.0f}"
            + (f" error={row.error[:90]}" if row.error else "")
        )
        if strategy.name == "baseline_raw" and workload.pad == 0:
            source = rec
    if source is None:  # the marathon: record raw history on a model the CLI never stops
        started = time.perf_counter()
        source = await record(workload, RECORDER)
        progress(
            f"  {workload.key} {RECORDER.name:38s} {time.perf_counter() - started:5.1f}s (transform source)"
        )
    bodies, times = main_bodies(source)
    at = next(i for i, row in enumerate(rows) if row.strategy.startswith("flower"))  # after the baselines
    for peer in PEERS:
        trace = transform(
            peer,
            workload,
            bodies,
            times,
            source.ledger,
            finished=source.finished,
            limit=HARD_LIMIT,
            resume=_resume(source),
        )
        rows.insert(at, compute(trace))
        at += 1
    return rows
