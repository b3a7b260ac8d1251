"""How fast is `is_ephemeral`? Prints a markdown table of calls per second (median of 5 rounds).

Run from the repository root: `python benchmarks/bench_glance.py`. The commands come from the test
table in `tests/test_glance.py`, so the numbers follow the table as it grows.
"""

from __future__ import annotations

import importlib.util
import platform
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import tree_sitter
import tree_sitter_bash

from flower.glance import is_ephemeral

ROUNDS = 5
ROUND_SECONDS = 0.4


def _load_table() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "tests" / "test_glance.py"
    spec = importlib.util.spec_from_file_location("_glance_table", path)
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


def main() -> None:
    table = _load_table()
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
    ]
    print(f"Python {platform.python_version()}, tree-sitter {_version('tree-sitter')}, ", end="")
    print(f"tree-sitter-bash {_version('tree-sitter-bash')}, {ROUNDS} rounds of {ROUND_SECONDS} s\n")
    print("| workload | commands | mean length (chars) | calls/s (median) |")
    print("|---|---:|---:|---:|")
    for label, commands, check in rows:
        mean = statistics.mean(len(c) for c in commands)
        print(f"| {label} | {len(commands)} | {mean:.0f} | {_calls_per_second(commands, check):,.0f} |")


def _version(distribution: str) -> str:
    from importlib.metadata import version

    return version(distribution)


if __name__ == "__main__":
    main()
