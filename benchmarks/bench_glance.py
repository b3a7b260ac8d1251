"""How fast is `is_ephemeral`, and how many benign commands does it refuse? Prints markdown tables.

Run from the repository root: `python benchmarks/bench_glance.py` (`--benign` for the refusal table
alone, `--refused` to list the refused benign commands with their reasons). The speed rows use the
test table in `tests/glance/table.py` and worst-case inputs; the refusal rate uses the hand-written
corpus of read-only commands in `benchmarks/glance_corpus.py`.
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import tree_sitter
import tree_sitter_bash

from flower._glance import glance_verdict, is_ephemeral

ROUNDS = 5
ROUND_SECONDS = 0.4


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_glance_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _calls_per_second(commands: Sequence[str], check: object = is_ephemeral) -> float:
    """Median over ROUNDS rounds of calls per second, each round cycling through `commands`."""
    assert callable(check)
    rates = []
    for _ in range(ROUNDS):
        calls = 0
        start = time.perf_counter()
        while (elapsed := time.perf_counter() - start) < ROUND_SECONDS:
            for command in commands:
                check(command)
            calls += len(commands)
        rates.append(calls / elapsed)
    return statistics.median(rates)


ROOT = Path(__file__).resolve().parent.parent
WORST = {
    "1,000 commands joined by &&": " && ".join(["ls"] * 1_000),
    "1,600 commands joined by pipes": " | ".join(["cat"] * 1_600),
    "3,300 lines": "ls\n" * 3_300,
    "lines the grammar misreads": ("cat f | sort | uniq -c\nls && pwd\n" * 400)[:9_990],
    "3,000 nested $(": "ls " + "$(" * 3_000 + ")" * 3_000,
    "9,000 braces": "echo " + "{" * 9_000,
    "10,000 characters in one word": "ls " + "a" * 9_997,
    "over the length cap": "ls " + "a" * 10_000,
}
"""Inputs that take longest: each still gets a verdict, in bounded time."""


def benign() -> None:
    corpus = _load(ROOT / "benchmarks" / "glance_corpus.py").BENIGN
    print("| benign commands | count | refused | refused (%) |")
    print("|---|---:|---:|---:|")
    total = refused = 0
    for label, commands in corpus.items():
        count = sum(not is_ephemeral(c) for c in commands)
        total, refused = total + len(commands), refused + count
        print(f"| {label} | {len(commands)} | {count} | {100 * count / len(commands):.1f} |")
    print(f"| **all** | **{total}** | **{refused}** | **{100 * refused / total:.1f}** |")


def list_refused() -> None:
    corpus = _load(ROOT / "benchmarks" / "glance_corpus.py").BENIGN
    for label, commands in corpus.items():
        for command in commands:
            verdict = glance_verdict(command)
            if not verdict.ephemeral:
                print(f"{label:10s} {command!r}: {verdict.reason}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--benign", action="store_true", help="only the refusal table")
    parser.add_argument("--refused", action="store_true", help="list the refused benign commands")
    options = parser.parse_args()
    if options.refused:
        list_refused()
        return
    if options.benign:
        benign()
        return
    table = _load(ROOT / "tests" / "glance" / "table.py")
    every = [command for command, _, _ in table.CASES]
    joinable = table.JOINABLE
    short = [c for c in every if len(c) <= 20]
    compound8 = [" && ".join(joinable[i : i + 8]) for i in range(0, len(joinable) - 8, 8)]
    compound24 = [" | ".join(joinable[i : i + 24]) for i in range(0, len(joinable) - 24, 12)]
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))

    def parse_only(command: str) -> object:
        return parser.parse(command.encode())

    rows = [
        ("test table, every row", every, is_ephemeral),
        ("short commands (<= 20 chars)", short, is_ephemeral),
        ("compounds of 8 glances joined by &&", compound8, is_ephemeral),
        ("compounds of 24 glances joined by pipes", compound24, is_ephemeral),
        ("baseline: tree-sitter parse alone, every row", every, parse_only),
        *((f"worst case: {label}", [command], is_ephemeral) for label, command in WORST.items()),
    ]
    print(f"Python {platform.python_version()}, tree-sitter {_version('tree-sitter')}, ", end="")
    print(f"tree-sitter-bash {_version('tree-sitter-bash')}, {ROUNDS} rounds of {ROUND_SECONDS} s\n")
    print("| workload | commands | mean length (chars) | calls/s (median) |")
    print("|---|---:|---:|---:|")
    for label, commands, check in rows:
        mean = statistics.mean(len(c) for c in commands)
        print(f"| {label} | {len(commands)} | {mean:.0f} | {_calls_per_second(commands, check):,.0f} |")
    print()
    benign()


def _version(distribution: str) -> str:
    from importlib.metadata import version

    return version(distribution)


if __name__ == "__main__":
    main()
