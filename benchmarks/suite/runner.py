"""Plan and run the suite: every run is a job (workload, strategy, player, size) in a process pool.

1. the ideal player, every strategy of every workload (the peers' sweep and flower's ablations);
2. the realistic player, five seeds (one in `--quick`), on `baseline_raw` (with the `claude_code` preset
   and with the SDK's own prompt), the CLI's default, flower, `flower -delegation` and `flower +inline`;
   flower again with workers that ignore the report rule (`unbriefed`, the pessimistic row; the CLI's
   default too in W3, where it delegates) and with a coordinator that Reads half the reports its cap cut
   (`reads 0.5`);
   and, on a held-out seed (`SELECT`), every peer setting of the sweep and of the `clear_tool_uses`
   sweep (`peers.CLEAR_SWEEP`);
3. once those are in: each peer at its best (the setting of its sweep that cost least with the held-out
   seed in that workload, under the run's clock, among those that finished) on the five seeds, with the
   preset and with the SDK's prompt (the latter on the held-out seed too); and the scaling table (W1 and
   W3 at two more sizes, the ideal player).
Every plain run is also priced with a 1-hour cache on its main thread (`replays.py`): a peer's variants
are its setting, its prompt and its cache lifetime, and the cheapest of all of them is the one flower is
measured against.
`--quick` runs flower and a few ablations with the ideal player, and one realistic seed of flower, the
baselines and one setting of each peer. A `Selection` keeps some of those runs (`--strategies`,
`--no-scaling`, `--seeds`): e.g. flower's own after a change to flower, to be priced beside the peers' kept
recordings; or, with strategies and seeds both given, just those strategies by the realistic player at
those seeds (a kept recording's missing seeds); `side` keeps only the peers' runs or only flower's (the
peers' do not depend on flower's code). With `resume`, a job whose recording is already kept is priced
from it instead of run again.
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

from .metrics import Metrics
from .peers import CLEAR_SWEEP, CLEARS, MASKS
from .realistic import READS_CUT, Behaviour, Reports
from .replays import priced
from .runs import RAW, base_name, held_out, idle_layers, named, sdk_prompt, strategies_for
from .workloads import QUICK_SCALES, SCALES, workload

Progress = Callable[[str], None]
SEEDS = (1, 2, 3, 4, 5)
SELECT = 0
"""The held-out realistic seed each peer's best setting is chosen on (never one of `SEEDS`)."""
REALISTIC = (
    "baseline_raw",
    "baseline_raw (SDK prompt)",
    "baseline_cc_default",
    "flower",
    "flower -delegation",
    "flower +inline",
)
"""Run by the realistic player, with each peer at its best."""
QUICK_REALISTIC = (
    "baseline_raw",
    "baseline_raw (SDK prompt)",
    "baseline_cc_default",
    "flower",
    "mask n10 p10",
    "mask n10 p10 (SDK prompt)",
    "clear_tool_uses tuned",
    "clear_tool_uses tuned (SDK prompt)",
)
"""Run by the realistic player in `--quick`, at one seed (the peers at one setting each: no choice), each
plain one with the preset and with the SDK's own prompt (the cheapest peers at full scale)."""
UNBRIEFED = ("flower", "baseline_cc_default")
"""Run again with workers that ignore the report rule (`Behaviour.reports`), where they delegate."""
READS_HALF = 0.5
"""The `--reads-cut` sensitivity row: flower's coordinator Reads half the reports its cap cut."""
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
    reads_cut: float = READS_CUT
    """How often the realistic coordinator Reads a cut report's saved whole (`Behaviour.reads_cut`)."""
    reports: Reports = "project"
    """How long the realistic workers' reports run (`Behaviour.reports`)."""
    resume: bool = False
    """Price the recording already kept for this job instead of running it (when there is one)."""

    @property
    def behaviour(self) -> Behaviour:
        """The player of this run."""
        return Behaviour(self.player, self.seed, self.reads_cut, self.reports)

    @property
    def kept(self) -> str:
        """The kept recording's path under `keep` (`w1/flower--realistic2-unbriefed.pkl.gz`)."""
        variant = self.behaviour.variant.replace(", ", "-").replace(" ", "")
        tag = f"-{variant}" if variant else ""
        name = f"{self.strategy}--{self.player}{self.seed}{tag}{f'@{self.size}' if self.size else ''}"
        return f"{self.workload}/{name.replace(' ', '_')}.pkl.gz"

    @property
    def flower(self) -> bool:
        """One of flower's runs (its full run or an ablation), whose recording depends on flower's code."""
        return self.strategy.startswith("flower")

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
    side: str | None = None
    """`peers` (every run that is not flower's), `flower` (flower's and its ablations'), or None: both."""

    @property
    def reruns(self) -> bool:
        """Only the named strategies' realistic runs at the named seeds."""
        return self.strategies is not None and self.seeds is not None

    def __call__(self, job: Job) -> bool:
        if self.side is not None and job.flower != (self.side == "flower"):
            return False
        named_ = self.strategies is None or job.strategy in self.strategies
        realistic = job.player == "realistic" and job.seed != SELECT
        if self.reruns:
            return named_ and realistic and job.seed in (self.seeds or ()) and job.size is None
        seeded = self.seeds is None or not realistic or job.seed in self.seeds
        return named_ and seeded and (self.scaling or job.size is None)


