"""The comparison `bench_what_if.py` prints: what `--what-if` predicts from a plain run against flower's.

For each workload, seed and plain strategy kept under `keep/<workload>/<strategy>--<seed>/`:

- the what-if is read twice: as a user runs it (`flower report --what-if DIR --json`: the as-recorded cost
  checks the repricing; its delegation estimate is the one compared), and through the Python API with the
  **prefix difference** accounted for: every request of flower -delegation's run carries its own fixed
  prefix (tools, system prompt), measured as the first request's context of that run minus the plain
  run's (both transcripts are kept), and given as `WhatIfOptions(prefix_delta=...)` for spill + layer 4.
  The delegation estimate computes its coordinator's prefix itself (flower's coordinator against the
  request shape the plain transcript records); the table shows it beside the one measured from flower's
  run;
- spill + layer 4 is read three ways: its expected cost (the real read-back figures), its cost with no
  read to look at an output nothing copies (the benchmark's player never reads back but to look a fact
  up, so this is the like-for-like check of the mechanics), and its range (replay, pessimistic end);
- a seed whose measured flower run stopped before finishing (the harness's own time limit, on a loaded
  machine) is left out of that run's comparison, and the verdict counts it;
- the **source** of each workload's validation is `baseline_raw` (flower's tool list and model) unless a
  seed of it stopped before finishing, then `baseline_cc_default` (which compacts, and finished): a
  replay of what a run did cannot say what it would have done after it stopped.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

PLAIN = ("baseline_raw", "baseline_cc_default")
BOUND = 0.15
"""The largest relative error of the spill + layer 4 prediction, in every workload."""
INSIDE = 4
"""Workloads (of 5) whose flower cost the delegation range must contain."""


def what_if(directory: Path) -> dict[str, Any]:
    """`flower report --what-if DIR --json`, as a user runs it: its total."""
    done = subprocess.run(
        [sys.executable, "-m", "flower._cli", "report", "--what-if", str(directory), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)["total"]  # type: ignore[no-any-return]


def adjusted(directory: Path, delta: int, look_share: float | None = None) -> dict[str, Any]:
    """The what-if's total with the prefix difference `delta` (and, when given, another share of outputs
    read back to be looked at)."""
    from flower.report._what_if import WhatIfOptions, build_what_if_sync
    from flower.report._what_if.readback import CENTRAL

    model = CENTRAL if look_share is None else dataclasses.replace(CENTRAL, look_share=look_share)
    report = build_what_if_sync(directory, options=WhatIfOptions(prefix_delta=delta, read_back=model))
    return report.to_dict()["total"]  # type: ignore[no-any-return]


def first_context(directory: Path) -> int | None:
    """The context of the main thread's first request in the transcripts kept under `directory`: of the
    session that started first (a handoff's successor is a session of its own, started later)."""
    found: list[tuple[str, int]] = []
    for path in (directory / "projects").glob("*/*.jsonl"):
        started, context = "", None
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line) if line.strip() else {}
            if not started and isinstance(entry.get("timestamp"), str):
                started = entry["timestamp"]
            usage = (entry.get("message") or {}).get("usage") if entry.get("type") == "assistant" else None
            if isinstance(usage, dict) and entry["message"].get("model") != "<synthetic>":
                context = int(
                    usage.get("input_tokens", 0)
                    + usage.get("cache_read_input_tokens", 0)
                    + usage.get("cache_creation_input_tokens", 0)
                )
                break
        if context is not None:
            found.append((started, context))
    return min(found)[1] if found else None


def _error(predicted: float, measured: float) -> float:
    return (predicted - measured) / measured if measured else 0.0


def _delta(keep: Path, key: str, strategy: str, seed: int, plain: int | None) -> int:
    found = first_context(keep / key / f"{strategy}--{seed}".replace(" ", "_"))
    return found - plain if found is not None and plain is not None else 0


NODELEG_CELLS = frozenset(
    {"predicted", "replay", "worst", "player", "measured", "peak_predicted", "peak_measured", "cost_error"}
    | {"player_error", "peak_error"}
)
"""The cells compared with flower -delegation's run."""
FLOWER_CELLS = frozenset({"low", "high", "flower", "inside"})
"""The cells compared with flower's run."""


