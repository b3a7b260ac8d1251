"""Plan and run the suite: every run is a job (workload, strategy, player, size) in a process pool.

1. the ideal player, every strategy of every workload (the peers' whole sweep included);
2. the realistic player, three seeds (one in `--quick`), on the CLI's default, flower, and each peer at
   its best: the setting of its sweep that cost least with the ideal player in that workload (among the
   settings that finished);
3. the scaling table: W1 and W3 at two more sizes, the ideal player, the strategies of 2.
Jobs that need no peer choice start at once; the others once the ideal sweep is in.
"""

from __future__ import annotations

import multiprocessing
import resource
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass

import anyio

from .metrics import Metrics, compute
from .peers import CLEARS, MASKS
from .realistic import Behaviour
from .runs import named, strategies_for
from .trace import from_recording
from .workloads import QUICK_SCALES, SCALES, workload

Progress = Callable[[str], None]
SEEDS = (1, 2, 3)
REALISTIC = ("baseline_cc_default", "flower")
"""Run by the realistic player, with each peer at its best."""
SCALED = ("baseline_cc_default", "flower")
"""Run at the scaling table's other sizes, with each peer at its best."""
WEIGHT = {"w4": 3.0, "w1": 1.5, "w2": 1.2, "w3": 1.2, "w5": 1.0}
"""Rough relative run times, to start the long jobs first."""


@dataclass(frozen=True)
class Job:
    """One real run: a workload (at a size), a strategy, a player."""

    workload: str
    strategy: str
    quick: bool
    player: str = "ideal"
    seed: int = 0
    size: int | None = None

    @property
    def weight(self) -> float:
        """A guess at its run time, for scheduling."""
        sizes = (QUICK_SCALES if self.quick else SCALES).get(self.workload)
        ratio = self.size / sizes[1] if self.size and sizes else 1.0
        return WEIGHT.get(self.workload, 1.0) * ratio


def run_job(job: Job) -> Metrics:
    """Record one run and reduce it to metrics (in a worker process)."""
    from .record import record

    w = workload(job.workload, job.quick, job.size)
    strategy = named(w, job.strategy)
    before = _cpu()
    rec = anyio.run(lambda: record(w, strategy, Behaviour(job.player, job.seed)))
    row = compute(from_recording(rec, size=job.size or 0))
    row.cpu = round(_cpu() - before, 1)
    return row


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the CLI, its tools)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def best(rows: Sequence[Metrics], key: str, names: Iterable[str]) -> str:
    """The cheapest of these peer settings in workload `key` with the ideal player (finishing first)."""
    pool = [r for r in rows if r.workload == key and r.strategy in set(names) and r.player == "ideal"]
    if not pool:
        return next(iter(names))
    return min(pool, key=lambda r: (not r.finished, r.cost_all)).strategy


def chosen_peers(rows: Sequence[Metrics], keys: Iterable[str]) -> dict[str, tuple[str, str]]:
    """Per workload: (best masking setting, best `clear_tool_uses` setting)."""
    masks, clears = [p.name for p in MASKS], [p.name for p in CLEARS]
    return {key: (best(rows, key, masks), best(rows, key, clears)) for key in keys}


def _later(key: str, quick: bool, peers: tuple[str, str] | None) -> list[Job]:
    """Realistic runs and scaling runs of one workload: of `REALISTIC` and `SCALED` when `peers` is None,
    else of the chosen peer settings. `quick`: one realistic seed, no peers, no scaling."""
    if quick:
        return [] if peers else [Job(key, n, quick, "realistic", 1) for n in REALISTIC]
    realistic, scaled = (REALISTIC, SCALED) if peers is None else (peers, peers)
    jobs = [Job(key, n, quick, "realistic", seed) for seed in SEEDS for n in realistic]
    for size in SCALES.get(key, ())[::2]:  # the middle size is the suite's own
        jobs += [Job(key, name, quick, size=size) for name in scaled]
    return jobs


def run_suite(
    keys: Sequence[str], *, quick: bool, jobs: int, previews: bool = False, progress: Progress = print
) -> list[Metrics]:
    """Every row of the suite for these workloads, `jobs` runs at a time (`previews`: W1's preview sweep)."""
    first = [
        Job(k, s.name, quick)
        for k in keys
        for s in strategies_for(workload(k, quick), quick=quick, previews=previews)
    ]
    first += [job for k in keys for job in _later(k, quick, None)]
    rows: list[Metrics] = []
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        rows += _drain(pool, first, progress)
        picks = chosen_peers(rows, keys)
        for key, (mask, clear) in picks.items():
            progress(f"  {key}: best masking {mask}, best clear_tool_uses {clear}")
        second = [job for k in keys for job in _later(k, quick, picks[k])]
        rows += _drain(pool, second, progress)
    return rows


def _drain(pool: ProcessPoolExecutor, jobs: Sequence[Job], progress: Progress) -> list[Metrics]:
    started = time.perf_counter()
    futures: dict[Future[Metrics], Job] = {
        pool.submit(run_job, job): job for job in sorted(jobs, key=lambda j: -j.weight)
    }
    out: list[Metrics] = []
    for future in as_completed(futures):
        job = futures[future]
        row = future.result()
        out.append(row)
        where = f"{job.workload}{f' @{job.size}' if job.size else ''}"
        progress(
            f"  {where:8s} {job.strategy:34s} {row.player:12s} {row.wall:5.1f}s "
            f"finished={row.finished} peak={row.peak:,} cost_all=${row.cost_all:.3f}"
            f" [{time.perf_counter() - started:.0f}s]" + (f" error={row.error[:80]}" if row.error else "")
        )
    return out


__all__ = ["Job", "best", "chosen_peers", "run_job", "run_suite"]
