"""flower against the cheapest fair peer, under each clock; flower against its ablations.

- **The cheapest fair peer** of a workload: the non-flower strategy (`baseline_raw`, the CLI's default,
  each peer at its best, each with the SDK's own prompt where it ran so and with a 1-hour cache) that
  finished on every seed and cost least, median over the seeds, under the clock in question (realistic
  player). `scope="preset"` keeps the peers as they ran before these variants (the `claude_code` preset,
  the CLI's 5 minutes): the sensitivity row.
- **flower ÷ it**: per seed (the same seed draws the same choices and the same clock for both), then the
  median and the largest of the per-seed ratios.
- **Ablations**: flower's cost ÷ each ablation's, the ideal player (below 1: the layer or lever pays).
- **The lower bound** (`floor.py`): per seed, the cheapest of every run's floor; flower ÷ it.

Every ratio is also given on each price row (`pricing.ROWS`: Sonnet 4.6 and the CLI's default model,
each at its own tokens per character) and on the characters / 4 sensitivity row (`pricing.SENSITIVITY`),
at the headline clocks: `price_table` and `summary()["price"]`.

`summary()` is what `run_suite.py --json` writes.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

from . import levers, pricing
from .bounds import CLOCKS as BOUND_CLOCKS
from .bounds import VARIANTS
from .metrics import Metrics
from .prose import BOUNDS, CLOCK, WHY_LOSSES
from .ranking import COORD, one, seeds, variant
from .realistic import READS_CUT
from .runs import AS_RUN, INLINE, ONE_HOUR, SDK
from .timing import CLOCKS, TABLES

NAMES = {
    "10": "10 s",
    "20": "20 s",
    "35": "35 s",
    "60": "60 s",
    "calibrated": "calibrated",
    "stress": "stress",
}
"""How each clock is named in the tables."""


def _cost(row: Metrics, clock: str) -> float:
    return row.costs.get(clock, row.cost_all)


Scope = str
"""`all`: every peer variant competes; `preset`: only the peers as configured before the variants (the
`claude_code` preset, the CLI's own 5-minute cache)."""


def _fair(row: Metrics, scope: Scope = "all") -> bool:
    if row.family == "flower" or row.strategy.endswith(AS_RUN):  # a replay's check, not a strategy
        return False
    return scope == "all" or not (SDK in row.strategy or row.strategy.endswith(ONE_HOUR))


def cheapest_peer(rows: Sequence[Metrics], key: str, clock: str, *, scope: Scope = "all") -> str | None:
    """The cheapest non-flower strategy within `scope` that finished on every seed, by the median of its
    seeds' cost under `clock`."""
    names = {r.strategy for r in rows if r.workload == key and _fair(r, scope)}
    pool = []
    for name in names:
        found = seeds(rows, key, name)
        if found and all(r.finished for r in found):
            pool.append((statistics.median(_cost(r, clock) for r in found), name))
    return min(pool)[1] if pool else None


def _paired(
    rows: Sequence[Metrics],
    key: str,
    clock: str,
    mine: Callable[[Metrics], float | None],
    *,
    scope: Scope = "all",
    strategy: str = COORD,
) -> tuple[str, list[Metrics], list[float]] | None:
    """The cheapest fair peer under `clock`, `strategy`'s seeds it ran too (with a cost `mine` gives) and
    their per-seed ratios `mine(seed) ÷ the peer's cost`, or None when there is no peer."""
    peer = cheapest_peer(rows, key, clock, scope=scope)
    if peer is None:
        return None
    theirs = {r.player: r for r in seeds(rows, key, peer)}
    costs = [
        (m, mine(m))
        for m in seeds(rows, key, strategy)
        if m.player in theirs and _cost(theirs[m.player], clock)
    ]
    found = [(m, cost) for m, cost in costs if cost is not None]
    return peer, [m for m, _ in found], [cost / _cost(theirs[m.player], clock) for m, cost in found]


def versus(
    rows: Sequence[Metrics], key: str, clock: str, *, scope: Scope = "all", strategy: str = COORD
) -> dict[str, Any] | None:
    """flower (or another of its strategies, `strategy`) ÷ the cheapest fair peer under `clock`:
    `{"median", "max", "peer", "seeds", "reads_cut"}` (per-seed ratios; how often flower's coordinator
    Read a cut report, `Behaviour.reads_cut`: one share, or the sorted shares when its seeds differ), or
    None when either side is missing."""
    paired = _paired(rows, key, clock, lambda m: _cost(m, clock), scope=scope, strategy=strategy)
    if paired is None or not paired[2]:
        return None
    peer, mine, ratios = paired
    shares = sorted({m.reads_cut for m in mine})
    return {
        "median": round(statistics.median(ratios), 3),
        "max": round(max(ratios), 3),
        "peer": peer,
        "seeds": [round(r, 3) for r in ratios],
        "reads_cut": shares[0] if len(shares) == 1 else shares,
    }


def replayed(rows: Sequence[Metrics], key: str, clock: str, variant: str) -> dict[str, Any] | None:
    """flower's replay `variant` (`bounds.VARIANTS`) ÷ the cheapest fair peer under `clock`, paired by
    seed as `versus`: `{"median", "max"}`, or None when no replay was priced."""
    paired = _paired(rows, key, clock, lambda m: m.bounds.get(clock, {}).get(variant) or None)
    if paired is None or not paired[2]:
        return None
    ratios = paired[2]
    return {"median": round(statistics.median(ratios), 3), "max": round(max(ratios), 3)}


def _floored(row: Metrics) -> bool:
    """A run whose floor bounds the workload: at the suite's size, and finished (one that stopped early,
    at the window, did less of the work)."""
    return bool(row.floor) and not row.size and row.finished


def lower_bound(rows: Sequence[Metrics], key: str) -> dict[str, Any] | None:
    """flower ÷ the workload's lower bound (`floor.py`): per seed of the realistic player, the cheapest
    floor of every finished run of that seed; `{"median", "max", "ideal", "by"}` (`ideal`: the ideal
    player's run ÷ the cheapest floor of the ideal runs; `by`: whose run's floor the bound was, most
    often), or None."""
    ratios, by = [], []
    for mine in seeds(rows, key, COORD):
        pool = [r for r in rows if r.workload == key and r.player == mine.player and _floored(r)]
        if pool and mine.cost_all:
            least = min(pool, key=lambda r: r.floor)
            ratios.append(mine.cost_all / least.floor)
            by.append(least.strategy)
    ideal = one(rows, key, COORD)
    pool = [r for r in rows if r.workload == key and r.player == "ideal" and _floored(r)]
    if not ratios and not (ideal and pool):
        return None
    out: dict[str, Any] = {}
    if ratios:
        out |= {"median": round(statistics.median(ratios), 3), "max": round(max(ratios), 3)}
        out["by"] = max(set(by), key=by.count)
    if ideal and pool:
        out["ideal"] = round(ideal.cost_all / min(r.floor for r in pool), 3)
    return out


def bounds_table(rows: Sequence[Metrics], keys: Sequence[str]) -> str:
    """flower ÷ the cheapest fair peer as run and under each replay (`bounds`), at the bounds' clocks."""
    named = {
        "5m": "every coordinator write at 5 minutes",
        "warm": "5 minutes, kept warm while the coordinator waits",
        "short": "cut reports written only as long as their head",
    }
    lines = [
        "| clock | flower | " + " | ".join(k.upper() for k in keys) + " |",
        "|---|---|" + "---:|" * len(keys),
    ]
    for clock in BOUND_CLOCKS:
        lines.append(
            f"| {NAMES[clock]} | as run | " + " | ".join(_cell(versus(rows, k, clock)) for k in keys) + " |"
        )
        for replay in VARIANTS:
            cells = [_cell(replayed(rows, k, clock, replay)) for k in keys]
            lines.append(f"| {NAMES[clock]} | {named[replay]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ablations(rows: Sequence[Metrics], key: str, clock: str) -> dict[str, float]:
    """flower ÷ each ablation that ran in `key` (ideal player), keyed `-delegation`, `-lean`..."""
    mine = one(rows, key, COORD)
    if mine is None:
        return {}
    out: dict[str, float] = {}
    for row in rows:
        lever = row.strategy.removeprefix("flower ")
        if row.workload == key and row.player == "ideal" and not row.size and lever[:1] in ("-", "+"):
            out[lever] = round(_cost(mine, clock) / _cost(row, clock), 3)
    return dict(sorted(out.items()))


SENSITIVITY = {
    "unbriefed": "workers that ignore the report rule (reports as long as unbriefed subagents')",
    "reads 0.5": "flower's coordinator Reads half the reports its cap cut",
}
"""The realistic player's variants the summary prices apart (`ranking.variant`), and what each plays."""
HEADLINE_CLOCKS = pricing.HEADLINE_CLOCKS
"""The clocks the issue's bars are read at: the summary carries both, whatever the run's clock."""


def _workload(rows: Sequence[Metrics], key: str, clock: str, *, bound: bool = True) -> dict[str, Any]:
    found = versus(rows, key, clock)
    preset = versus(rows, key, clock, scope="preset")
    out: dict[str, Any] = {
        "flower_vs_best": None if found is None else _best(found),
        "ablations": ablations(rows, key, clock),
        "lower_bound": lower_bound(rows, key) if bound else None,
        "inline_realistic": levers.inline_realistic(rows, key, clock),
        "peers_as_before": None if preset is None else _best(preset),
    }
    start = versus(rows, key, clock, strategy=INLINE)
    if start is not None:  # the opt-in inline start, where the realistic player ran it
        out["inline_start_vs_best"] = _best(start)
    for tag in SENSITIVITY:
        if any(r.workload == key and r.player.endswith(f" [{tag}]") for r in rows):
            other = versus(variant(rows, tag), key, clock)
            out[tag] = None if other is None else _best(other)
    return out


def summary(rows: Sequence[Metrics], keys: Sequence[str], clock: str) -> dict[str, Any]:
    """The `--json` object: per workload flower ÷ the cheapest fair peer (`flower_vs_best`: median, max,
    peer), ÷ each ablation (`ablations`, `-delegation` included), ÷ the lower bound (`lower_bound`), ÷ the
    cheapest peer as configured before its variants (`peers_as_before`) and under each player variant
    that ran (`unbriefed`, `reads 0.5`); `flower +inline` ÷ the same peer where it ran
    (`inline_start_vs_best`); and the same objects under `"clock"`, keyed by clock (the run's and
    `HEADLINE_CLOCKS`)."""
    per = {key: _workload(rows, key, clock) for key in keys}
    clocks = {clock: per}
    for name in HEADLINE_CLOCKS:
        clocks.setdefault(name, {key: _workload(rows, key, name) for key in keys})
    prices: dict[str, Any] = {_price_name(pricing.SONNET): {c: clocks[c] for c in HEADLINE_CLOCKS}}
    for row in (*pricing.ROWS, *pricing.SENSITIVITY):
        if row is not pricing.SONNET:
            prices[_price_name(row)] = {
                c: {key: _workload(rows, key, pricing.key(c, row), bound=False) for key in keys}
                for c in HEADLINE_CLOCKS
            }
    rates = {_price_name(row): {"model": row.model, "tokens_per_char": row.rate} for row in _rows()}
    return {**per, "clock": clocks, "price": prices, "rates": rates}


def _rows() -> tuple[pricing.Row, ...]:
    return (*pricing.ROWS, *pricing.SENSITIVITY)


def _price_name(row: pricing.Row) -> str:
    """A price row's key in `summary()["price"]`: `sonnet-4-6`, `opus-5`, `chars4`."""
    return row.suffix.lstrip("@") or "sonnet-4-6"


def price_table(
    rows: Sequence[Metrics],
    keys: Sequence[str],
    *,
    sensitivity: bool = True,
    strategy: str = COORD,
    peers: bool = True,
) -> str:
    """`strategy` (flower by default) ÷ the cheapest fair peer on each price row at the headline clocks
    (realistic player: median (largest) of the per-seed ratios), and the peer it was (unless `peers` is
    False), per workload."""
    heads = " | ".join(k.upper() for k in keys)
    lines = [f"| price row | clock | {heads} |", "|---|---|" + "---:|" * len(keys)]
    for row in (*pricing.ROWS, *(pricing.SENSITIVITY if sensitivity else ())):
        for clock in HEADLINE_CLOCKS:
            found = [versus(rows, k, pricing.key(clock, row), strategy=strategy) for k in keys]
            cells = [_cell(f) + (f" `{f['peer']}`" if f and peers else "") for f in found]
            lines.append(
                f"| {row.name} ({row.rate:g} tokens/char) | {NAMES[clock]} | " + " | ".join(cells) + " |"
            )
    return "\n".join(lines)


def cut_shares(rows: Sequence[Metrics]) -> list[float]:
    """The `--reads-cut` shares flower's realistic runs among `rows` were recorded with, sorted."""
    return sorted({r.reads_cut for r in rows if r.strategy == COORD and r.player.startswith("realistic")})


def _best(found: dict[str, Any]) -> dict[str, Any]:
    """`versus` as `--json` writes it: the median, the max and the peer; and `reads_cut` when flower's
    coordinator Read cut reports at another rate than the default player's (`realistic.READS_CUT`)."""
    keys = ["median", "max", "peer"]
    if found["reads_cut"] != READS_CUT:
        keys.append("reads_cut")
    return {k: found[k] for k in keys}


def sensitivity(rows: Sequence[Metrics], keys: Sequence[str]) -> str:
    """flower ÷ the cheapest fair peer under every clock (realistic player: median (largest) of the
    per-seed ratios), and the same against peers allowed the SDK's default prompt."""
    heads = " | ".join(k.upper() for k in keys)
    lines = [f"| clock | {heads} |", "|---|" + "---:|" * len(keys)]
    for clock in CLOCKS:
        cells = [_cell(versus(rows, k, clock)) for k in keys]
        lines.append(f"| {NAMES[clock]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def preset_row(rows: Sequence[Metrics], keys: Sequence[str], clock: str) -> str:
    """One table row: flower ÷ the cheapest peer among the peers as they ran before their variants (the
    `claude_code` preset, the CLI's 5-minute cache)."""
    cells = [_cell(versus(rows, k, clock, scope="preset")) for k in keys]
    return "| peers with the preset and 5 minutes only | " + " | ".join(cells) + " |"


def variant_row(rows: Sequence[Metrics], keys: Sequence[str], clock: str, tag: str) -> str:
    """One table row: flower ÷ the cheapest fair peer under the player variant `tag` (`SENSITIVITY`)."""
    cells = [_cell(versus(variant(rows, tag), k, clock)) for k in keys]
    return f"| {SENSITIVITY[tag]} | " + " | ".join(cells) + " |"


def bound_row(rows: Sequence[Metrics], keys: Sequence[str]) -> str:
    """One table row: flower ÷ the lower bound (no clock moves the bound; flower's cost is the run's)."""
    cells = []
    for key in keys:
        found = lower_bound(rows, key)
        cells.append(f"{found['median']:.2f} ({found['max']:.2f})" if found and "median" in found else "-")
    return "| flower ÷ the lower bound (run's clock) | " + " | ".join(cells) + " |"


def _cell(found: dict[str, Any] | None) -> str:
    if found is None:
        return "-"
    cell = f"{found['median']:.2f} ({found['max']:.2f})"
    return f"**{cell}**" if found["median"] > 0.9 or found["max"] > 1.0 else cell


def peers_line(rows: Sequence[Metrics], keys: Sequence[str], clock: str) -> str:
    """Which peer was the cheapest, per workload, under `clock`."""
    found = [(k, cheapest_peer(rows, k, clock)) for k in keys]
    return "; ".join(f"{k.upper()} `{p}`" for k, p in found if p)


def _median(values: Sequence[float]) -> str:
    return f"{statistics.median(values):.1f} s" if values else "-"


def _tail(table: Sequence[float] | None) -> str:
    """A Bash run-time table's median, 95th percentile and longest (its quantiles are 5 % apart)."""
    if not table:
        return "-"
    return f"Bash median {table[10]:.1f} s, p95 {table[19]:.1f} s, longest {table[20]:.0f} s"


def clock_text(rows: Sequence[Metrics], keys: Sequence[str]) -> str:
    """The clock section's prose, with the calibration tables' medians and the waits this run saw."""
    requests = ", ".join(f"{b} tokens {_median(v)}" for b, v in TABLES["request_seconds"].items())
    tools = ", ".join(f"{t} {_median(v)}" for t, v in TABLES["tool_seconds"].items())
    tails = {name: TABLES.get(name, {}).get("Bash") for name in ("tool_seconds", "tool_seconds_all")}
    subagents = sorted(TABLES["subagent_seconds"])
    waits = []
    for key in keys:
        found = [r.wait_p50 for r in seeds(rows, key, COORD) if r.wait_p50]
        if found:
            waits.append(f"{key.upper()} {statistics.median(found):.0f} s")
    return CLOCK.format(
        requests=f"medians: {requests}",
        tools=f"medians: {tools}",
        unattended=_tail(tails["tool_seconds"]),
        attended=_tail(tails["tool_seconds_all"]),
        waits=", ".join(waits) or "-",
        subagents=f"{subagents[0]:.0f}-{subagents[-1]:.0f} s (median {statistics.median(subagents):.0f} s)",
    )


def losses(rows: Sequence[Metrics], keys: Sequence[str], clocks: Sequence[str] = ("calibrated", "35")) -> str:
    """Where flower is not the cheapest, said plainly: under each of `clocks`, the workloads where a
    fair peer costs less on the median or on a seed, and the ablations more than 5 % cheaper than
    flower's default (ideal player)."""
    lines = []
    for clock in clocks:
        for key in keys:
            found = versus(rows, key, clock)
            if found and (found["median"] > 1.0 or found["max"] > 1.0):
                worse = sum(r > 1.0 for r in found["seeds"])
                lines.append(
                    f"- {key.upper()}, {NAMES[clock]}: `{found['peer']}` costs less than flower on "
                    f"{worse} of {len(found['seeds'])} seeds (flower ÷ it: median {found['median']:.2f}, "
                    f"largest {found['max']:.2f})."
                )
    for clock in clocks:
        for key in keys:
            inline = levers.inline_realistic(rows, key, clock)
            if inline and inline["median"] > 1.05:
                lines.append(
                    f"- {key.upper()}, {NAMES[clock]}, realistic player: `flower -delegation` costs less "
                    f"than flower (flower ÷ it: median {inline['median']:.2f}, largest {inline['max']:.2f}, "
                    f"{inline['seeds']} seeds)."
                )
            cheaper = {k: v for k, v in ablations(rows, key, clock).items() if v > 1.05}
            if cheaper:
                said = ", ".join(f"`flower {k}` (flower ÷ it {v:.2f})" for k, v in cheaper.items())
                lines.append(
                    f"- {key.upper()}, {NAMES[clock]}, ideal player: more than 5 % cheaper than flower's "
                    f"default: {said}."
                )
    if not lines:
        return "flower is the cheapest in every workload under both clocks, on every seed."
    return "**Where flower is not the cheapest**:\n\n" + "\n".join(lines)


def clock_section(rows: Sequence[Metrics], keys: Sequence[str]) -> str:
    """The page's clock section: how the clocks work, the sensitivity table, the peers, the losses."""
    parts = [clock_text(rows, keys), sensitivity(rows, keys)]
    parts[-1] += "\n" + preset_row(rows, keys, "calibrated")
    for tag in SENSITIVITY:
        if any(r.player.endswith(f" [{tag}]") for r in rows):
            parts[-1] += "\n" + variant_row(rows, keys, "calibrated", tag)
    parts[-1] += "\n" + bound_row(rows, keys)
    parts.append(
        f"The cheapest fair peer, calibrated: {peers_line(rows, keys, 'calibrated')}; at 35 s: "
        f"{peers_line(rows, keys, '35')}."
    )
    reused = levers.earlier_runs(rows)
    if reused:
        parts.append(reused)
    counts = {key: len(seeds(rows, key, COORD)) for key in keys}
    parts.append(
        "Seeds (realistic player, flower): " + ", ".join(f"{k.upper()} {n}" for k, n in counts.items()) + "."
    )
    parts.append(losses(rows, keys))
    if "not the cheapest" in parts[-1]:
        parts.append(WHY_LOSSES)
    if any(r.bounds for r in rows if r.strategy == COORD):
        parts += [BOUNDS, bounds_table(rows, keys)]
    return "\n\n".join(parts) + "\n"


__all__ = [
    "NAMES",
    "ablations",
    "bounds_table",
    "cheapest_peer",
    "clock_section",
    "clock_text",
    "cut_shares",
    "losses",
    "lower_bound",
    "peers_line",
    "preset_row",
    "price_table",
    "replayed",
    "sensitivity",
    "summary",
    "variant_row",
    "versus",
]
