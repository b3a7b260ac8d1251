"""The suite's metrics, from a `Trace`. Tokens are chars / 4 throughout.

- `R_t`: the main thread's context at each of its requests (tokens); `peak` its maximum;
- `sum_main`: the sum of R_t (main-thread input without caching); `sum_all`: the same over every request
  of every agent, compaction requests included (the multi-agent effect);
- `cost_main` / `cost_all`: dollars under the run's clock (`flower._cost`: input, cache reads, cache writes
  of each lifetime the marks asked for, and output, at the model's prices, billing block as sent), split
  into `cost_input` / `cost_read` / `cost_write` / `cost_output`; `cost_all_ignored` with the billing
  block ignored by the cache; `costs` the all-agent dollars under every clock (`timing.CLOCKS`);
- `waits`: how long the coordinator waited on its delegations (median, 90th percentile, share over the
  5-minute cache lifetime);
- `stability`: mean share of the main thread's request read from the cache; `breaks`: main-thread
  requests that did not reuse the previous one although it was still cached;
- probes: answered with 0 extra calls, with exactly 1, with 2 or more, and failed; verdict probes
  (a test's result read right after the run) are counted apart;
- events: compactions and handoffs, each with the main thread's context right after it (% of window).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from flower._cost import TTL_5M, price

from .realistic import READS_CUT
from .trace import Req, Trace

WINDOW = 200_000


@dataclass
class Metrics:
    """One row of a table (and one entry of the stored baseline)."""

    workload: str
    strategy: str
    family: str
    """`baseline`, `peer` or `flower`."""
    finished: bool
    main_turns: int
    all_turns: int
    peak: int
    sum_main: int
    sum_all: int
    cost_main: float
    cost_all: float
    cost_all_ignored: float
    cost_input: float
    cost_read: float
    cost_write: float
    cost_output: float
    output_tokens: int
    stability: float
    breaks: int
    probes: int
    extra_calls: int
    at_once: int
    one_more: int
    more: int
    failed: int
    verdicts: int
    verdicts_at_once: int
    verdicts_lost: int
    events: int
    residuals: list[int] = field(default_factory=list)
    staleness: int | None = None
    stale_trusted: int = 0
    residue_peak: int = 0
    residue_end: int = 0
    retries: int = 0
    skipped: int = 0
    reuse_writes: int = 0
    reuse_runs: int = 0
    mandates: int = 0
    """Agent calls of the main thread."""
    player: str = "ideal"
    """`ideal`, or `realistic #k` (k: its random seed)."""
    size: int = 0
    """0 at the suite's size; else the scaling table's (outputs in W1, investigations in W3)."""
    error: str | None = None
    wall: float = 0.0
    cpu: float = 0.0
    """CPU seconds the run took (the suite's process and the CLI with its tools)."""
    cli_gap: float = 0.0
    """The largest gap between transcript entries a resumed plain session showed the CLI (seconds)."""
    note: str = ""
    clock: str = "calibrated"
    """The clock the run's numbers are priced under (`timing.CLOCKS`)."""
    costs: dict[str, float] = field(default_factory=dict)
    """All-agent dollars under every clock."""
    bounds: dict[str, dict[str, float]] = field(default_factory=dict)
    """Dollars of each replay of `bounds.VARIANTS` under each of `bounds.CLOCKS` (`Trace.bounds`)."""
    floor: float = 0.0
    """Dollars of this run with nothing paid twice (`floor.py`), under no clock: the lower bound of a
    workload is the cheapest of its runs' floors."""
    wait_p50: float = 0.0
    """Median seconds the coordinator waited on a delegation, under `clock` (0: no delegation)."""
    wait_p90: float = 0.0
    waits_over_5m: int = 0
    """Delegations the coordinator waited on for more than 5 minutes (a 5-minute cache lapses)."""
    report_chars: int = 0
    """Characters of the workers' final reports, as they reached the main thread."""
    reads_cut: float = READS_CUT
    """How often the coordinator was to Read a report flower's cap cut (`Behaviour.reads_cut`)."""
    cut_reads: int = 0
    """Cut reports the coordinator Read whole."""
    series: list[int] = field(default_factory=list)
    """R_t, for the plots (not stored in the baseline)."""

    def stored(self) -> dict[str, object]:
        """The numbers `--check` compares (no series, no wall time)."""
        skip = ("series", "wall", "cpu", "cli_gap", "error", "note")
        keep = {k: v for k, v in self.__dict__.items() if k not in skip}
        return keep


def _dollars(reqs: list[Req], which: str = "usage") -> float:
    total = 0.0
    for model in {r.model for r in reqs}:
        total += price([getattr(r, which) for r in reqs if r.model == model], model=model).total
    return round(total, 4)


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    low = int(k)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (k - low)


def breaks(main: list[Req]) -> int:
    """Main-thread requests that did not read the whole previous request although it was still cached
    (within 5 minutes of it: the shortest lifetime a mark asks for)."""
    count = 0
    for before, now in itertools.pairwise(main):
        if now.time - before.time <= TTL_5M and now.usage.cache_read < before.usage.context:
            count += 1
    return count


def compute(trace: Trace) -> Metrics:
    """The metrics of one trace."""
    requests = trace.requests
    main = trace.main
    series = [r.context for r in main]
    probes = [p for p in trace.probes if not p.verdict]
    verdicts = [p for p in trace.probes if p.verdict]
    asked, asked_verdicts = (max(len(probes), trace.expected[0]), max(len(verdicts), trace.expected[1]))
    residuals = []
    for _, index in trace.events:
        if index < len(series):
            residuals.append(round(100 * series[index] / WINDOW))
    split = None
    for model in {r.model for r in requests}:
        part = price([r.usage for r in requests if r.model == model], model=model)
        split = part if split is None else split + part
    return Metrics(
        workload=trace.workload,
        strategy=trace.strategy,
        family=trace.family,
        finished=trace.finished,
        main_turns=len(main),
        all_turns=len(requests),
        peak=max(series, default=0),
        sum_main=sum(series),
        sum_all=sum(r.context for r in requests),
        cost_main=_dollars(main),
        cost_all=_dollars(requests),
        cost_all_ignored=_dollars(requests, "ignored"),
        cost_input=round(split.input, 4) if split else 0.0,
        cost_read=round(split.cache_read, 4) if split else 0.0,
        cost_write=round(split.cache_write, 4) if split else 0.0,
        cost_output=round(split.output, 4) if split else 0.0,
        output_tokens=split.output_tokens if split else 0,
        stability=round(
            sum(r.usage.cache_read / r.usage.context for r in main if r.usage.context) / max(1, len(main)), 3
        ),
        breaks=breaks(main),
        probes=asked,
        extra_calls=sum(p.extra for p in trace.probes if p.answered),
        at_once=sum(p.answered and p.extra == 0 for p in probes),
        one_more=sum(p.answered and p.extra == 1 for p in probes),
        more=sum(p.answered and p.extra >= 2 for p in probes),
        failed=asked - sum(p.answered for p in probes),
        verdicts=asked_verdicts,
        verdicts_at_once=sum(p.answered and p.extra == 0 for p in verdicts),
        verdicts_lost=asked_verdicts - sum(p.answered for p in verdicts),
        events=len(trace.events),
        residuals=residuals,
        staleness=trace.staleness,
        stale_trusted=trace.state_checks.count("stale"),
        residue_peak=max((r.residue for r in main), default=0),
        residue_end=main[-1].residue if main else 0,
        retries=trace.retries,
        skipped=trace.skipped,
        reuse_writes=trace.reuse_writes,
        reuse_runs=trace.reuse_runs,
        mandates=trace.mandates,
        player=trace.player,
        size=trace.size,
        error=trace.error,
        wall=round(trace.wall, 1),
        cli_gap=round(trace.cli_gap),
        note=trace.note,
        clock=trace.clock,
        costs=dict(trace.costs),
        bounds={clock: dict(found) for clock, found in trace.bounds.items()},
        floor=trace.floor,
        wait_p50=round(_quantile(trace.waits, 0.5), 1),
        wait_p90=round(_quantile(trace.waits, 0.9), 1),
        waits_over_5m=sum(w > TTL_5M for w in trace.waits),
        report_chars=trace.report_chars,
        reads_cut=trace.reads_cut,
        cut_reads=trace.cut_reads,
        series=series,
    )
