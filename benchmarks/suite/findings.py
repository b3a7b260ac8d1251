"""The "Reading the results" bullets of docs/benchmarks.md: each sentence computed from the rows."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from .metrics import Metrics
from .peers import MASKS
from .ranking import CC, COORD, RAW, SOLO, money, one, seeds


def _median(rows: Sequence[Metrics], key: str, name: str, metric: str = "cost_all") -> float | None:
    found = seeds(rows, key, name)
    return statistics.median(getattr(r, metric) for r in found) if found else None


def _span(values: Sequence[float]) -> str:
    return f"{min(values):.2f}" if len(set(values)) == 1 else f"{min(values):.2f}-{max(values):.2f}"


def _percent(values: Sequence[float]) -> str:
    low, high = round(100 * min(values)), round(100 * max(values))
    return f"{low} %" if low == high else f"{low}-{high} %"


def findings(rows: Sequence[Metrics], keys: Sequence[str], picks: dict[str, tuple[str, str]]) -> str:
    """Bullets with the run's numbers: delegation's price, the peers' cache behaviour, output, billing."""
    out: list[str] = []
    versus_cc = [(k, _median(rows, k, COORD), _median(rows, k, CC)) for k in keys]
    cheaper = [k.upper() for k, mine, cc in versus_cc if mine and cc and mine < cc]
    dearer = [k.upper() for k, mine, cc in versus_cc if mine and cc and mine >= cc]
    if cheaper or dearer:
        out.append(
            "- **Against Claude Code as users get it** (realistic player): flower costs less in "
            f"{', '.join(cheaper) or 'no workload'} and as much or more in {', '.join(dearer) or 'none'}. "
            "The CLI's default carries its own larger tool set and agent list in every request, and in W3 "
            "its `general-purpose` agent starts each investigation with a long prompt of its own."
        )
    solo = [(k, one(rows, k, COORD), one(rows, k, SOLO)) for k in keys]
    ratios = [m.cost_all / s.cost_all for _, m, s in solo if m and s and s.cost_all]
    if ratios:
        worse = sum(r > 1 for r in ratios)
        out.append(
            f"- **What delegating costs.** Without its wall (`flower -delegation`) flower costs less in "
            f"{worse} of {len(ratios)} workloads (flower ÷ it: {_span(ratios)}, ideal player). Every worker "
            "start reads the workers' shared tools and system prompt from the cache (every mandate starts "
            "with the same line, so they send one billing block) but writes its own first turn, and every "
            "report comes back inside the CLI's hand-back frame; the lever-by-lever table below shows what "
            "each measure is worth. The wall buys the smaller main thread and the bounded residue."
        )
    polling = []
    for key in keys:
        raw, worst, chosen = one(rows, key, RAW), one(rows, key, MASKS[0].name), one(rows, key, picks[key][0])
        if raw and worst and chosen and raw.finished:
            polling.append((key, worst.cost_all / raw.cost_all, chosen.cost_all / raw.cost_all))
    if polling:
        out.append(
            "- **Masking under a prompt cache.** With polling 1 (`mask n5 p1`) the masked boundary moves "
            "at every request, and the API caches only at breakpoints: no earlier entry holds the new "
            "prefix, so each request writes the whole history again (÷ `baseline_raw`: "
            f"{_span([p[1] for p in polling])}). Polling batches the moves; the best setting costs "
            f"{_span([p[2] for p in polling])}x `baseline_raw` where that one finishes."
        )
    acted = []
    for key in keys:
        clear, raw = one(rows, key, picks[key][1]), one(rows, key, RAW)
        if clear and raw and raw.finished and clear.peak < raw.peak:
            acted.append(f"{key.upper()} (at {clear.cost_all / raw.cost_all:.2f}x its cost)")
    out.append(
        "- **`clear_tool_uses` acts only past its trigger** (100k by default, 50k tuned) and its clears are "
        "batched (a result cleared stays cleared), so it lowers the main thread's peak without rewriting "
        f"the history at every turn: it did so in {', '.join(acted) or 'no workload'} against "
        "`baseline_raw`; behind the CLI's compaction it finishes the marathon."
    )
    shares = []
    for key in keys:
        mine, cc = seeds(rows, key, COORD), seeds(rows, key, CC)
        if mine and cc:
            share = statistics.median(r.cost_output / r.cost_all for r in mine if r.cost_all)
            theirs = statistics.median(r.cost_output / r.cost_all for r in cc if r.cost_all)
            shares.append((share, theirs))
    if shares:
        out.append(
            "- **Output is priced.** With the realistic player's prose, output is "
            f"{_percent([s[0] for s in shares])} of flower's cost and "
            f"{_percent([s[1] for s in shares])} of the CLI default's: flower sends more requests "
            "(a coordinator turn and a worker's turns per delegation), each with its own output."
        )
    billing = [(one(rows, k, COORD)) for k in keys]
    drops = [r.cost_all_ignored / r.cost_all - 1 for r in billing if r and r.cost_all]
    if drops:
        out.append(
            f"- **The billing block** is worth {_percent([-d for d in drops])} of flower's cost "
            "(ideal player), with every mandate starting with the same line: priced as sent, workers with "
            "different billing blocks never read each other's system prompt and tools from the cache; "
            "ignored, they do. Without the shared line (`flower -shared_prefix`) it is worth more."
        )
    return "\n".join(out) + "\n"


__all__ = ["findings", "money"]
