"""`flower report --what-if` against what flower measured: the suite's plain runs predict flower's.

Run from the repository root (about 100 real runs of the bundled CLI; hours on two busy cores):

    python benchmarks/bench_what_if.py --keep /tmp/what-if        # run, keep the transcripts, compare
    python benchmarks/bench_what_if.py --from /tmp/what-if        # compare again from what was kept
    python benchmarks/bench_what_if.py --from /tmp/what-if --write-docs   # the table in docs/what-if.md
    python benchmarks/bench_what_if.py --seeds 1 --only w1,w3     # fewer runs
    python benchmarks/bench_what_if.py --real --write-docs        # the real sessions' totals per layer
    python benchmarks/bench_what_if.py --real --corpus DIR        # another corpus of public transcripts

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

from what_if_compare import (  # noqa: E402
    PLAIN,
    compare,
    real_sensitivity,
    sensitivity,
    table,
    verdict,
    what_if,
)

FLOWER = ("flower -delegation", "flower")
SEEDS = (1, 2, 3, 4, 5)
DOCS = ROOT / "docs" / "what-if.md"
BEGIN, END = "<!-- bench_what_if: begin -->", "<!-- bench_what_if: end -->"
REAL = ("<!-- real sessions: begin -->", "<!-- real sessions: end -->")
REAL_MORE = ("<!-- more real sessions: begin -->", "<!-- more real sessions: end -->")
REAL_MORE_SENSITIVITY = ("<!-- more real sensitivity: begin -->", "<!-- more real sensitivity: end -->")
REAL_SENSITIVITY = ("<!-- real sensitivity: begin -->", "<!-- real sensitivity: end -->")
SENSITIVITY = ("<!-- bench_what_if sensitivity: begin -->", "<!-- bench_what_if sensitivity: end -->")


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
    from suite.warm import PING

    # the keep-warm pings the suite adds to flower's trace (none reach a transcript) match no reply
    replies = [priced for priced in trace.requests if priced.caller != PING]
    for request, priced in zip(rec.requests, replies, strict=True):
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
    """One real run by the realistic player (in a worker process); its transcripts are kept under
    `keep/<workload>/<strategy>--<seed>/projects/` with the simulated cache's usage (flower's too: what
    followed its spills is what the read-back estimate is checked against)."""
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

    original = harness.ScriptedModel
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
    target.mkdir(parents=True, exist_ok=True)
    if (target / "projects").is_dir():
        row["matched"], row["unmatched"] = _reprice_transcripts(target / "projects", rec, trace)
    (target / "metrics.json").write_text(json.dumps(row))
    return row


def _write_docs(text: str, markers: tuple[str, str] = (BEGIN, END)) -> None:
    page = DOCS.read_text(encoding="utf-8")
    start, end = page.index(markers[0]) + len(markers[0]), page.index(markers[1])
    DOCS.write_text(page[:start] + "\n" + text + "\n" + page[end:], encoding="utf-8")


def real_sessions(root: Path, directory: Path | None = None) -> tuple[str, str, str]:
    """`--what-if` on a corpus of real transcripts (`directory`; None: the test corpus,
    `FLOWER_REAL_TRANSCRIPTS`, else `shared/real-transcripts` beside the repository), laid out as the CLI
    keeps it (`what_if_corpus.lay_out`: links, not copies, checkpoint copies left out): what was laid out,
    its totals per layer, and spill + layer 4 under each read-back model."""
    from what_if_corpus import lay_out

    from tests.stores import corpus

    directory = directory if directory is not None else corpus.corpus_dir()
    reason = corpus.missing_reason(directory)
    if reason is not None:
        raise SystemExit(reason)
    laid = lay_out(directory, root / "projects")
    said = (
        f"{laid.sessions} sessions and {laid.subagents} subagent transcripts "
        f"({laid.copies} checkpoint copies of a larger transcript left out)"
    )
    t = what_if(root / "projects")
    return said, real_table(t), real_sensitivity(root / "projects")


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
        f"{r['subagents']} subagent runs; {r['unfinished']} stopped before finishing"
    )
    spilled = (
        f"{spill['outputs']} outputs ({spill['main_outputs']} on the main thread), "
        f"{spill['chars_kept_out']:,} characters kept out; {spill['copied_later']} copied from later "
        f"({spill['quoted_later']} quoted, the loose test); {spill['read_backs']:,.1f} read-backs expected "
        f"({spill['read_back_chars']:,} characters); range {_money(spill['replay_usd'])} (none read back, "
        f"peak {spill['replay_peak']:,}) to {_money(spill['read_back_usd'])} "
        f"(peak {spill['read_back_peak']:,})"
    )
    delegated = (
        f"{d['loops']:,} stretches of delegable calls ({d['calls']:,} calls, {d['requests']:,} requests)"
    )
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
        (
            "spill + layer 4",
            _money(both["cost_usd"]),
            saved(both["saved_usd"]),
            f"{both['main_peak']:,}",
            f"range {_money(both['replay_usd'])} to {_money(both['read_back_usd'])}",
        ),
        (
            "handoff",
            _money(h["handoff_usd"]),
            _money(h["saved_usd"]),
            "",
            f"{h['compactions']} compactions ({h['estimated']} estimated): {_money(h['compaction_usd'])}",
        ),
        ("glance", "", "", "", f"{g['accepted']:,} of {g['bash_calls']:,} main-thread Bash calls accepted"),
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
    parser.add_argument(
        "--resume", action="store_true", help="with --keep: skip the runs whose results are already kept"
    )
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/what-if.md")
    parser.add_argument(
        "--real",
        action="store_true",
        help="only --what-if on the real-transcript corpus, its totals per layer",
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        help="with --real: another directory of public transcripts (its own block of the page)",
    )
    args = parser.parse_args()
    if args.real:
        with tempfile.TemporaryDirectory(prefix="flower-what-if-real-") as temp:
            said, text, varied = real_sessions(Path(temp), args.corpus)
        print(said + "\n\n" + text + "\n\n" + varied)
        if args.write_docs:
            _write_docs(text, REAL_MORE if args.corpus else REAL)
            _write_docs(varied, REAL_MORE_SENSITIVITY if args.corpus else REAL_SENSITIVITY)
            print(f"wrote {DOCS}")
        return 0
    from suite.workloads import build

    keys = [w.key for w in build(False) if not args.only or w.key in args.only.split(",")]
    seeds = tuple(int(s) for s in args.seeds.split(",") if s.strip())
    keep = args.source or args.keep
    if keep is None:
        parser.error("give --keep DIR (run) or --from DIR (compare what was kept)")
    if args.source is None:
        jobs = [
            (k, s, seed)
            for seed in seeds
            for k in keys
            for s in (*PLAIN, *FLOWER)
            if not (args.resume and (keep / k / f"{s}--{seed}".replace(" ", "_") / "metrics.json").is_file())
        ]
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
    lines = verdict(rows)
    for line in lines:
        print(line)
    varied = sensitivity(keep, rows, seeds)
    print(varied)
    if args.write_docs:
        _write_docs(text + "\n\n" + "\n".join(f"- {line}" for line in lines))
        _write_docs(varied, SENSITIVITY)
        print(f"wrote {DOCS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
