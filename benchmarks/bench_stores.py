"""Layer 4 costs: SQLite append throughput, load + rewrite time and memory.

Run from the repository root: `python benchmarks/bench_stores.py`. Transcripts are generated with the
CLI-shaped builder of `tests/stores/transcripts.py`: each turn has attachments, a text block, one to three
Bash calls (half of them ephemeral, `git status`, `ls`, `cat`), results of 100 to 3,000 characters, and
now and then a denied call. Expiry uses the real glance predicate; each load comes ten minutes after the
history was written (the prompt cache is cold: every rewrite is decided). Prints a markdown table. What the
rewrites do to the prompt cache is measured on real sessions: `benchmarks/bench_corpus.py`.
"""

from __future__ import annotations

import gc
import importlib.util
import itertools
import json
import platform
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio

from flower.stores import PruningSessionStore, SqliteSessionStore

SIZES = (1_000, 10_000, 50_000)
ROUNDS = 5
BATCH = 100  # entries per append: the SDK flushes once per turn, a few to a few hundred entries
KEY = {"project_key": "bench", "session_id": "5e55a0e0-0000-4000-8000-000000000000"}
EPHEMERAL = ["git status -s", "ls -la src", "cat setup.cfg", "git diff --stat", "git log --oneline -5"]
WORK = ["pytest -q tests/unit", "make build", "python3 tools/migrate.py", "rm -rf build", "npm run lint"]


def _builder() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "tests" / "stores" / "transcripts.py"
    spec = importlib.util.spec_from_file_location("_store_transcripts", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


TRANSCRIPTS = _builder()


_TEXT = "".join(random.Random(1).choice("abcdefgh \n") for _ in range(100_000))


def transcript(size: int, seed: int = 7) -> Any:
    """A transcript of about `size` entries (a little over: the last turn completes)."""
    rng = random.Random(seed)
    t = TRANSCRIPTS.Transcript()
    serial = 0
    t.prompt("Start the migration.")
    while len(t.entries) < size:
        t.attachment("date")
        t.attachment("prompt_snapshot")
        blocks: list[dict[str, Any]] = [{"type": "text", "text": "Next step. " * rng.randint(1, 8)}]
        ids = []
        for _ in range(rng.randint(1, 3)):
            command = rng.choice(EPHEMERAL if rng.random() < 0.5 else WORK)
            ident = f"toolu_{serial:08d}"
            serial += 1
            ids.append((ident, command))
            blocks.append(t.bash(command, ident))
        t.assistant(*blocks)
        for ident, command in ids:
            if command.startswith("rm "):
                t.result(ident, "PreToolUse:Bash hook error: no deletions here", denial="permission-rule")
            else:
                start = rng.randrange(len(_TEXT) - 3000)
                t.result(ident, _TEXT[start : start + rng.randint(100, 3000)])
        if rng.random() < 0.1:
            t.prompt("Keep going.")
    return t


async def _append_rate(entries: list[dict[str, Any]], directory: Path) -> float:
    async with SqliteSessionStore(directory / f"append-{len(entries)}.db") as store:
        started = time.perf_counter()
        for start in range(0, len(entries), BATCH):
            await store.append(KEY, entries[start : start + BATCH])  # type: ignore[arg-type]
        return len(entries) / (time.perf_counter() - started)


async def _load_times(path: Path, rounds: int) -> tuple[float, float, int]:
    """Median seconds of the SQLite load alone and of load + rewrite (the full stack), and entries out."""
    loads, totals = [], []
    out = 0
    async with SqliteSessionStore(path) as sqlite:
        stack = PruningSessionStore(sqlite)
        stack.clock = lambda: TRANSCRIPTS.COLD  # ten minutes later: the cache is cold, not an idle hour
        for _ in range(rounds):
            started = time.perf_counter()
            await sqlite.load(KEY)  # type: ignore[arg-type]
            loads.append(time.perf_counter() - started)
            started = time.perf_counter()
            rewritten = await stack.load(KEY)  # type: ignore[arg-type]
            totals.append(time.perf_counter() - started)
            out = len(rewritten or [])
    return statistics.median(loads), statistics.median(totals), out


async def _peak_memory(path: Path) -> int:
    async with SqliteSessionStore(path) as sqlite:
        stack = PruningSessionStore(sqlite)
        stack.clock = lambda: TRANSCRIPTS.COLD
        await stack.load(KEY)  # type: ignore[arg-type]  # warm: glance parser, connection
        tracemalloc.start()
        rewritten = await stack.load(KEY)  # type: ignore[arg-type]
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        del rewritten
    return peak


def _table(header: list[str], align: str) -> None:
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---:" if a == "r" else "---" for a in align) + "|")


def _row(*cells: object) -> None:
    print("| " + " | ".join(str(c) for c in cells) + " |")


async def main() -> None:
    python = f"{platform.python_implementation()} {platform.python_version()}"
    print(f"# bench_stores: {python}, {platform.machine()}\n")
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        rows = []
        for size in SIZES:
            entries = transcript(size).entries
            count = len(entries)
            chars = sum(len(json.dumps(e)) for e in entries)
            rate = await _append_rate(entries, directory)
            del entries  # measure loads without the generated copy alive (the GC would walk it too)
            gc.collect()
            path = directory / f"append-{count}.db"
            load, total, out = await _load_times(path, ROUNDS)
            peak = await _peak_memory(path)
            rows.append((count, chars, rate, load, total, out, peak))

        print("## Append and load\n")
        print(f"Appends in batches of {BATCH}. Load: SQLite alone. Load + rewrite: `PruningSessionStore`")
        print(f"defaults (prune, expiry with glance). Medians of {ROUNDS}.")
        print("Peak: the tracemalloc peak of one load + rewrite.\n")
        _table(
            [
                "entries",
                "JSON MB",
                "append entries/s",
                "load s",
                "load + rewrite s",
                "rewrite s",
                "out",
                "peak MB",
            ],
            "rrrrrrrr",
        )
        for count, chars, rate, load, total, out, peak in rows:
            _row(
                f"{count:,}",
                f"{chars / 1e6:.1f}",
                f"{rate:,.0f}",
                f"{load:.3f}",
                f"{total:.3f}",
                f"{total - load:.3f}",
                f"{out:,}",
                f"{peak / 1e6:.1f}",
            )
        print()
        for before, after in itertools.pairwise(rows):
            (small, _, _, _, t_small, _, m_small), (large, _, _, _, t_large, _, m_large) = before, after
            time_ratio = (t_large / large) / (t_small / small)
            memory_ratio = (m_large / large) / (m_small / small)
            print(
                f"Growth {small:,} -> {large:,} entries: load + rewrite time per entry x{time_ratio:.2f}, "
                f"peak memory per entry x{memory_ratio:.2f} (x1.00 = linear)."
            )


if __name__ == "__main__":
    anyio.run(main)
