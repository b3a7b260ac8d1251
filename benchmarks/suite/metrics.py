"""The metrics of peers.md §4.2, from a `Trace`. Tokens are chars / 4 throughout.

- `R_t`: the main thread's context at each of its requests (tokens); `peak` its maximum;
- `sum_main`: the sum of R_t (main-thread input without caching); `sum_all`: the same over every request
  of every agent, compaction requests included (the multi-agent effect);
- `cost_main` / `cost_all`: cache-weighted input cost (`cache.py`, 5-minute TTL), and `cost_all_1h`;
- `stability`: mean share of the main thread's request read from the cache; `breaks`: main-thread
  requests that did not reuse the previous one although it was still cached;
- probes: answered with 0 extra calls, with exactly 1, with 2 or more, and failed; verdict probes
  (a test's result read right after the run) are counted apart;
- events: compactions and handoffs, each with the main thread's context right after it (% of window).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import cache
from .trace import Trace

WINDOW = 200_000


@dataclass
class Metrics:
    """One row of a table (and one entry of the stored baseline)."""

    workload: str
    strategy: str
    source: str
    finished: bool
    main_turns: int
    all_turns: int
    peak: int
    sum_main: int
    sum_all: int
    cost_main: float
    cost_all: float
    cost_all_1h: float
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
    error: str | None = None
    wall: float = 0.0
    note: str = ""
    series: list[int] = field(default_factory=list)
    """R_t, for the plots (not stored in the baseline)."""

    def stored(self) -> dict[str, object]:
        """The numbers `--check` compares (no series, no wall time)."""
        keep = {k: v for k, v in self.__dict__.items() if k not in ("series", "wall", "error", "note")}
        return keep


def compute(trace: Trace) -> Metrics:
    """The metrics of one trace (cache costs are computed over all its requests in order)."""
    requests = trace.requests
    main = trace.main
    all_costs = cache.costs([(r.time, r.blocks) for r in requests])
    hour_costs = cache.costs([(r.time, r.blocks) for r in requests], ttl=cache.TTL_1H, write=2.0)
    main_costs = [c for c, r in zip(all_costs, requests, strict=True) if r.caller == "main"]
    series = [r.context for r in main]
    sizes = [c.tokens for c in main_costs]
    cached = [c.cached for c in main_costs]
    probes = [p for p in trace.probes if not p.verdict]
    verdicts = [p for p in trace.probes if p.verdict]
    asked, asked_verdicts = (max(len(probes), trace.expected[0]), max(len(verdicts), trace.expected[1]))
    residuals = []
    for _, index in trace.events:
        if index < len(series):
            residuals.append(round(100 * series[index] / WINDOW))
    return Metrics(
        workload=trace.workload,
        strategy=trace.strategy,
        source=trace.source,
        finished=trace.finished,
        main_turns=len(main),
        all_turns=len(requests),
        peak=max(series, default=0),
        sum_main=sum(series),
        sum_all=sum(r.context for r in requests),
        cost_main=round(sum(c.units for c in main_costs)),
        cost_all=round(sum(c.units for c in all_costs)),
        cost_all_1h=round(sum(c.units for c in hour_costs)),
        stability=round(sum(c / s for c, s in zip(cached, sizes, strict=True) if s) / max(1, len(sizes)), 3),
        breaks=len(cache.breaks(sizes, cached, [r.time for r in main])),
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
        error=trace.error,
        wall=round(trace.wall, 1),
        note=trace.note,
        series=series,
    )
