"""The delegation levers, one at a time: flower's default against the run without (or with) each lever."""

from __future__ import annotations

from collections.abc import Sequence

from .metrics import Metrics
from .ranking import COORD, money, one

LEVERS: tuple[tuple[str, str], ...] = (
    ("flower -shared_prefix", "every mandate starts with the same line; the ablation sends them as written"),
    ("flower +planning", "no planning tools (`TaskCreate`...) for the coordinator; the ablation offers them"),
    ("flower +batching", "at most the workload's chunk of runs a mandate; the ablation: one per move"),
    ("flower -self_glance", "read-only looks run by the coordinator; the ablation delegates them too"),
    ("flower -delegation", "the wall itself: the main thread does everything"),
)
"""(ablation, what flower's default does that the ablation does not)."""

BEFORE: dict[str, float] = {"w1": 0.683, "w2": 0.836, "w3": 0.607, "w4": 4.09, "w5": 1.06}
"""flower's all-agent cost with the ideal player before these levers (the previous full run, same cost
model): every worker had its own billing block, the planning tools were on."""

INTRO = """\
Each lever of the cost of delegating, measured as an ablation: the same workloads, the same cost model,
the ideal player, flower's default against the run that differs by that lever alone. *flower ÷ it* below
1 means the lever pays. `-` = not run: that lever cannot change the run there (the workload's table says
why). The first row is flower before these levers (the previous full run); the last, the mandates the
coordinator gave. Continuing a worker (`SendMessage`) is not among them: its schema (6.3k chars) would
ride on every coordinator request, the continued worker answers in the background, and the scripted
coordinator here never follows up on a report; see the delegation guide for what the CLI does.
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
        lines.append("| flower before the levers (flower ÷ it) | " + " | ".join(before) + " |")
    now = [money(r.cost_all) if (r := one(rows, k, COORD)) else "-" for k in keys]
    lines.append("| **flower now** | " + " | ".join(now) + " |")
    for name, what in LEVERS:
        lines.append(
            f"| `{name}`: {what} (flower ÷ it) | " + " | ".join(_cell(rows, k, name) for k in keys) + " |"
        )
    mandates = []
    for k in keys:
        mine, batched = one(rows, k, COORD), one(rows, k, "flower +batching")
        text = str(mine.mandates) if mine else "-"
        mandates.append(f"{text} ({batched.mandates} batched)" if mine and batched else text)
    lines.append("| mandates (one per move) | " + " | ".join(mandates) + " |")
    return INTRO + "\n" + "\n".join(lines) + "\n"


def _ratio(rows: Sequence[Metrics], key: str) -> str:
    mine = one(rows, key, COORD)
    return f"{mine.cost_all / BEFORE[key]:.2f}" if mine else "-"
