"""Plan and run the suite: every run is a job (workload, strategy, player, size) in a process pool.

1. the ideal player, every strategy of every workload (the peers' whole sweep and flower's ablations);
2. the realistic player, five seeds (one in `--quick`), on `baseline_raw`, the CLI's default, flower and
   `flower -delegation`; and, on a held-out seed (`SELECT`), every peer setting of the sweep;
3. once those are in: each peer at its best (the setting of its sweep that cost least with the held-out
   seed in that workload, under the run's clock, among those that finished) on the five seeds; the
   cheapest fair peer of the held-out seed again with the SDK's default system prompt (the sensitivity
   row); and the scaling table (W1 and W3 at two more sizes, the ideal player).
`--quick` runs flower and a few ablations with the ideal player, and one realistic seed of flower, the
baselines and one setting of each peer. A `Selection` keeps some of those runs (`--strategies`,
`--no-scaling`, `--seeds`): e.g. flower's own after a change to flower, to be priced beside the peers' kept
recordings; or, with strategies and seeds both given, just those strategies by the realistic player at
those seeds (a kept recording's missing seeds).
"""

from __future__ import annotations

import dataclasses
import gzip
import multiprocessing
import pickle
import resource
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from .metrics import Metrics, compute
from .peers import CLEARS, MASKS
from .realistic import Behaviour
from .runs import RAW, SDK, idle_layers, named, sdk_prompt, strategies_for, sweep
from .trace import from_recording
from .workloads import QUICK_SCALES, SCALES, workload

Progress = Callable[[str], None]
SEEDS = (1, 2, 3, 4, 5)
SELECT = 0
"""The held-out realistic seed each peer's best setting is chosen on (never one of `SEEDS`)."""
REALISTIC = ("baseline_raw", "baseline_cc_default", "flower", "flower -delegation")
"""Run by the realistic player, with each peer at its best."""
QUICK_PEERS = ("mask n10 p10", "clear_tool_uses tuned")
"""The peer settings `--quick` runs (no choice)."""
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
    clock: str = "calibrated"
    keep: str | None = None
    """A directory to keep the recording in (`<workload>/<strategy>--<player>.pkl.gz`), to price again."""
    reads_cut: float = 0.0
    """How often the realistic coordinator Reads a cut report's saved whole (`Behaviour.reads_cut`)."""

    @property
    def weight(self) -> float:
        """A guess at its run time, for scheduling."""
        sizes = (QUICK_SCALES if self.quick else SCALES).get(self.workload)
        ratio = self.size / sizes[1] if self.size and sizes else 1.0
        return WEIGHT.get(self.workload, 1.0) * ratio


@dataclass(frozen=True)
class Selection:
    """Which of the planned runs to make: those of these strategies (None: every one), whether the
    scaling table's runs at other sizes, and which of `SEEDS` the realistic player runs (None: all; the
    held-out seed is not one of them and is kept). A peer's best setting is still chosen from the runs made.

    With both strategies and seeds (`reruns`), the plan is only those strategies by the realistic player
    at those seeds: no ideal run, no held-out seed, no scaling run and no choice (a peer setting named is
    run whether or not the suite would choose it; a strategy that cannot act in a workload is not run)."""

    strategies: frozenset[str] | None = None
    scaling: bool = True
    seeds: frozenset[int] | None = None

    @property
    def reruns(self) -> bool:
        """Only the named strategies' realistic runs at the named seeds."""
        return self.strategies is not None and self.seeds is not None

    def __call__(self, job: Job) -> bool:
        named_ = self.strategies is None or job.strategy in self.strategies
        realistic = job.player == "realistic" and job.seed != SELECT
        if self.reruns:
            return named_ and realistic and job.seed in (self.seeds or ()) and job.size is None
        seeded = self.seeds is None or not realistic or job.seed in self.seeds
        return named_ and seeded and (self.scaling or job.size is None)


EVERY = Selection()


def run_job(job: Job) -> Metrics:
    """Record one run and reduce it to metrics (in a worker process)."""
    from .record import record

    w = workload(job.workload, job.quick, job.size)
    strategy = named(w, job.strategy)
    before = _cpu()
    rec = anyio.run(lambda: record(w, strategy, Behaviour(job.player, job.seed, job.reads_cut)))
    if job.keep:
        _keep(rec, Path(job.keep), job)
    row = compute(from_recording(rec, size=job.size or 0, run_clock=job.clock))
    row.cpu = round(_cpu() - before, 1)
    return row


def _keep(rec: object, root: Path, job: Job) -> None:
    """Pickle a recording (every request body as sent), to be priced again without running."""
    name = f"{job.strategy}--{job.player}{job.seed}{f'@{job.size}' if job.size else ''}".replace(" ", "_")
    target = root / job.workload / f"{name}.pkl.gz"
    target.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(target, "wb", compresslevel=3) as handle:
        pickle.dump(rec, handle, protocol=pickle.HIGHEST_PROTOCOL)


def load_recording(path: Path) -> Any:
    """A recording kept by `_keep`."""
    with gzip.open(path, "rb") as handle:
        return pickle.load(handle)


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the CLI, its tools)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def best(rows: Sequence[Metrics], key: str, names: Iterable[str]) -> str:
    """The cheapest of these peer settings in workload `key` on the held-out seed (the ideal player when
    no held-out run exists), finishing first."""
    wanted = set(names)
    pool = [
        r for r in rows if r.workload == key and r.strategy in wanted and r.player == f"realistic #{SELECT}"
    ]
    for player in ("realistic", "ideal"):  # quick: the one realistic seed; else the ideal player
        pool = pool or [
            r for r in rows if r.workload == key and r.strategy in wanted and r.player.startswith(player)
        ]
    if not pool:
        return next(iter(names))
    return min(pool, key=lambda r: (not r.finished, r.cost_all)).strategy


