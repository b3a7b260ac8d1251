"""`flower report --what-if` against what flower measured: the suite's plain runs predict flower's.

Run from the repository root (about 100 real runs of the bundled CLI; hours on two busy cores):

    python benchmarks/bench_what_if.py --keep /tmp/what-if        # run, keep the transcripts, compare
    python benchmarks/bench_what_if.py --from /tmp/what-if        # compare again from what was kept
    python benchmarks/bench_what_if.py --from /tmp/what-if --write-docs   # the table in docs/what-if.md
    python benchmarks/bench_what_if.py --seeds 1 --only w1,w3     # fewer runs
    python benchmarks/bench_what_if.py --real --write-docs        # the real sessions' totals per layer

For each of the suite's five workloads and each realistic seed, the suite's harness (`suite.record`,
unchanged) runs the two plain strategies (`baseline_raw`, and `baseline_cc_default`: the CLI as a user
gets it) with the CLI's transcripts kept, and flower (`flower -delegation`: every layer but the wall, and
`flower`) on the same workloads and seeds. Then `flower report --what-if` reads each plain run's
transcripts, as a user would read their own, and its predictions are compared with flower's measured runs:

- spill + layer 4 (its `spill_and_layer4` line) against `flower -delegation`'s all-agent cost and
  main-thread peak: within +-15 % in every workload;
- the delegation estimate's range against `flower`'s all-agent cost: inside in at least 4 of 5 workloads.

The scripted model reports every request as read from the cache (its usage is the request's size, not a
cache's), which no real API does, and the runs take seconds, not the minutes real requests take. So the
kept transcripts are moved to the suite's calibrated clock: each reply gets the usage the suite's own
simulated prompt cache gives its request and its request's send time (the entries after it move as
much): the numbers and times the suite prices its runs with, so what the what-if reads as recorded is
what the suite measured (the table's first columns check it). The harness deletes the CLI's config
directory when a run ends; this file keeps the transcripts by giving `suite.record` a scripted model that
copies `projects/` first.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict, deque
from concurrent.futures import ProcessPoolExecutor, as_completed
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

PLAIN = ("baseline_raw", "baseline_cc_default")
FLOWER = ("flower -delegation", "flower")
SEEDS = (1, 2, 3, 4, 5)
BOUND = 0.15
"""The largest relative error of the spill + layer 4 prediction, in every workload."""
INSIDE = 4
"""Workloads (of 5) whose flower cost the delegation range must contain."""
DOCS = ROOT / "docs" / "what-if.md"
BEGIN, END = "<!-- bench_what_if: begin -->", "<!-- bench_what_if: end -->"
REAL = ("<!-- real sessions: begin -->", "<!-- real sessions: end -->")


def _api_usage(usage: Any) -> dict[str, Any]:
    written = usage.cache_creation + usage.cache_creation_1h
    return {
        "input_tokens": usage.input,
        "cache_read_input_tokens": usage.cache_read,
        "cache_creation_input_tokens": written,
        "cache_creation": {
            "ephemeral_5m_input_tokens": usage.cache_creation,
            "ephemeral_1h_input_tokens": usage.cache_creation_1h,
        },
        "output_tokens": usage.output,
    }


def _key(usage: Any) -> tuple[int, int, int]:
    usage = usage or {}
    return (
        int(usage.get("input_tokens", 0)),
        int(usage.get("cache_read_input_tokens", 0)),
        int(usage.get("output_tokens", 0)),
    )


def _caller(name: str) -> str:
    return name if name in ("main", "compact") else "worker"


def _stamp(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _reprice_transcripts(projects: Path, rec: Any, trace: Any) -> tuple[int, int]:
    """Give every reply of the kept transcripts the usage the suite's cache simulation gave its request,
    and move every entry to the suite's clock (each reply to its request's send time, the entries after it
    by as much): `(replies given one, replies without a match)`."""
    queues: dict[tuple[str, tuple[int, int, int]], deque[Any]] = defaultdict(deque)
    for request, priced in zip(rec.requests, trace.requests, strict=True):
        queues[(_caller(request.caller), _key(request.usage))].append(priced)
    files = {
        path: [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        for path in sorted(projects.rglob("*.jsonl"))
    }
    origin = min(
        (
            _stamp(e["timestamp"])
            for entries in files.values()
            for e in entries
            if isinstance(e.get("timestamp"), str)
        ),
        default=0.0,
    )
    matched = unmatched = 0
    for path, entries in files.items():
        caller = (
            "main"
            if path.parent.name != "subagents"
            else ("compact" if "acompact" in path.stem else "worker")
        )
        given: dict[str, Any] = {}
        shifts: list[float | None] = []
        for entry in entries:
            message = entry.get("message")
            shift = None
            if entry.get("type") == "assistant" and isinstance(message, dict):
                ident = str(message.get("id"))
                if ident not in given and isinstance(message.get("usage"), dict):
                    queue = queues.get((caller, _key(message["usage"])))
                    given[ident] = queue.popleft() if queue else None
                    matched += given[ident] is not None
                    unmatched += given[ident] is None
                priced = given.get(ident)
                if priced is not None:
                    message["usage"] = _api_usage(priced.usage)
                    if isinstance(entry.get("timestamp"), str):
                        shift = origin + priced.time - _stamp(entry["timestamp"])
            shifts.append(shift)
        known = [s for s in shifts if s is not None]
        current = known[0] if known else 0.0
        for entry, shift in zip(entries, shifts, strict=True):
            current = shift if shift is not None else current
            if isinstance(entry.get("timestamp"), str):
                entry["timestamp"] = _iso(_stamp(entry["timestamp"]) + current)
        path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries), encoding="utf-8")
    return matched, unmatched


def run_one(workload: str, strategy: str, seed: int, keep: str) -> dict[str, Any]:
    """One real run by the realistic player (in a worker process); a plain run's transcripts are kept
    under `keep/<workload>/<strategy>--<seed>/projects/` with the simulated cache's usage."""
    import anyio
    from suite import record as harness
    from suite.metrics import compute
    from suite.realistic import Behaviour
    from suite.runs import named
    from suite.trace import from_recording
    from suite.workloads import workload as load

    from flower.testing import ScriptedModel

    target = Path(keep) / workload / f"{strategy}--{seed}".replace(" ", "_")

    class Keeping(ScriptedModel):
        """The harness's scripted model, copying the CLI's transcripts before its directory goes."""

        into: ClassVar[Path | None] = None

        def stop(self) -> None:
            if self.running and Keeping.into is not None:
                found = Path(self.config_dir) / "projects"
                if found.is_dir():
                    shutil.copytree(found, Keeping.into / "projects", dirs_exist_ok=True)
            super().stop()

    plain = strategy in PLAIN
    original = harness.ScriptedModel
    if plain:
        shutil.rmtree(target, ignore_errors=True)
        Keeping.into = target
        harness.ScriptedModel = Keeping  # type: ignore[misc]
    w = load(workload, False)
    try:
        rec = anyio.run(lambda: harness.record(w, named(w, strategy), Behaviour("realistic", seed)))
    finally:
        harness.ScriptedModel = original  # type: ignore[misc]
    trace = from_recording(rec, run_clock="calibrated")
    row = dataclasses.asdict(compute(trace))
    if plain:
        row["matched"], row["unmatched"] = _reprice_transcripts(target / "projects", rec, trace)
        (target / "metrics.json").write_text(json.dumps(row))
    else:
        target.mkdir(parents=True, exist_ok=True)
        (target / "metrics.json").write_text(json.dumps(row))
    return row


