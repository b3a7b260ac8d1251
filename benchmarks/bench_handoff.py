"""A 300-turn marathon on a 200k window: flower's handoff beside the CLI's own auto-compaction.

The scripted main thread makes 300 tool rounds. Its context is the real request size plus a residue of
2.2k tokens per round (the slope measured in a 10-hour run of the original design), reported to the CLI
through usage numbers, so the
real CLI's thresholds apply. Five user constraints sit in the task; eight facts appear in tool results
along the way. When asked for a handoff document (flower) or a summary (the CLI's compaction), the
scripted model writes one that keeps each fact visible in its request with probability 0.7 (seeded) and
every user constraint: the same summariser for both, so the comparison is about structure and budget, not
summary quality. At the end we count which constraints and facts are still in the main thread's request.

Run: python benchmarks/bench_handoff.py [--turns 300]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from dataclasses import dataclass, field

from flower import HandoffPolicy, Runtime, coordinator, worker
from flower.events import HandoffDone
from flower.testing import RecordedRequest, ScriptedModel, Usage, bash, reply

MODEL = "claude-sonnet-4-6"  # the CLI reports a 200,000-token window for it
WINDOW = 200_000
SLOPE = 2_200
CONSTRAINTS = [f"CONSTRAINT-{i}" for i in range(1, 6)]
TASK = "Run the marathon. User constraints: " + "; ".join(f"{c} holds" for c in CONSTRAINTS) + "."
KEEP = 0.7


@dataclass
class Marathon:
    """The scripted model of one variant, and what it saw."""

    turns: int
    variant: str
    done: int = 0
    facts: dict[int, str] = field(default_factory=dict)
    events: int = 0
    after: list[int] = field(default_factory=list)
    pending_after: bool = False
    contexts: list[int] = field(default_factory=list)
    final: RecordedRequest | None = None

    def __post_init__(self) -> None:
        step = max(1, self.turns // 9)
        self.facts = {step * k: f"FACT-{k}" for k in range(1, 9)}

    def summary(self, request: RecordedRequest) -> str:
        """The shared summariser: constraints always, each visible fact with probability KEEP (seeded)."""
        self.events += 1
        self.pending_after = True
        rng = random.Random(f"{self.variant}-{self.events}")
        kept = [c for c in CONSTRAINTS if c in request]
        kept += [f for f in self.facts.values() if f in request and rng.random() < KEEP]
        return "; ".join(kept) or "nothing"

    def main(self, request: RecordedRequest):  # type: ignore[no-untyped-def]
        if "Write the handoff document now" in request.last_user_text:
            return (
                f"## Doing now\nThe marathon, round {self.done}.\n## Decided\n{self.summary(request)}\n"
                "## Dead ends\nnone\n## Next step\nKeep running rounds.\n## Where things are\nnothing on disk"
            )
        context = request.sizes.total // 4 + request.turn * SLOPE
        if self.pending_after:
            self.after.append(context)
            self.pending_after = False
        self.contexts.append(context)
        if self.done >= self.turns:
            self.final = request
            return reply("MARATHON DONE", usage=Usage(input_tokens=10, cache_read_input_tokens=context))
        self.done += 1
        fact = self.facts.get(self.done)
        command = f"echo {fact}" if fact else f"echo round {self.done}"
        return reply(bash(command), usage=Usage(input_tokens=10, cache_read_input_tokens=context))

    def compact(self, request: RecordedRequest) -> str:
        return f"<analysis>a</analysis>\n<summary>{self.summary(request)}</summary>"


def run(variant: str, turns: int) -> dict[str, object]:
    marathon = Marathon(turns=turns, variant=variant)
    spec = coordinator("lead", "Run the marathon.", {"w": worker("Helps.", "You help.")}, model=MODEL)
    handoffs: list[HandoffDone] = []
    with tempfile.TemporaryDirectory() as workspace, ScriptedModel(strict=False) as model:
        model.script("main", marathon.main)
        model.script("compact", marathon.compact)
        flower = variant == "flower handoff"
        handoff: bool | HandoffPolicy = HandoffPolicy(max_generations=50) if flower else False
        rt = Runtime(workspace, handoff=handoff, configure=model.attach)
        start = time.perf_counter()

        def on_event(event: object) -> None:
            if isinstance(event, HandoffDone):
                handoffs.append(event)

        result = rt.run_sync(spec, TASK, on_event=on_event)
        wall = time.perf_counter() - start
        compactions = len(model.requests("compact"))
    final = marathon.final
    return {
        "variant": variant,
        "ok": result.ok and result.text == "MARATHON DONE",
        "events": len(handoffs) + compactions,
        "degraded": sum(h.degraded for h in handoffs),
        "after": [round(100 * c / WINDOW) for c in marathon.after],
        "peak": max(marathon.contexts),
        "input": sum(marathon.contexts),
        "constraints": sum(c in final for c in CONSTRAINTS) if final else 0,
        "facts": sum(f in final for f in marathon.facts.values()) if final else 0,
        "wall": wall,
        "error": result.error,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    args = parser.parse_args()
    rows = [run(variant, args.turns) for variant in ("flower handoff", "CLI auto-compaction")]
    print(f"{args.turns}-round marathon, {WINDOW:,}-token window, +{SLOPE:,} tokens per round (scripted)\n")
    print(
        "| strategy | finished | handoffs / compactions | context right after each (% of window) "
        "| peak context | constraints known at the end | facts known at the end | main-thread input (tokens) "
        "| wall (s) |"
    )
    print("|---|---|---:|---|---:|---:|---:|---:|---:|")
    for row in rows:
        after = ", ".join(f"{p}%" for p in row["after"]) or "-"  # type: ignore[attr-defined]
        degraded = f" ({row['degraded']} degraded)" if row["degraded"] else ""
        print(
            f"| {row['variant']} | {'yes' if row['ok'] else 'no: ' + str(row['error'])} "
            f"| {row['events']}{degraded} "
            f"| {after} | {row['peak']:,} | {row['constraints']}/{len(CONSTRAINTS)} | {row['facts']}/8 "
            f"| {row['input']:,} | {row['wall']:.1f} |"
        )


if __name__ == "__main__":
    main()
