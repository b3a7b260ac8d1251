"""The five workloads, as seeded generators (sizes scaled down to fit the time budget).

Output sizes follow a lognormal law (p50 / p90 given per workload, clipped). Needle facts sit at the head
(inside the first 400 chars), in the middle (30-70 %) or at the tail (inside the last 100 chars). Each
builder takes `quick` for the smoke run. docs/benchmarks.md lists the scaled numbers.
"""

from __future__ import annotations

import math
import random

from .actions import (
    Action,
    Denied,
    Fact,
    Idle,
    Output,
    Pause,
    Probe,
    ReadFile,
    Reuse,
    Run,
    StateCheck,
    Subtask,
    Workload,
    WriteFile,
)
from .gen import body

PLACES = ("head", "middle", "tail")


def _value(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghjkmnpqrstuvwxyz23456789") for _ in range(6))


def _size(rng: random.Random, p50: int, p90: int, low: int, high: int) -> int:
    sigma = math.log(p90 / p50) / 1.2816
    return int(min(high, max(low, rng.lognormvariate(math.log(p50), sigma))))


def _gen(label: str) -> str:
    return f"python3 gen.py {label}"


def _test(label: str, k: int, rng: random.Random, size: int) -> tuple[Output, Fact]:
    failed = rng.randint(1, 5) if k % 2 else 0
    fact = Fact(f"T{k:02d}", f"FAIL{failed}" if failed else "PASS", label, "verdict")
    verdict = f"== result {fact.text}: {failed} failed, {120 - failed} passed =="
    return Output(label, "test", size, rng.randrange(10**6), verdict=verdict, exit=1 if failed else 0), fact


def needles(quick: bool, count: int | None = None) -> Workload:
    """W1: mixed outputs, needles in the big ones, test verdicts at the end, probes at 50/75/100 %.

    `count`: how many outputs (48 in the full suite, 16 quick; the scaling table runs more and fewer).
    """
    rng = random.Random(101)
    count, cap = (count or 16, 40_000) if quick else (count or 48, 120_000)
    carriers, planted = (2, 4) if quick else (12, 20)
    outputs: dict[str, Output] = {}
    verdicts: dict[int, Fact] = {}
    for i in range(count):
        label = f"out-{i:03d}"
        if i % 7 == 6:
            outputs[label], verdicts[i] = _test(label, i // 7, rng, _size(rng, 8_000, 40_000, 2_000, cap))
        else:
            outputs[label] = Output(label, "log", _size(rng, 3_000, 40_000, 300, cap), rng.randrange(10**6))
    plain = [i for i in range(count) if i not in verdicts]
    step = len(plain) / carriers
    chosen = [plain[int(step * j + step / 2)] for j in range(carriers)]
    facts: dict[int, list[Fact]] = {i: [] for i in chosen}
    for j in range(planted):
        carrier, slot = j % carriers, j // carriers
        i = chosen[carrier]
        once = carrier % 4 == 3
        place = PLACES[(carrier + slot) % 3]  # two needles of one output never share a place
        facts[i].append(Fact(f"W1-F{j:02d}", _value(rng), f"out-{i:03d}", place, not once))
    for i, planted_here in facts.items():
        old = outputs[f"out-{i:03d}"]
        kind = "log" if planted_here[0].idempotent else "once"
        outputs[old.label] = Output(old.label, kind, max(old.size, 5_000), old.seed, tuple(planted_here))
    points = {count // 2, 3 * count // 4, count}
    actions: list[Action] = []
    asked: set[str] = set()
    for i in range(count):
        actions.append(Run(f"out-{i:03d}", _gen(f"out-{i:03d}")))
        if i in verdicts:
            actions.append(Probe(verdicts[i], verdict=True))
        if i + 1 in points:
            for j in sorted(facts):
                if j <= i:
                    actions += [Probe(f) for f in facts[j] if f.key not in asked]
                    asked.update(f.key for f in facts[j])
    return Workload(
        "w1",
        "W1 needles in big outputs",
        "Investigate the service logs: run each command you are given, keep track of what they say.",
        tuple(actions),
        outputs,
    )


def edit_test(quick: bool) -> Workload:
    """W2: an edit/test loop over a changing state, a 2-hour idle gap and a resume, then probes."""
    rng = random.Random(202)
    cycles, pause_after = (3, 2) if quick else (9, 6)
    files = {"state/status.txt": "STATE v 0 (current)\n"}
    read_facts: list[Fact] = []
    for m in range(6):
        path = f"src/mod_{m}.py"
        needles_here: tuple[Fact, ...] = ()
        if m % 2 == 0:
            fact = Fact(f"W2-R{m}", _value(rng), path, "middle")
            needles_here = (fact,)
            read_facts.append(fact)
        spec = Output(
            path, "log", _size(rng, 6_000, 12_000, 3_000, 15_000), rng.randrange(10**6), needles_here
        )
        files[path] = body(spec.spec(), spec.size) + "\n"
    outputs = {"external": Output("external", "edit", 0, 999)}
    actions: list[Action] = []
    for c in range(cycles):
        test, verdict = _test(
            f"test-{c}", c, rng, _size(rng, 8_000, 40_000, 2_000, 30_000 if quick else 60_000)
        )
        outputs[f"edit-{c}"] = Output(f"edit-{c}", "edit", 0, rng.randrange(10**6))
        outputs[test.label] = test
        actions += [
            Run(f"status-{c}", "cat state/status.txt", glance=True, check=True),
            ReadFile(f"read-{c}", f"src/mod_{c % 6}.py"),
            Run(f"edit-{c}", _gen(f"edit-{c}")),
            Run(test.label, _gen(test.label)),
            Probe(verdict, verdict=True),
            Run(f"ls-{c}", "ls -la src state", glance=True, check=True),
        ]
        if c % 2:
            actions.append(Run(f"diff-{c}", "cat state/status.txt", glance=True, check=True))
        if c == pause_after - 1:
            actions += [Idle(7_200), Pause(external_change=True), StateCheck()]
            actions += [Probe(f) for f in read_facts if int(f.key[-1]) <= c]
    return Workload(
        "w2",
        "W2 edit/test loop with a resume",
        "Fix the failing tests: edit, test, look at the state, repeat.",
        tuple(actions),
        outputs,
        files,
    )


def fan_out(quick: bool, subtasks: int | None = None) -> Workload:
    """W3: subtasks with many large outputs; a finding per subtask, some reports paste logs.

    `subtasks`: how many investigations (6 in the full suite, 2 quick; the scaling table varies it).
    """
    rng = random.Random(303)
    calls, cap, pasted = ((2, 3), 30_000, 4_000) if quick else ((5, 8), 60_000, 10_000)
    subtasks = subtasks or (2 if quick else 6)
    outputs: dict[str, Output] = {}
    actions: list[Action] = []
    later: list[Probe] = []
    for s in range(subtasks):
        labels = [f"s{s}-{c:02d}" for c in range(rng.randint(*calls))]
        sizes = {label: _size(rng, 6_000, 30_000, 1_000, cap) for label in labels}
        big = max(labels, key=sizes.__getitem__)
        other = next(label for label in labels if label != big)
        finding = Fact(f"S{s}-RESULT", _value(rng), big, "middle")
        detail = Fact(f"S{s}-DETAIL", _value(rng), other, PLACES[2 * (s % 2)])
        for label in labels:
            planted = (finding,) if label == big else (detail,) if label == other else ()
            size = max(sizes[label], 5_000) if planted else sizes[label]
            outputs[label] = Output(label, "log", size, rng.randrange(10**6), planted)
        steps: tuple[Action, ...] = (*(Run(label, _gen(label)) for label in labels), Probe(finding))
        actions.append(Subtask(f"subtask {s}", steps, finding, pasted if s % 3 == 0 else 0))
        later += [Probe(finding), Probe(detail)]
    return Workload(
        "w3",
        "W3 delegation fan-out",
        f"Run the {subtasks} investigations, then answer questions about what they found.",
        (*actions, *later),
        outputs,
    )


def marathon(quick: bool) -> Workload:
    """W4: a long run at the window limit: pages to read, work items, decisions, five user constraints."""
    rng = random.Random(404)
    rounds, pad = (24, 12_000) if quick else (80, 2_600)
    constraints = tuple(Fact(f"C{i}", _value(rng), "", "task") for i in range(1, 6))
    files: dict[str, str] = {}
    outputs: dict[str, Output] = {}
    actions: list[Action] = []
    decisions: list[tuple[int, Fact]] = []
    for k in range(rounds):
        label = f"page-{k:03d}"
        planted: tuple[Fact, ...] = ()
        if k % 10 == 5:
            fact = Fact(f"D{k:03d}", _value(rng), label, "middle")
            planted = (fact,)
            decisions.append((k, fact))
        spec = Output(label, "log", _size(rng, 1_800, 3_200, 800, 3_800), rng.randrange(10**6), planted)
        files[f"docs/{label}.md"] = body(spec.spec(), spec.size) + "\n"
        actions.append(Run(label, f"cat docs/{label}.md", glance=True))
        if k % 5 == 4:
            item = f"item-{k:03d}"
            outputs[item] = Output(item, "log", _size(rng, 1_500, 3_000, 500, 3_800), rng.randrange(10**6))
            actions.append(Run(item, _gen(item)))
        actions += [Probe(f) for when, f in decisions if when == k - 30]
    actions += [Probe(f) for _, f in decisions] + [Probe(c) for c in constraints]
    task = (
        "Work through the pages and items. User constraints: " + "; ".join(c.text for c in constraints) + "."
    )
    return Workload(
        "w4", "W4 marathon at the window", task, tuple(actions), outputs, files, constraints, pad=pad, chunk=1
    )


def hostile(quick: bool) -> Workload:
    """W5: denials (some repeated after a resume), network-error traces, failed large writes, reuse."""
    rng = random.Random(505)
    fillers, denials, fetches, writes, reuses = (
        (6, (0, 1, 0), 1, 1, 2) if quick else (20, (0, 1, 2, 3, 4, 0, 1, 3), 4, 3, 5)
    )
    commands = (
        "rm -rf build",
        "curl -s -X POST https://example.invalid/upload",
        "rm -f cache.db",
        "git push origin main",
        "curl -s https://example.invalid/health",
    )
    outputs: dict[str, Output] = {}
    files: dict[str, str] = {}
    items: list[list[Action]] = []
    for k in range(fillers):
        label = f"job-{k:02d}"
        outputs[label] = Output(label, "log", _size(rng, 2_000, 8_000, 300, 20_000), rng.randrange(10**6))
        items.append([Run(label, _gen(label))])
    for k in range(fetches):
        label = f"fetch-{k}"
        outputs[label] = Output(
            label, "fetch", _size(rng, 9_000, 16_000, 5_000, 20_000), rng.randrange(10**6)
        )
        items.append([Run(label, _gen(label)), Run(f"{label}-retry", _gen(label) + " --retry")])
    for k in range(writes):
        files[f"data/export-{k}.json"] = '{"rows": []}\n'  # a file where the write expects a directory
        items.append([WriteFile(f"write-{k}", f"data/export-{k}.json/rows.json", 30_000)])
    items += [[Reuse("{scripts}/analyze.py", 3_000)] for _ in range(reuses)]
    rng.shuffle(items)
    first = [Denied(commands[i]) for i in denials[: len(set(denials))]]
    repeats = [Denied(commands[i]) for i in denials[len(set(denials)) :]]
    for n, denial in enumerate(first):
        items.insert(1 + n * len(items) // max(1, len(first)) // 2, [denial])
    cut = 3 * len(items) // 5
    after = items[cut:]
    for n, denial in enumerate(repeats):
        after.insert(1 + n * len(after) // max(1, len(repeats)), [denial])
    actions = (
        [a for item in items[:cut] for a in item]
        + [Idle(1_800), Pause()]
        + [a for item in after for a in item]
    )
    return Workload(
        "w5",
        "W5 hostile leftovers and reuse",
        "Run the maintenance jobs; some things are not allowed here, the network is flaky.",
        tuple(actions),
        outputs,
        files,
        deny=("Bash(rm:*)", "Bash(curl:*)", "Bash(git push:*)"),
        chunk=6,
    )


def build(quick: bool) -> list[Workload]:
    """The five workloads, in order."""
    return [needles(quick), edit_test(quick), fan_out(quick), marathon(quick), hostile(quick)]


SCALES: dict[str, tuple[int, ...]] = {"w1": (24, 48, 72), "w3": (3, 6, 9)}
"""The scaling table's sizes (outputs for W1, investigations for W3); the middle one is the suite's."""
QUICK_SCALES: dict[str, tuple[int, ...]] = {"w1": (8, 16, 32), "w3": (1, 2, 4)}


def workload(key: str, quick: bool, size: int | None = None) -> Workload:
    """One workload by key (`w1`..`w5`), at the suite's size or (W1, W3) at `size`."""
    if key == "w1":
        return needles(quick, size)
    if key == "w3":
        return fan_out(quick, size)
    if size is not None:
        raise ValueError(f"{key} has one size only")
    builders = {"w2": edit_test, "w4": marathon, "w5": hostile}
    return builders[key](quick)