EVERY = Selection()


def run_job(job: Job) -> list[Metrics]:
    """Record one run (or, `job.resume`, load its kept recording) and price it (in a worker process): its
    row, and a plain run's 1-hour-cache replay (`replays.priced`)."""
    from .record import record

    target = Path(job.keep) / job.kept if job.keep else None
    before = _cpu()
    if job.resume and target is not None and target.exists():
        rec = load_recording(target)
    else:
        w = workload(job.workload, job.quick, job.size)
        strategy = named(w, job.strategy)
        rec = anyio.run(lambda: record(w, strategy, job.behaviour))
        if target is not None:
            _keep(rec, target)
    rows = priced(rec, size=job.size or 0, clock=job.clock)
    rows[0].cpu = round(_cpu() - before, 1)
    return rows


def _keep(rec: object, target: Path) -> None:
    """Pickle a recording (every request body as sent), to be priced again without running; written to a
    temporary name first, so an interrupted write never leaves a recording `resume` would trust."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    with gzip.open(partial, "wb", compresslevel=3) as handle:
        pickle.dump(rec, handle, protocol=pickle.HIGHEST_PROTOCOL)
    partial.replace(target)


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
            r
            for r in rows
            if r.workload == key
            and r.strategy in wanted
            and r.player.startswith(player)
            and "[" not in r.player
        ]
    if not pool:
        return next(iter(names))
    return min(pool, key=lambda r: (not r.finished, r.cost_all)).strategy


def chosen_peers(rows: Sequence[Metrics], keys: Iterable[str]) -> dict[str, tuple[str, str]]:
    """Per workload: (best masking setting, best `clear_tool_uses` setting, its sweep included)."""
    masks, clears = [p.name for p in MASKS], [p.name for p in (*CLEARS, *CLEAR_SWEEP)]
    return {key: (best(rows, key, masks), best(rows, key, clears)) for key in keys}


def _realistic(key: str, name: str, seed: int, clock: str, reads_cut: float, **more: Any) -> Job:
    """A full-scale realistic run; `reads_cut` reaches flower's runs only (a plain run reads no cut
    report, and a player unlike the default one would not pair with the others)."""
    cut = reads_cut if name.startswith("flower") else READS_CUT
    return Job(key, name, False, "realistic", seed, clock=clock, reads_cut=cut, **more)


def _first(key: str, quick: bool, clock: str, previews: bool, reads_cut: float = READS_CUT) -> list[Job]:
    """The jobs that need no choice: the ideal player's strategies, the realistic seeds of `REALISTIC`
    (quick: of `QUICK_REALISTIC`), the pessimistic and `reads 0.5` rows, the held-out seed of every peer
    setting, the scaling runs."""
    w = workload(key, quick)
    jobs = [Job(key, s.name, quick, clock=clock) for s in strategies_for(w, quick=quick, previews=previews)]
    if quick:
        cut = {n: reads_cut if n.startswith("flower") else READS_CUT for n in QUICK_REALISTIC}
        return jobs + [
            Job(key, n, quick, "realistic", 1, clock=clock, reads_cut=cut[n]) for n in QUICK_REALISTIC
        ]
    jobs += [_realistic(key, n, seed, clock, reads_cut) for seed in SEEDS for n in REALISTIC]
    for name in UNBRIEFED:
        if name.startswith("flower") or named(w, name).delegated:
            jobs += [_realistic(key, name, seed, clock, reads_cut, reports="unbriefed") for seed in SEEDS]
    jobs += [_realistic(key, "flower", seed, clock, READS_HALF) for seed in SEEDS if reads_cut != READS_HALF]
    held = [RAW, sdk_prompt(RAW), *(s for s in held_out(w) if acts(key, s.name))]
    jobs += [_realistic(key, s.name, SELECT, clock, reads_cut) for s in held]
    for size in SCALES.get(key, ())[::2]:  # the middle size is the suite's own
        jobs += [Job(key, name, quick, size=size, clock=clock) for name in SCALED]
    return jobs


def _second(key: str, picks: tuple[str, str], clock: str) -> list[Job]:
    """The chosen peer settings on the five seeds and at the scaling sizes, and with the SDK's default
    prompt on the five seeds and the held-out one."""
    w = workload(key, False)
    jobs = [_realistic(key, n, seed, clock, READS_CUT) for seed in SEEDS for n in picks]
    sdk = [sdk_prompt(named(w, n)).name for n in picks]
    jobs += [_realistic(key, n, seed, clock, READS_CUT) for seed in (SELECT, *SEEDS) for n in sdk]
    for size in SCALES.get(key, ())[::2]:
        jobs += [Job(key, name, False, size=size, clock=clock) for name in picks]
    return jobs


def acts(key: str, name: str, quick: bool = False) -> bool:
    """Whether strategy `name` is one the suite can run in workload `key` and it can act there."""
    w = workload(key, quick)
    try:
        named(w, name)
    except KeyError:
        return False
    return base_name(name) not in idle_layers(w)


def _reruns(key: str, quick: bool, clock: str, select: Selection, reads_cut: float = READS_CUT) -> list[Job]:
    """`select.reruns`: its strategies that act in workload `key`, by the realistic player at its seeds."""
    names = [name for name in sorted(select.strategies or ()) if acts(key, name, quick)]
    seeds = sorted(select.seeds or ())
    cut = {n: reads_cut if n.startswith("flower") else READS_CUT for n in names}
    return [
        Job(key, name, quick, "realistic", seed, clock=clock, reads_cut=cut[name])
        for seed in seeds
        for name in names
    ]


def planned(
    keys: Sequence[str],
    *,
    quick: bool,
    clock: str,
    previews: bool = False,
    select: Selection = EVERY,
    reads_cut: float = READS_CUT,
) -> list[Job]:
    """The runs that need no choice (the suite's first round) for these workloads, as `select` keeps them;
    with `select.reruns`, every run to make (there is no second round)."""
    if select.reruns:
        return [job for k in keys for job in _reruns(k, quick, clock, select, reads_cut)]
    return [job for k in keys for job in _first(k, quick, clock, previews, reads_cut) if select(job)]


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
    reads_cut: float = READS_CUT,
    resume: bool = False,
) -> list[Metrics]:
    """Every row of the suite for these workloads under `clock` that `select` keeps, `jobs` runs at a
    time (`previews`: W1's preview sweep; `keep`: a directory for the recordings; `reads_cut`: how often
    flower's realistic coordinator Reads a cut report's saved whole; `resume`: a job whose recording is
    kept is priced from it, not run again)."""
    first = planned(keys, quick=quick, clock=clock, previews=previews, select=select, reads_cut=reads_cut)
    rows: list[Metrics] = []
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        rows += _drain(pool, first, progress, keep, resume, "first round")
        if quick or select.reruns:
            return rows
        picks = chosen_peers(rows, keys)
        second = [job for k in keys for job in _second(k, picks[k], clock) if select(job)]
        for key, (mask, clear) in picks.items():
            if any(job.workload == key for job in second):
                progress(f"  {key}: best masking {mask}, best clear_tool_uses {clear}")
        rows += _drain(pool, second, progress, keep, resume, "second round")
    return rows


def _drain(
    pool: ProcessPoolExecutor,
    jobs: Sequence[Job],
    progress: Progress,
    keep: Path | None = None,
    resume: bool = False,
    stage: str = "",
) -> list[Metrics]:
    started = time.perf_counter()
    jobs = [dataclasses.replace(job, keep=str(keep) if keep else None, resume=resume) for job in jobs]
    futures: dict[Future[list[Metrics]], Job] = {
        pool.submit(run_job, job): job for job in sorted(jobs, key=lambda j: -j.weight)
    }
    kept = sum(1 for job in jobs if resume and keep is not None and (keep / job.kept).exists())
    progress(f"{stage}: {len(jobs)} runs" + (f" ({kept} already kept, priced again)" if kept else ""))
    out: list[Metrics] = []
    for done, future in enumerate(as_completed(futures), start=1):
        job = futures[future]
        found = future.result()
        out += found
        row = found[0]
        where = f"{job.workload}{f' @{job.size}' if job.size else ''}"
        progress(
            f"  [{done}/{len(jobs)}] {where:8s} {job.strategy:34s} {row.player:12s} {row.wall:5.1f}s "
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
