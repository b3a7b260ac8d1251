"""What one delegation costs, and what each lever takes off it, through the real CLI.

    python benchmarks/bench_delegation_price.py [--only base,levers] [--json out.json]

Every run drives the real bundled CLI with flower's scripted model (`flower.testing`); a run's price is
read from its request log: each request goes through the simulated prompt cache (`flower.cost`, every
agent sharing one cache, as on the API), and each count is priced on two rows: Sonnet 4.6, and the CLI's
default model (`claude-opus-5-5`: the `claude-opus-5` row, cache reads at 0.05x input). The two models
are run apart: the CLI sends them different request bodies (the Bash tool's description is 12.8k chars
on Sonnet, 3.7k on Opus 5).

Tokens: the cache simulation counts characters / 4; every count is scaled by each model's tokens per
character as the suite counts it (`suite.pricing.RATES`: the what-if's `model_rate`, the product's one
measure; `tokens_per_char.py` prints what the real transcripts measure for the older families).
`--tpc 0.25` prices at chars/4 instead (a sensitivity).

What a delegation costs more than doing the item inline: the same coordinator runs one item (`cat` of a
file, a read-only look it may take itself) inline and delegated (the worker runs it and reports
`REPORT_CHARS` chars), and `K` later coordinator requests re-read what each left in its context. The
difference, at two item sizes, gives the fixed price and the item size where delegating breaks even.
The levers (`levers.py` beside this file) are each measured as a before/after pair of runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from suite.pricing import RATES  # noqa: E402

from flower import AgentSpec, Runtime, coordinator, worker  # noqa: E402
from flower._cost import DEFAULT_MODEL, PromptCache  # noqa: E402
from flower._cost.prices import PRICES, Price  # noqa: E402
from flower.testing import RecordedRequest, ScriptedModel  # noqa: E402

REPORT_CHARS = 400
"""A short report, as `WORKER_RULES` asks (conclusion, evidence, paths)."""
LATER = (10, 50)
"""Later coordinator requests that re-read what a delegation (or the inline item) left in its context."""
SIZES = (100, 3000)
"""Item output sizes (chars) run inline and delegated; below spill's 4,000, which caps an inline output."""
SIM_TPC = 0.25
"""The cache simulation's own count: characters / 4."""


@dataclass(frozen=True)
class Row:
    """A price row: the model the CLI is told to use, its price, its measured tokens per char."""

    label: str
    model: str | None  # None: the CLI's default model
    price: Price
    family: str  # the model whose tokens per char it counts (`suite.pricing.RATES`)
    tpc: float = SIM_TPC


ROWS = (
    Row("Sonnet 4.6", "claude-sonnet-4-6", PRICES["claude-sonnet-4-6"], "claude-sonnet-4-6"),
    Row("Opus 5 (CLI default)", None, PRICES["claude-opus-5"], DEFAULT_MODEL),
)


# --- runs through the CLI ------------------------------------------------------------------------------

Script = Any


@dataclass
class Case:
    """One run: the coordinator's script, its workers (spec and script), the files of its workspace."""

    main: Script
    workers: Mapping[str, tuple[AgentSpec, Script]] = field(default_factory=dict)
    files: Mapping[str, str] = field(default_factory=dict)
    coordinator: Mapping[str, Any] = field(default_factory=dict)
    configure: Callable[[Any], Any] | None = None
    instructions: str = "Goal: the items the user names."


async def run_case(case: Case, row: Row) -> list[RecordedRequest]:
    """The request log of `case` run through the CLI on `row`'s model, with the strict wall."""
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        for name, text in case.files.items():
            (workspace / name).parent.mkdir(parents=True, exist_ok=True)
            (workspace / name).write_text(text)
        async with ScriptedModel(cache=PromptCache()) as model:
            model.script("main", case.main)
            for name, (_, script) in case.workers.items():
                model.script(name, script)
            options = {"own_steps": 0, "model": row.model, **case.coordinator}
            specs = {name: spec for name, (spec, _) in case.workers.items()}
            spec = coordinator("lead", case.instructions, specs, **options)

            def configure(o: Any) -> Any:
                return model.attach(case.configure(o) if case.configure else o)

            result = await Runtime(workspace, configure=configure).run(spec, "Start.")
            if not result.ok:
                raise RuntimeError(f"run failed: {result.error}\n{model.describe_log()}")
        return model.requests()


@dataclass(frozen=True)
class Priced:
    """A run's dollars (its requests, plus `later` coordinator re-reads of its final context)."""

    usd: float
    context: int  # tokens of the coordinator's last request
    requests: list[RecordedRequest]
    row: Row

    def at(self, later: int) -> float:
        return self.usd + later * self.context * self.row.price.cache_read / 1e6