def _seed(keep: Path, key: str, plain: str, seed: int) -> dict[str, float] | None:
    """One seed's cells, or None when one of its four runs is missing."""
    base = keep / key / f"{plain}--{seed}"
    runs = [base, keep / key / f"flower_-delegation--{seed}", keep / key / f"flower--{seed}"]
    if not all((run / "metrics.json").is_file() for run in runs):
        return None
    measured, n, f = (json.loads((run / "metrics.json").read_text()) for run in runs)
    start = first_context(base)
    nodeleg, full = (
        _delta(keep, key, "flower -delegation", seed, start),
        _delta(keep, key, "flower", seed, start),
    )
    user = what_if(base)
    both = adjusted(base, nodeleg)
    player = adjusted(base, nodeleg, look_share=0.0)["layers"]["spill_and_layer4"]
    d = user["layers"]["delegation"]  # as a user gets it: the coordinator's prefix computed, not measured
    b = both["layers"]["spill_and_layer4"]
    cells = {
        "recorded": user["as_recorded"]["cost_usd"],
        "suite": measured["cost_all"],
        "stopped": float(bool(user["as_recorded"]["unfinished"])),
        "delta": nodeleg,
        "delta_full": full,
        "delta_coordinator": d["prefix_delta"],
        "predicted": b["cost_usd"],
        "replay": b["replay_usd"],
        "worst": b["read_back_usd"],
        "player": player["cost_usd"],
        "read_backs": both["layers"]["spill"]["read_backs"],
        "copied": both["layers"]["spill"]["copied_later"],
        "measured": n["cost_all"],
        "peak_predicted": b["main_peak"],
        "peak_measured": n["peak"],
        "low": d["cost_usd_low"],
        "high": d["cost_usd_high"],
        "flower": f["cost_all"],
        "cost_error": _error(b["cost_usd"], n["cost_all"]),
        "player_error": _error(player["cost_usd"], n["cost_all"]),
        "peak_error": _error(b["main_peak"], n["peak"]),
        "inside": float(d["cost_usd_low"] <= f["cost_all"] <= d["cost_usd_high"]),
    }
    # a measured run that stopped (the harness's own time limit on a loaded machine) is no reference:
    # what it cost is not what flower costs on the workload, so its comparison is left out, and counted
    for run, names in ((n, NODELEG_CELLS), (f, FLOWER_CELLS)):
        if not run["finished"]:
            cells = {name: value for name, value in cells.items() if name not in names}
    cells["nodeleg_stopped"] = float(not n["finished"])
    cells["flower_stopped"] = float(not f["finished"])
    return cells


def compare(keep: Path, keys: list[str], seeds: tuple[int, ...]) -> list[dict[str, Any]]:
    """One row per (workload, plain strategy): medians over the seeds, the worst seed's errors."""
    rows = []
    for key in keys:
        for plain in PLAIN:
            cells: dict[str, list[float]] = defaultdict(list)
            for seed in seeds:
                found = _seed(keep, key, plain, seed)
                for name, value in (found or {}).items():
                    cells[name].append(value)
            if cells["predicted"] and cells["inside"]:
                med: dict[str, Any] = {name: statistics.median(values) for name, values in cells.items()}
                med["seeds"] = len(cells["stopped"])
                med["flower_seeds"] = len(cells["inside"])
                med["inside_seeds"] = round(sum(cells["inside"]))
                med["stopped_seeds"] = round(sum(cells["stopped"]))
                med["measured_stopped"] = round(sum(cells["nodeleg_stopped"]) + sum(cells["flower_stopped"]))
                for name in ("cost_error", "player_error", "peak_error"):
                    med[f"worst_{name}"] = max(cells[name], key=abs)
                rows.append({"workload": key, "plain": plain, **med})
    return rows


def sources(rows: list[dict[str, Any]]) -> dict[str, str]:
    """The plain strategy each workload is validated from: `baseline_raw`, unless a seed of it stopped."""
    chosen: dict[str, str] = {}
    for r in rows:
        if r["plain"] == "baseline_raw" and not r["stopped_seeds"]:
            chosen[r["workload"]] = r["plain"]
    for r in rows:
        chosen.setdefault(r["workload"], "baseline_cc_default")
    return chosen


def _pct(value: float) -> str:
    return f"{100 * value:+.1f} %"