def chosen_peers(rows: Sequence[Metrics], keys: Iterable[str]) -> dict[str, tuple[str, str]]:
    """Per workload: (best masking setting, best `clear_tool_uses` setting)."""
    masks, clears = [p.name for p in MASKS], [p.name for p in CLEARS]
    return {key: (best(rows, key, masks), best(rows, key, clears)) for key in keys}


def _first(key: str, quick: bool, clock: str, previews: bool) -> list[Job]:
    """The jobs that need no choice: the ideal player's strategies, the realistic seeds of `REALISTIC`
    (and, quick, of `QUICK_PEERS`), the held-out seed of every peer setting, the scaling runs."""
    w = workload(key, quick)
    jobs = [Job(key, s.name, quick, clock=clock) for s in strategies_for(w, quick=quick, previews=previews)]
    if quick:
        named_ = (*REALISTIC[:3], *QUICK_PEERS)  # not flower -delegation: its ablation is the ideal player's
        return jobs + [Job(key, n, quick, "realistic", 1, clock=clock) for n in named_]
    jobs += [Job(key, n, quick, "realistic", seed, clock=clock) for seed in SEEDS for n in REALISTIC]
    jobs += [Job(key, p.name, quick, "realistic", SELECT, clock=clock) for p in [RAW, *sweep(w)]]
    for size in SCALES.get(key, ())[::2]:  # the middle size is the suite's own
        jobs += [Job(key, name, quick, size=size, clock=clock) for name in SCALED]
    return jobs


def _second(rows: Sequence[Metrics], key: str, picks: tuple[str, str], clock: str) -> list[Job]:
    """The chosen peer settings on the five seeds and at the scaling sizes, and the cheapest fair peer of
    the held-out seed with the SDK's default prompt on the five seeds."""
    jobs = [Job(key, n, False, "realistic", seed, clock=clock) for seed in SEEDS for n in picks]
    for size in SCALES.get(key, ())[::2]:
        jobs += [Job(key, name, False, size=size, clock=clock) for name in picks]
    held = [
        r
        for r in rows
        if r.workload == key and r.player == f"realistic #{SELECT}" and r.strategy in (RAW.name, *picks)
    ]
    if held:
        cheapest = min(held, key=lambda r: (not r.finished, r.cost_all)).strategy
        sdk = sdk_prompt(named(workload(key, False), cheapest)).name
        jobs += [Job(key, sdk, False, "realistic", seed, clock=clock) for seed in SEEDS]
    return jobs


def acts(key: str, name: str, quick: bool = False) -> bool:
    """Whether strategy `name` is one the suite can run in workload `key` and it can act there."""
    w = workload(key, quick)
    try:
        named(w, name)
    except KeyError:
        return False
    return name.removesuffix(SDK) not in idle_layers(w)


def _reruns(key: str, quick: bool, clock: str, select: Selection) -> list[Job]:
    """`select.reruns`: its strategies that act in workload `key`, by the realistic player at its seeds."""
    names = [name for name in sorted(select.strategies or ()) if acts(key, name, quick)]
    seeds = sorted(select.seeds or ())
    return [Job(key, name, quick, "realistic", seed, clock=clock) for seed in seeds for name in names]


def planned(
    keys: Sequence[str], *, quick: bool, clock: str, previews: bool = False, select: Selection = EVERY
) -> list[Job]:
    """The runs that need no choice (the suite's first round) for these workloads, as `select` keeps them;
    with `select.reruns`, every run to make (there is no second round)."""
    if select.reruns:
        return [job for k in keys for job in _reruns(k, quick, clock, select)]
    return [job for k in keys for job in _first(k, quick, clock, previews) if select(job)]


def run_suite(
    keys: Sequence[str],
    *,
    quick: bool,
    jobs: int,
    previews: bool = False,
    clock: str = "calibrated",
    keep: Path | None = None,
    select: Selection = EVERY,
    progress: Progress = print,
    reads_cut: float = 0.0,
) -> list[Metrics]:
    """Every row of the suite for these workloads under `clock` that `select` keeps, `jobs` runs at a
    time (`previews`: W1's preview sweep; `keep`: a directory for the recordings; `reads_cut`: how often
    the realistic coordinator Reads a cut report's saved whole)."""
    first = planned(keys, quick=quick, clock=clock, previews=previews, select=select)
    first = [dataclasses.replace(job, reads_cut=reads_cut) for job in first]
    rows: list[Metrics] = []
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        rows += _drain(pool, first, progress, keep)
        if quick or select.reruns:
            return rows
        picks = chosen_peers(rows, keys)
        second = [
            dataclasses.replace(job, reads_cut=reads_cut)
            for k in keys
            for job in _second(rows, k, picks[k], clock)
            if select(job)
        ]
        for key, (mask, clear) in picks.items():
            if any(job.workload == key for job in second):
                progress(f"  {key}: best masking {mask}, best clear_tool_uses {clear}")
        rows += _drain(pool, second, progress, keep)
    return rows


def _drain(
    pool: ProcessPoolExecutor, jobs: Sequence[Job], progress: Progress, keep: Path | None = None
) -> list[Metrics]:
    started = time.perf_counter()
    jobs = [dataclasses.replace(job, keep=str(keep) if keep else None) for job in jobs]
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


__all__ = [
    "EVERY",
    "SEEDS",
    "SELECT",
    "Job",
    "Selection",
    "acts",
    "best",
    "chosen_peers",
    "load_recording",
    "planned",
    "run_job",
    "run_suite",
]