def what_if(directory: Path) -> dict[str, Any]:
    """`flower report --what-if DIR --json`, as a user runs it."""
    done = subprocess.run(
        [sys.executable, "-m", "flower.cli", "report", "--what-if", str(directory), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)["total"]  # type: ignore[no-any-return]


def _error(predicted: float, measured: float) -> float:
    return (predicted - measured) / measured if measured else 0.0


def compare(keep: Path, keys: list[str], seeds: tuple[int, ...]) -> list[dict[str, Any]]:
    """One row per (workload, plain strategy): medians over the seeds of what was predicted and measured."""
    rows = []
    for key in keys:
        for plain in PLAIN:
            cells: dict[str, list[float]] = defaultdict(list)
            for seed in seeds:
                base = keep / key / f"{plain}--{seed}"
                nodeleg = keep / key / f"flower_-delegation--{seed}" / "metrics.json"
                full = keep / key / f"flower--{seed}" / "metrics.json"
                if not (base / "metrics.json").is_file() or not nodeleg.is_file() or not full.is_file():
                    continue
                measured = json.loads((base / "metrics.json").read_text())
                if not measured["finished"]:
                    cells["unfinished"].append(1)
                total = what_if(base)
                n, f = json.loads(nodeleg.read_text()), json.loads(full.read_text())
                both, d = total["layers"]["spill_and_layer4"], total["layers"]["delegation"]
                cells["recorded"].append(total["as_recorded"]["cost_usd"])
                cells["suite"].append(measured["cost_all"])
                cells["predicted"].append(both["cost_usd"])
                cells["measured"].append(n["cost_all"])
                cells["peak_predicted"].append(both["main_peak"])
                cells["read_back"].append(both["read_back_usd"])
                cells["read_back_peak"].append(both["read_back_peak"])
                cells["peak_measured"].append(n["peak"])
                cells["low"].append(d["cost_usd_low"])
                cells["high"].append(d["cost_usd_high"])
                cells["flower"].append(f["cost_all"])
                cells["cost_error"].append(_error(both["cost_usd"], n["cost_all"]))
                cells["peak_error"].append(_error(both["main_peak"], n["peak"]))
                cells["inside"].append(float(d["cost_usd_low"] <= f["cost_all"] <= d["cost_usd_high"]))
            if cells["predicted"]:
                med = {name: statistics.median(values) for name, values in cells.items() if values}
                med["inside_share"] = statistics.mean(cells["inside"])
                med["seeds"] = len(cells["predicted"])
                med["unfinished"] = len(cells["unfinished"])
                med["worst_cost_error"] = max(cells["cost_error"], key=abs)
                med["worst_peak_error"] = max(cells["peak_error"], key=abs)
                rows.append({"workload": key, "plain": plain, **med})
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """The comparison as a Markdown table."""
    lines = [
        "| workload | read from | as recorded / suite | spill + layer 4 predicted | flower -delegation "
        "measured | cost error (worst seed) | peak predicted / measured | peak error (worst seed) | "
        "if read back: cost, peak | delegation estimate | flower measured | inside |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['workload']} | `{r['plain']}` | ${r['recorded']:.3f} / ${r['suite']:.3f} | "
            f"${r['predicted']:.3f} | ${r['measured']:.3f} | {100 * r['cost_error']:+.1f} % "
            f"({100 * r['worst_cost_error']:+.1f} %) | {r['peak_predicted'] / 1000:.1f}k / "
            f"{r['peak_measured'] / 1000:.1f}k | {100 * r['peak_error']:+.1f} % "
            f"({100 * r['worst_peak_error']:+.1f} %) | ${r['read_back']:.3f}, "
            f"{r['read_back_peak'] / 1000:.1f}k | ${r['low']:.3f}-${r['high']:.3f} | "
            f"${r['flower']:.3f} | {'yes' if r['low'] <= r['flower'] <= r['high'] else 'no'} "
            f"({round(r['inside_share'] * r['seeds'])}/{r['seeds']} seeds) |"
        )
    return "\n".join(lines)


def verdict(rows: list[dict[str, Any]], plain: str) -> list[str]:
    """The bounds, read from `plain`'s rows."""
    mine = [r for r in rows if r["plain"] == plain]
    cost = [r["workload"] for r in mine if abs(r["cost_error"]) > BOUND]
    peak = [r["workload"] for r in mine if abs(r["peak_error"]) > BOUND]
    inside = sum(1 for r in mine if r["low"] <= r["flower"] <= r["high"])
    return [
        f"read from {plain}: spill + layer 4 cost within +-{BOUND:.0%} in {len(mine) - len(cost)} of "
        f"{len(mine)} workloads{' (missed: ' + ', '.join(cost) + ')' if cost else ''}; peak in "
        f"{len(mine) - len(peak)} of {len(mine)}{' (missed: ' + ', '.join(peak) + ')' if peak else ''}; "
        f"delegation range holds flower's cost in {inside} of {len(mine)} (bound: {INSIDE} of 5)",
    ]


def _write_docs(text: str, markers: tuple[str, str] = (BEGIN, END)) -> None:
    page = DOCS.read_text(encoding="utf-8")
    start, end = page.index(markers[0]) + len(markers[0]), page.index(markers[1])
    DOCS.write_text(page[:start] + "\n" + text + "\n" + page[end:], encoding="utf-8")


def real_sessions(root: Path) -> str:
    """`--what-if` on the real-transcript corpus (`FLOWER_REAL_TRANSCRIPTS`, else `shared/real-transcripts`
    beside the repository), laid out as the CLI keeps it (links, not copies): its totals per layer."""
    sys.path.insert(0, str(ROOT))
    from tests.stores import corpus

    reason = corpus.missing_reason()
    if reason is not None:
        raise SystemExit(reason)
    project = root / "projects" / "-corpus"
    for path in sorted(corpus.corpus_dir().glob("*.jsonl")):
        main, _, agent = path.stem.partition("--")
        target = project / main / "subagents" / f"{agent}.jsonl" if agent else project / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(path)
    t = what_if(root / "projects")
    return real_table(t)


def _money(value: float) -> str:
    return f"-${-value:,.2f}" if value < 0 else f"${value:,.2f}"


def real_table(t: dict[str, Any]) -> str:
    """The totals per layer of a `--what-if` JSON's `total`, as a Markdown table."""
    r, layers = t["as_recorded"], t["layers"]
    k = r["tokens"]
    spill, l4, both = layers["spill"], layers["layer4"], layers["spill_and_layer4"]
    h, g, d = layers["handoff"], layers["glance"], layers["delegation"]
    cost = r["cost_usd"]

    def saved(value: float) -> str:
        return f"{_money(value)} ({100 * value / cost:.1f} %)" if cost else _money(value)

    recorded = (
        f"{t['sessions']} sessions, {r['requests']:,} requests; tokens: input {k['input']:,}, cache read "
        f"{k['cache_read']:,}, 5-minute writes {k['cache_write_5m']:,}, "
        f"1-hour writes {k['cache_write_1h']:,}, output {k['output']:,}; {r['compactions']} compactions, "
        f"{r['resumes']} resumes, "
        f"{r['subagents']} subagent runs"
    )
    spilled = (
        f"{spill['outputs']} outputs ({spill['main_outputs']} on the main thread), "
        f"{spill['chars_kept_out']:,} characters kept out; {spill['quoted_later']} of them quoted later: "
        f"read back whole, {_money(spill['read_back_usd'])} (peak {spill['read_back_peak']:,})"
    )
    delegated = f"{d['loops']} stretches of delegable calls ({d['calls']} calls, {d['requests']} requests)"
    rows = [
        ("as recorded", f"≥ {_money(cost)}", "", f"{r['main_peak']:,}", recorded),
        ("spill", _money(spill["cost_usd"]), saved(spill["saved_usd"]), f"{spill['main_peak']:,}", spilled),
        (
            "layer 4",
            _money(l4["cost_usd"]),
            saved(l4["saved_usd"]),
            f"{l4['main_peak']:,}",
            f"{l4['resumes']} resumes ({l4['cold_resumes']} cold), {l4['expired']} expired",
        ),
        ("spill + layer 4", _money(both["cost_usd"]), saved(both["saved_usd"]), f"{both['main_peak']:,}", ""),
        (
            "handoff",
            _money(h["handoff_usd"]),
            _money(h["saved_usd"]),
            "",
            f"{h['compactions']} compactions ({h['estimated']} estimated): {_money(h['compaction_usd'])}",
        ),
        ("glance", "", "", "", f"{g['accepted']} of {g['bash_calls']} main-thread Bash calls accepted"),
        (
            "delegation (estimate)",
            f"{_money(d['cost_usd_low'])} to {_money(d['cost_usd_high'])}",
            f"{saved(cost - d['cost_usd_high'])} to {saved(cost - d['cost_usd_low'])}",
            f"{d['main_peak_low']:,} to {d['main_peak_high']:,}",
            delegated,
        ),
    ]
    lines = ["| line | cost | saved | main-thread peak | what it counts |", "|---|---|---|---|---|"]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="run, and keep the transcripts and metrics here")
    parser.add_argument("--from", dest="source", type=Path, help="compare what --keep kept, run nothing")
    parser.add_argument("--only", default="", help="comma-separated workload keys (w1..w5)")
    parser.add_argument("--seeds", default=",".join(map(str, SEEDS)), help="realistic seeds (1-5)")
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time (default 2)")
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/what-if.md")
    parser.add_argument(
        "--real",
        action="store_true",
        help="only --what-if on the real-transcript corpus, its totals per layer",
    )
    args = parser.parse_args()
    if args.real:
        with tempfile.TemporaryDirectory(prefix="flower-what-if-real-") as temp:
            text = real_sessions(Path(temp))
        print(text)
        if args.write_docs:
            _write_docs(text, REAL)
            print(f"wrote {DOCS}")
        return 0
    from suite.workloads import build

    keys = [w.key for w in build(False) if not args.only or w.key in args.only.split(",")]
    seeds = tuple(int(s) for s in args.seeds.split(",") if s.strip())
    keep = args.source or args.keep
    if keep is None:
        parser.error("give --keep DIR (run) or --from DIR (compare what was kept)")
    if args.source is None:
        jobs = [(k, s, seed) for seed in seeds for k in keys for s in (*PLAIN, *FLOWER)]
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=args.jobs, mp_context=context) as pool:
            futures = {pool.submit(run_one, k, s, seed, str(keep)): (k, s, seed) for k, s, seed in jobs}
            for future in as_completed(futures):
                k, s, seed = futures[future]
                row = future.result()
                extra = (
                    f" replies repriced {row.get('matched')}, unmatched {row.get('unmatched')}"
                    if s in PLAIN
                    else ""
                )
                print(
                    f"  {k} {s:22s} seed {seed}: finished={row['finished']} cost_all=${row['cost_all']:.3f} "
                    f"peak={row['peak']:,}{extra}",
                    flush=True,
                )
    rows = compare(keep, keys, seeds)
    text = table(rows)
    print(text)
    lines = [line for plain in PLAIN for line in verdict(rows, plain)]
    for line in lines:
        print(line)
    if args.write_docs:
        _write_docs(text + "\n\n" + "\n".join(f"- {line}" for line in lines))
        print(f"wrote {DOCS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