def table(rows: list[dict[str, Any]]) -> str:
    """The comparison as a Markdown table (the rows a workload is validated from in bold)."""
    chosen = sources(rows)
    lines = [
        "| workload | read from | finished | prefix Δ (coordinator: computed / measured) "
        "| as recorded / suite | spill + layer 4 predicted "
        "(range) | flower -delegation | error (worst seed) | with the player's habit: error | "
        "read-backs (copied) | peak predicted / measured | delegation estimate | flower | inside |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        mark = "**" if chosen[r["workload"]] == r["plain"] else ""
        finished = "yes" if not r["stopped_seeds"] else f"no ({r['stopped_seeds']}/{r['seeds']}: lower bound)"
        lines.append(
            f"| {r['workload']} | {mark}`{r['plain']}`{mark} | {finished} | {r['delta'] / 1000:+.1f}k "
            f"({r['delta_coordinator'] / 1000:+.1f}k / {r['delta_full'] / 1000:+.1f}k) | "
            f"${r['recorded']:.3f} / ${r['suite']:.3f} | ${r['predicted']:.3f} "
            f"(${r['replay']:.3f}-${r['worst']:.3f}) | ${r['measured']:.3f} | {_pct(r['cost_error'])} "
            f"({_pct(r['worst_cost_error'])}) | {_pct(r['player_error'])} "
            f"({_pct(r['worst_player_error'])}) | {r['read_backs']:.1f} ({r['copied']:.0f}) | "
            f"{r['peak_predicted'] / 1000:.1f}k / {r['peak_measured'] / 1000:.1f}k "
            f"({_pct(r['peak_error'])}) | ${r['low']:.3f}-${r['high']:.3f} | ${r['flower']:.3f} | "
            f"{'yes' if r['low'] <= r['flower'] <= r['high'] else 'no'} "
            f"({r['inside_seeds']}/{r['flower_seeds']} seeds) |"
        )
    return "\n".join(lines)


def verdict(rows: list[dict[str, Any]]) -> list[str]:
    """The bounds, each workload read from its source (`sources`)."""
    chosen = sources(rows)
    mine = [r for r in rows if chosen[r["workload"]] == r["plain"]]
    said = ", ".join(f"{r['workload']} from {r['plain']}" for r in mine)

    def missed(name: str) -> str:
        out = [r["workload"] for r in mine if abs(r[name]) > BOUND]
        return f"{len(mine) - len(out)} of {len(mine)}" + (f" (missed: {', '.join(out)})" if out else "")

    inside = [r["workload"] for r in mine if r["low"] <= r["flower"] <= r["high"]]
    left = ", ".join(f"{r['workload']} ({r['measured_stopped']})" for r in mine if r["measured_stopped"])
    return [
        f"read as validated ({said}): spill + layer 4 within +-{BOUND:.0%} of flower -delegation's cost in "
        f"{missed('cost_error')} with the real read-back figures, in {missed('player_error')} with the "
        f"benchmark player's own habit (no read to look); peak in {missed('peak_error')}",
        f"delegation range holds flower's cost in {len(inside)} of {len(mine)} on the medians "
        f"(bound: {INSIDE} of 5); seed by seed in {sum(r['inside_seeds'] for r in mine)} of "
        f"{sum(r['flower_seeds'] for r in mine)}",
        "measured runs of flower that stopped before finishing, left out of the comparison: "
        + (left or "none"),
    ]


def variants() -> list[tuple[str, Any]]:
    """The read-back models the sensitivity table compares: (label, `ReadBackModel`)."""
    from flower.report._measured import PREVIEW_READ_BACK_INTERVAL
    from flower.report._what_if.readback import CENTRAL

    low, high = PREVIEW_READ_BACK_INTERVAL
    return [
        ("real figures (expected)", CENTRAL),
        ("read to look: none (the player's habit)", dataclasses.replace(CENTRAL, look_share=0.0)),
        (f"read to look: {low:.1%} (95 % low)", dataclasses.replace(CENTRAL, look_share=low)),
        (f"read to look: {high:.1%} (95 % high)", dataclasses.replace(CENTRAL, look_share=high)),
        ("look-ups always read whole", dataclasses.replace(CENTRAL, lookup_whole=1.0)),
        ("look-ups never read whole", dataclasses.replace(CENTRAL, lookup_whole=0.0)),
    ]


def _cost(directory: Path, model: Any, delta: int = 0) -> tuple[float, float]:
    """(spill + layer 4's cost, the recorded cost) of `directory`'s history under read-back `model`."""
    from flower.report._what_if import WhatIfOptions, build_what_if_sync

    report = build_what_if_sync(directory, options=WhatIfOptions(read_back=model, prefix_delta=delta))
    return report.total.layers.spill_and_layer4.cost_usd, report.total.as_recorded.cost_usd


def sensitivity(keep: Path, rows: list[dict[str, Any]], seeds: tuple[int, ...]) -> str:
    """Each workload's median error against flower -delegation under each read-back model."""
    chosen = sources(rows)
    keys = sorted(chosen)
    lines = [
        "| read-back model | " + " | ".join(f"{k} (from {chosen[k]})" for k in keys) + " |",
        "|---" * (len(keys) + 1) + "|",
    ]
    for label, model in variants():
        cells = []
        for key in keys:
            errors = []
            for seed in seeds:
                base = keep / key / f"{chosen[key]}--{seed}"
                nodeleg = keep / key / f"flower_-delegation--{seed}"
                if not (base / "metrics.json").is_file() or not (nodeleg / "metrics.json").is_file():
                    continue
                measured = json.loads((nodeleg / "metrics.json").read_text())
                if not measured["finished"]:
                    continue
                delta = _delta(keep, key, "flower -delegation", seed, first_context(base))
                cost, _ = _cost(base, model, delta)
                errors.append(_error(cost, measured["cost_all"]))
            cells.append(_pct(statistics.median(errors)) if errors else "-")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def real_sensitivity(projects: Path) -> str:
    """The real sessions' spill + layer 4 cost under each read-back model."""
    lines = ["| read-back model | spill + layer 4 | saved |", "|---|---|---|"]
    for label, model in variants():
        cost, recorded = _cost(projects, model)
        lines.append(f"| {label} | ${cost:,.2f} | {100 * (recorded - cost) / recorded:.1f} % |")
    return "\n".join(lines)
