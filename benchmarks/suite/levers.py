"""The delegation levers, one at a time: flower's default against the run without (or with) each lever."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from .metrics import Metrics
from .ranking import COORD, SOLO, money, one, seeds
from .runs import INLINE_UNTIL

LEVERS: tuple[tuple[str, str], ...] = (
    ("flower -lean", "the coordinator's own short prompt; the ablation: the CLI's `claude_code` preset"),
    (
        "flower -keep_warm",
        "the coordinator's cache at 5 minutes, kept warm by pings while it waits on a worker; the ablation: "
        "1 hour, no ping",
    ),
    ("flower -whole_loops", "one mandate per move; the ablation: at most the workload's chunk of runs"),
    ("flower -fold_checks", "a look that checks a worker's work goes in its mandate; the ablation runs it"),
    ("flower -self_glance", "read-only looks run by the coordinator; the ablation delegates them all"),
    (
        "flower +own_steps",
        "the strict wall: every hands-on step delegated; the variant (opt-in `own_steps=1`) lets the "
        "coordinator take a move of one small hands-on step itself",
    ),
    (
        "flower +batch",
        "a mandate each subtask; the variant gives up to four subtasks handed out at once to one worker, "
        "as the rules ask of small items",
    ),
    (
        "flower +inline",
        "the strict wall from the first request; the variant (opt-in `inline_until`, "
        f"{INLINE_UNTIL // 1000}k tokens) has the main thread work hands-on itself until its context "
        "reaches that, then delegate",
    ),
    ("flower -shared_prefix", "every mandate starts with the same line; the ablation sends them as written"),
    ("flower +planning", "no planning tools (`TaskCreate`...) for the coordinator; the ablation offers them"),
    ("flower -report_cap", "a report of 4,000 chars or more is cut to its head; the ablation keeps it whole"),
    ("flower -spill", "a large output goes to a file; the ablation keeps it in the context"),
    ("flower -workbench", "the workbench (scripts, index); the ablation runs without"),
    ("flower -delegation", "the wall itself: the main thread does everything"),
)
"""(ablation, what flower's default does that the ablation does not)."""

BEFORE: dict[str, float] = {"w1": 0.546, "w2": 0.657, "w3": 0.500, "w4": 3.88, "w5": 0.914}
"""flower's all-agent cost with the ideal player before these levers (the previous full run, 20 s a
request, the same cost model): the `claude_code` preset and a 5-minute cache on the coordinator, mandates
chunked by the workload, every look its own step, small exact reports."""

INTRO = """\
Each layer and lever, measured as an ablation: the same workloads, the same cost model, the ideal
player, the run's clock, flower's default against the run that differs by that one thing. *flower ÷ it*
below 1 means flower's default pays. `-` = not run: it cannot change the run there (the workload's table
says why), or the run behind this page left it out (the ranking tables list what ran). The first row is
flower before this page's levers (the previous full run, priced at 20 s a request); the last, the
mandates the coordinator gave. Continuing a worker (`SendMessage`) is not among them: its schema (6.3k
chars) would ride on every coordinator request, the continued worker answers in the background, and the
scripted coordinator here never follows up on a report; see the delegation guide for what the CLI does.
"""


def _cell(rows: Sequence[Metrics], key: str, name: str) -> str:
    mine, other = one(rows, key, COORD), one(rows, key, name)
    if mine is None or other is None:
        return "-"
    return f"{money(other.cost_all)} ({mine.cost_all / other.cost_all:.2f})"


def levers_table(rows: Sequence[Metrics], keys: Sequence[str], *, full: bool = True) -> str:
    """The levers table: per workload, each ablation's cost and flower ÷ it; mandates per workload
    (`full`: with the row of flower before the levers, measured at the full suite's sizes)."""
    head = "| ablation: what it changes | " + " | ".join(k.upper() for k in keys) + " |"
    lines = [head, "|---|" + "---:|" * len(keys)]
    before = [f"{money(BEFORE[k])} ({_ratio(rows, k)})" if k in BEFORE else "-" for k in keys]
    if full:
        label = "flower before the levers, 20 s (flower now at 20 s ÷ it)"
        lines.append(f"| {label} | " + " | ".join(before) + " |")
    now = [money(r.cost_all) if (r := one(rows, k, COORD)) else "-" for k in keys]
    lines.append("| **flower now** | " + " | ".join(now) + " |")
    for name, what in LEVERS:
        lines.append(
            f"| `{name}`: {what} (flower ÷ it) | " + " | ".join(_cell(rows, k, name) for k in keys) + " |"
        )
    mandates = []
    for k in keys:
        mine, chunked = one(rows, k, COORD), one(rows, k, "flower -whole_loops")
        text = str(mine.mandates) if mine else "-"
        mandates.append(f"{text} ({chunked.mandates} chunked)" if mine and chunked else text)
    lines.append("| mandates (one per move) | " + " | ".join(mandates) + " |")
    return INTRO + "\n" + "\n".join(lines) + "\n"


def _ratio(rows: Sequence[Metrics], key: str) -> str:
    mine = one(rows, key, COORD)
    return f"{mine.costs.get('20', mine.cost_all) / BEFORE[key]:.2f}" if mine else "-"


def inline_realistic(
    rows: Sequence[Metrics], key: str, clock: str, strategy: str = COORD
) -> dict[str, Any] | None:
    """flower (or another of its strategies, `strategy`) ÷ `flower -delegation` under the realistic
    player, seed by seed (both finished): `{"median", "max", "seeds"}`, or None where the two never ran
    on the same seed. The ablations (`ratios.ablations`) read the ideal player; this is the same lever
    where the workers report and the clock draws as in real use."""
    mine = {r.player: r for r in seeds(rows, key, strategy) if r.finished}
    found = [
        mine[r.player].costs.get(clock, mine[r.player].cost_all) / r.costs.get(clock, r.cost_all)
        for r in seeds(rows, key, SOLO)
        if r.finished and r.player in mine
    ]
    if not found:
        return None
    return {"median": round(statistics.median(found), 3), "max": round(max(found), 3), "seeds": len(found)}


def _run_kind(row: Metrics) -> str:
    """A row's strategy and player variant (`flower [unbriefed]`), seeds and ideal runs together."""
    return row.strategy + (row.player[row.player.find(" [") :] if " [" in row.player else "")


def earlier_runs(rows: Sequence[Metrics]) -> str:
    """The page's sentence naming the runs priced from recordings made before flower kept its
    coordinator's cache warm (their note says so, `warm.EARLIER`), or "" when there is none."""
    earlier = {(r.workload, _run_kind(r)) for r in rows if "earlier run" in r.note}
    fresh = {(r.workload, _run_kind(r)) for r in rows if "earlier run" not in r.note}
    if not earlier:
        return ""
    keys = dict.fromkeys(k for k, _ in sorted(earlier))
    said = "; ".join(
        f"{key.upper()} "
        + ", ".join(
            f"`{s}`" + (" (some runs)" if (k, s) in fresh else "") for k, s in sorted(earlier) if k == key
        )
        for key in keys
    )
    return (
        "Recordings made by an earlier run of this harness, before flower kept its coordinator's cache "
        "warm, priced here with the marks and pings flower now sends (the requests differ in nothing "
        f"else: seed 1 of W1, W2 and W4, recorded again, priced within $0.0001): {said}."
    )
