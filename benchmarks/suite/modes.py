"""The page's sections on flower's two other modes and on small tasks.

- **Small tasks** (`small_section`): a `--quick` run's rows (one realistic seed of the small workloads),
  flower and its opt-in inline start (`flower +inline`) each ÷ the quick pool's cheapest peer, on both
  price rows.
- **Starting inline, and no workers at all** (`modes_section`): at full scale, `flower +inline` ÷ the
  same peer as flower, and flower and `flower +inline` ÷ `flower -delegation` (the same layers, every
  step done by the main thread), seed by seed: what a delegation costs against doing the item inline.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import pricing
from .levers import inline_realistic
from .metrics import Metrics
from .prose import MODES, SMALL
from .ranking import COORD, SOLO
from .ratios import HEADLINE_CLOCKS, NAMES, price_table
from .runs import INLINE


def own_table(rows: Sequence[Metrics], keys: Sequence[str], strategies: Sequence[str]) -> str:
    """Each of `strategies` ÷ `flower -delegation` on each price row at the headline clocks, seed by seed
    (median (largest); `levers.inline_realistic`)."""
    heads = " | ".join(k.upper() for k in keys)
    lines = [f"| strategy | price row | clock | {heads} |", "|---|---|---|" + "---:|" * len(keys)]
    for strategy in strategies:
        for row in pricing.ROWS:
            for clock in HEADLINE_CLOCKS:
                found = [inline_realistic(rows, k, pricing.key(clock, row), strategy) for k in keys]
                cells = ["-" if f is None else f"{f['median']:.2f} ({f['max']:.2f})" for f in found]
                lines.append(f"| {strategy} | {row.name} | {NAMES[clock]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _ran(rows: Sequence[Metrics], strategy: str) -> bool:
    """Whether the realistic player ran `strategy` in any workload."""
    return any(r.strategy == strategy and r.player.startswith("realistic") for r in rows)


def small_section(rows: Sequence[Metrics], keys: Sequence[str]) -> str:
    """The small tasks: flower, then `flower +inline` when it ran, each ÷ the quick pool's cheapest peer."""
    if not rows:
        return ""
    parts = ["## Small tasks\n", SMALL, "**flower** ÷ the cheapest peer:\n"]
    parts.append(price_table(rows, keys, sensitivity=False))
    if _ran(rows, INLINE):
        parts += [
            "",
            f"**`{INLINE}`** ÷ the same peer:\n",
            price_table(rows, keys, sensitivity=False, strategy=INLINE, peers=False),
        ]
    return "\n".join(parts) + "\n"


def modes_section(rows: Sequence[Metrics], keys: Sequence[str]) -> str:
    """At full scale: `flower +inline` ÷ the cheapest fair peer, and flower (and `flower +inline`) ÷
    `flower -delegation`, when the realistic player ran them."""
    parts = ["## Starting inline, and no workers at all\n", MODES]
    if _ran(rows, INLINE):
        parts += [
            f"**`{INLINE}`** ÷ the cheapest fair peer (the peer of flower's table above):\n",
            price_table(rows, keys, sensitivity=False, strategy=INLINE, peers=False),
            "",
        ]
    mine = [s for s in (COORD, INLINE) if _ran(rows, s)]
    if _ran(rows, SOLO) and mine:
        parts += ["Each ÷ `flower -delegation`, seed by seed:\n", own_table(rows, keys, mine), ""]
    return "\n".join(parts) + "\n"


__all__ = ["modes_section", "own_table", "small_section"]