def scaled(usage: Mapping[str, Any] | None, tpc: float) -> dict[str, int]:
    usage = usage or {}
    keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")
    return {k: round(int(usage.get(k) or 0) * tpc / SIM_TPC) for k in keys}


def price(requests: list[RecordedRequest], row: Row) -> Priced:
    usd = 0.0
    for r in requests:
        u = scaled(r.usage, row.tpc)
        usd += row.price.cost(
            input=u["input_tokens"],
            output=u["output_tokens"],
            cache_read=u["cache_read_input_tokens"],
            cache_creation=u["cache_creation_input_tokens"],
        )
    last = scaled([r for r in requests if r.caller == "main"][-1].usage, row.tpc)
    context = last["input_tokens"] + last["cache_read_input_tokens"] + last["cache_creation_input_tokens"]
    return Priced(usd, context, requests, row)


def run(case: Case, row: Row) -> Priced:
    return price(asyncio.run(run_case(case, row)), row)


def tokens(chars: float, row: Row) -> float:
    return chars * row.tpc


def money(usd: float) -> str:
    return f"${usd:.4f}" if abs(usd) < 0.1 else f"${usd:.3f}"


def kilo(n: float) -> str:
    return f"{n / 1000:.1f}k" if abs(n) >= 1000 else f"{n:.0f}"


# --- the base measurement ------------------------------------------------------------------------------

ITEM = "items/item.txt"


