"""The deterministic summariser behind both the CLI's compaction and flower's handoff.

One fact-keeping model for both, so the comparison is about structure and budget, not summary quality:
- every user constraint visible in the request is kept;
- every other fact visible in the request is kept with probability RHO, seeded by (fact, event number),
  so the same fact at the same event is kept or lost alike in every strategy;
- the frontier (where the work stands) is always kept: both templates ask for it (the CLI's "Current
  work / next step", flower's "Doing now / Next step"), so no strategy redoes or skips work;
- a fixed body of FILLER chars stands for the narrative part, the same size for both.
flower's handoff template also has "Where things are": the pointers (spill files, saved outputs) visible
in the request are listed there. The CLI adds its own pointer after a compaction: the transcript path.
"""

from __future__ import annotations

import random

from .actions import Fact, Workload
from .probes import CLI_POINTER, SPILL_POINTER, View, prints

RHO = 0.7
FILLER = 6_000


def kept_facts(view: View, workload: Workload, event: int) -> list[Fact]:
    """The facts a summary written from this request keeps (constraints always, others with RHO)."""
    kept = [c for c in workload.constraints if view.has(c.text)]
    for fact in workload.facts:
        if fact.where == "task" or not view.has(fact.text):
            continue
        if random.Random(f"{fact.key}-{event}").random() < RHO:
            kept.append(fact)
    return kept


def pointer_lines(view: View, workload: Workload) -> list[str]:
    """`label -> path` for every output whose spill pointer or saved-output path the request shows."""
    lines: list[str] = []
    labels = [*workload.labels, *(f.label for f in workload.facts if f.label)]
    for pair in view.pairs:
        label = next((lb for lb in labels if prints(pair, lb)), None)
        for pattern in (SPILL_POINTER, CLI_POINTER):
            match = pattern.search(pair.result)
            if label and match:
                lines.append(f"- {label} -> {match.group(1)}")
    for text in view.strings:  # lines a worker's report or an earlier handoff already gave
        for line in text.splitlines():
            stripped = line.strip()
            if stripped.startswith("- ") and " -> /" in stripped and stripped not in lines:
                lines.append(stripped)
    return list(dict.fromkeys(lines))


def _filler(chars: int) -> str:
    rng = random.Random(chars)
    words = "the work went on as planned with checks and small fixes along the way".split(" ")  # noqa: SIM905
    out: list[str] = []
    while sum(len(w) + 1 for w in out) < chars:
        out.append(rng.choice(words))
    return " ".join(out)[:chars]


def compaction_summary(view: View, workload: Workload, event: int, frontier: str) -> str:
    """What the scripted model answers to the CLI's compaction request."""
    facts = "\n".join(f"- {f.text}" for f in kept_facts(view, workload, event)) or "- none"
    return (
        f"<analysis>{_filler(400)}</analysis>\n<summary>\n1. Primary request: {workload.title}\n"
        f"2. Facts and constraints:\n{facts}\n3. Current work: {frontier}\n"
        f"4. Narrative: {_filler(FILLER)}\n</summary>"
    )


def handoff_document(view: View, workload: Workload, event: int, frontier: str) -> str:
    """What the scripted model answers to flower's handoff prompt (five sections, parsed by flower)."""
    facts = "\n".join(f"- {f.text}" for f in kept_facts(view, workload, event)) or "none"
    where = "\n".join(pointer_lines(view, workload)) or "nothing on disk"
    return (
        f"## Doing now\n{workload.title}: {frontier}\n## Decided\n{facts}\n{_filler(FILLER)}\n"
        f"## Dead ends\nnone\n## Next step\n{frontier}\n## Where things are\n{where}"
    )