def item_text(size: int) -> str:
    line = "item line: a value, a path and a count that the coordinator wants to know.\n"
    return (line * (size // len(line) + 1))[:size]


def report(chars: int = REPORT_CHARS) -> str:
    head = f"Done: {ITEM} holds the item; the numbers below.\n"
    return (head + "- a finding with its number and file:line\n" * (chars // 40))[:chars]


ANALYST = worker(
    "Runs commands on the workspace's files and reports.",
    "You run what the mandate asks and report the result.",
)
MANDATE = f"Run `cat {ITEM}` and report what it holds. Workbench: .flower (long outputs to artifacts/)."


def inline_case(size: int) -> Case:
    from flower.testing import bash

    return Case(
        main=[bash(f"cat {ITEM}"), "done"], workers={"analyst": (ANALYST, [])}, files={ITEM: item_text(size)}
    )


def delegated_case(size: int, *, starts: int = 1) -> Case:
    from flower.testing import agent, bash

    main = [agent("analyst", MANDATE.replace("Run", f"[{n}] Run")) for n in range(starts)]
    return Case(
        main=[*main, "done"],
        workers={"analyst": (ANALYST, [bash(f"cat {ITEM}"), report()] * starts)},
        files={ITEM: item_text(size)},
    )


def _prefix_chars(request: RecordedRequest) -> int:
    """Chars of a worker's first request before its mandate: tools, system, the CLI's first message."""
    body = request.body
    messages = json.dumps(body.get("messages", []), ensure_ascii=False)
    mandate = len(request.last_user_text.split("\n", 1)[-1]) if request.last_user_text else 0
    return (
        len(json.dumps(body.get("tools", [])))
        + len(json.dumps(body.get("system", [])))
        + len(messages)
        - mandate
    )


def base(row: Row) -> dict[str, Any]:
    """One delegation against the same item inline, at two sizes; the prefix of a first and a later start."""
    out: dict[str, Any] = {"row": row.label, "tpc": row.tpc, "price": row.price}
    diffs = {}
    for size in SIZES:
        inline, deleg = run(inline_case(size), row), run(delegated_case(size), row)
        diffs[size] = (inline, deleg)
    inline, deleg = diffs[SIZES[0]]
    two = run(delegated_case(SIZES[0], starts=2), row)
    first = next(r for r in deleg.requests if r.caller == "analyst")
    later = [r for r in two.requests if r.caller == "analyst" and not r.tool_results][1]
    cold, warm = scaled(first.usage, row.tpc), scaled(later.usage, row.tpc)
    p = row.price
    prefix = tokens(_prefix_chars(first), row)
    out["prefix_tokens"] = prefix
    out["prefix_first_usd"] = prefix * p.cache_creation / 1e6
    out["prefix_later_usd"] = (
        warm["cache_read_input_tokens"] * p.cache_read / 1e6
        + max(0, prefix - warm["cache_read_input_tokens"]) * p.cache_creation / 1e6
    )
    out["prefix_read_tokens"] = warm["cache_read_input_tokens"]
    out["first_written_tokens"] = cold["cache_creation_input_tokens"]
    main_call = [r for r in deleg.requests if r.caller == "main"][1]
    frame = main_call.tool_results[-1].text
    out["frame_chars"] = len(frame) - len(report().rstrip("\n")) - report().count("\n") * 2
    out["report_chars"] = REPORT_CHARS
    out["mandate_chars"] = len(MANDATE)
    out["worker_requests"] = sum(1 for r in deleg.requests if r.caller == "analyst")
    for k in LATER:
        d = {s: diffs[s][1].at(k) - diffs[s][0].at(k) for s in SIZES}
        slope = (d[SIZES[1]] - d[SIZES[0]]) / (SIZES[1] - SIZES[0])
        fixed = d[SIZES[0]] - slope * SIZES[0]
        out[f"fixed_first_{k}"] = fixed
        out[f"fixed_later_{k}"] = fixed - out["prefix_first_usd"] + out["prefix_later_usd"]
        out[f"break_even_first_{k}"] = -fixed / slope if slope < 0 else None
        later_fixed = out[f"fixed_later_{k}"]
        out[f"break_even_later_{k}"] = -later_fixed / slope if slope < 0 else None
    out["two_delegations_usd"] = two.at(LATER[0])
    return out


def base_table(results: Sequence[dict[str, Any]]) -> str:
    """The fixed price's parts per row: tokens and dollars; the price over inline; the break-even size."""
    k = LATER[0]
    head = "| part of one delegation | " + " | ".join(f"{r['row']}: tokens | $" for r in results) + " |"
    lines = [head, "|---|" + "---:|---:|" * len(results)]

    def line(label: str, cells: Iterable[tuple[str, str]]) -> None:
        lines.append(f"| {label} | " + " | ".join(f"{a} | {b}" for a, b in cells) + " |")

    def kept(r: dict[str, Any], chars: float, output: bool = False) -> tuple[str, str]:
        p, t = r["price"], chars * r["tpc"]
        usd = t * (p.cache_creation + k * p.cache_read + (p.output if output else 0.0)) / 1e6
        return kilo(t), money(usd)

    first = results[0]
    line(
        "worker's prefix, first start: tools, system prompt, its first message; written",
        [(kilo(r["prefix_tokens"]), money(r["prefix_first_usd"])) for r in results],
    )
    line(
        "worker's prefix, a later start within 5 minutes; read",
        [(kilo(r["prefix_read_tokens"]), money(r["prefix_later_usd"])) for r in results],
    )
    line(
        f"mandate ({first['mandate_chars']} chars): kept by the coordinator, {k} re-reads",
        [kept(r, r["mandate_chars"]) for r in results],
    )
    line(
        f"report ({REPORT_CHARS} chars): written by the worker, kept, {k} re-reads",
        [kept(r, REPORT_CHARS, output=True) for r in results],
    )
    line(
        f"hand-back frame ({first['frame_chars']} chars): kept, {k} re-reads",
        [kept(r, r["frame_chars"]) for r in results],
    )

    def rest(r: dict[str, Any]) -> float:
        parts = [kept(r, r["mandate_chars"]), kept(r, REPORT_CHARS, True), kept(r, r["frame_chars"])]
        return r[f"fixed_first_{k}"] - r["prefix_first_usd"] - sum(float(b[1:]) for _, b in parts)

    line(
        "the rest: the worker's second request re-reads its context; the coordinator writes the call",
        [("", money(rest(r))) for r in results],
    )
    for when in ("first", "later"):
        line(
            f"**price over doing the item inline**, {when} start ({k} later requests; measured whole)",
            [("", f"**{money(r[f'fixed_{when}_{k}'])}**") for r in results],
        )
    for when in ("first", "later"):
        cells = []
        for r in results:
            found = [r.get(f"break_even_{when}_{n}") for n in LATER]
            cells.append(("", " / ".join("never" if f is None else f"{kilo(f)} chars" for f in found)))
        line(f"break-even item output, {when} start, {' / '.join(map(str, LATER))} later requests", cells)
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--only", default="base,levers", help="base, levers, or both (comma-separated)")
    parser.add_argument("--tpc", type=float, default=None, help="tokens per char for every row (e.g. 0.25)")
    parser.add_argument("--rows", default="sonnet,opus", help="sonnet, opus, or both")
    parser.add_argument("--json", type=Path, default=None, help="write the numbers here too")
    args = parser.parse_args(argv)
    rows = [
        Row(row.label, row.model, row.price, row.family, RATES[row.family] if args.tpc is None else args.tpc)
        for row in ROWS
        if any(w in row.label.lower() for w in args.rows.split(","))
    ]
    out: dict[str, Any] = {"tokens_per_char": {r.family: r.tpc for r in rows}}
    print("Rows: " + "; ".join(f"{r.label} at {r.tpc:.3f} tokens/char ({r.family})" for r in rows) + "\n")
    only = set(args.only.split(","))
    if "base" in only:
        found = [base(row) for row in rows]
        out["base"] = found
        print(base_table(found) + "\n")
    if "levers" in only:
        import delegation_levers

        table, numbers = delegation_levers.measure(rows)
        out["levers"] = numbers
        print(table)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
