"""What does spill_guard keep out of the context, and what does it cost? Prints markdown tables.

Run from the repository root: `python benchmarks/bench_spill.py`.

1. Resident context: a scripted run through the real CLI. The main thread reads two large files itself,
   then delegates to a worker (foreground) that runs eight commands with large outputs (6k to 50k chars:
   Bash, Read, Grep) and reports. For every request, the chars of `messages` (the history the model
   re-reads) are counted, per caller, without spill, with the original design's head-only preview, and
   with head + tail. Same script each time; only the hooks differ.
2. Cost: `spill_guard` called directly on a Bash output of 1, 10 and 50 MB (median of 3 calls), with the
   peak of Python allocations during the call (tracemalloc, a separate call).
"""

from __future__ import annotations

import asyncio
import platform
import statistics
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from claude_agent_sdk import AgentDefinition

from flower._spill import SpillPolicy, spill_guard, spill_hooks
from flower._workbench import Workbench
from flower.testing import ScriptedModel, agent, bash, read, tool_use

SIZES = (6_000, 9_000, 12_000, 20_000, 28_000, 50_000)
CONFIGS: dict[str, SpillPolicy | None] = {
    "no spill": None,
    "spill, head 400": SpillPolicy(),
    "spill, head 400 + tail 400": SpillPolicy(tail=400),
}


@dataclass
class Resident:
    caller: str
    requests: int
    mean: int
    peak: int
    last: int


def _python(chars: int, letter: str) -> str:
    return f"python3 -c 'print(\"{letter}\"*{chars})'"


async def resident(policy: SpillPolicy | None) -> tuple[list[Resident], int, int]:
    """Per-caller resident chars of one scripted run; also the number of spills and the chars moved."""
    with tempfile.TemporaryDirectory(prefix="flower-bench-spill-") as tmp:
        workspace = Path(tmp)
        (workspace / "log-a.txt").write_text("".join(f"a {i:05d} " + "." * 70 + "\n" for i in range(250)))
        (workspace / "log-b.txt").write_text("".join(f"b {i:05d} " + "," * 70 + "\n" for i in range(500)))
        wb = Workbench(workspace)
        worker_steps: list[Any] = [bash(_python(n, "w")) for n in SIZES]
        worker_steps += [
            read(str(workspace / "log-b.txt")),
            tool_use("Grep", pattern=",", path=str(workspace / "log-b.txt"), output_mode="content"),
            "REPORT: eight outputs checked; details in the workbench.",
        ]
        main_steps: list[Any] = [
            read(str(workspace / "log-a.txt")),
            read(str(workspace / "log-b.txt")),
            agent("worker", "Run the checks.", background=False),
            "All done.",
        ]
        agents = {
            "worker": AgentDefinition(
                description="Runs checks",
                prompt="You run checks.",
                tools=["Bash", "Read", "Grep"],
                model="inherit",
            )
        }
        async with ScriptedModel(main=main_steps, agents={"worker": worker_steps}) as model:
            hooks = spill_hooks(wb, policy) if policy is not None else {}
            # Grep reaches a subagent only if the session offers it (the default tool set has no Grep).
            tools = ["Agent", "Bash", "Read", "Grep"]
            await model.run(
                "Check the logs.", cwd=workspace, agents=agents, hooks=hooks, tools=tools, timeout=120
            )
            rows = []
            for caller in ("main", "worker"):
                sizes = [r.sizes.messages for r in model.requests(caller)]
                rows.append(Resident(caller, len(sizes), int(statistics.mean(sizes)), max(sizes), sizes[-1]))
        manifest = wb.spill / "INDEX.jsonl"
        lines = manifest.read_text().splitlines() if manifest.exists() else []
        moved = sum(int(line.split('"chars": ')[1].split(",")[0]) for line in lines)
        return rows, len(lines), moved


async def cost(megabytes: int, rounds: int = 3) -> tuple[float, float]:
    """Median seconds for one spill of `megabytes` MB, and the peak of Python allocations in MB."""
    text = "0123456789abcdef" * (megabytes * 1024 * 1024 // 16)
    data = {
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "cat big"},
        "tool_response": {
            "stdout": text,
            "stderr": "",
            "interrupted": False,
            "isImage": False,
            "noOutputExpected": False,
        },
        "tool_use_id": "toolu_bench",
        "cwd": ".",
    }
    with tempfile.TemporaryDirectory(prefix="flower-bench-cost-") as tmp:
        guard = spill_guard(Path(tmp))
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            out: Any = await guard(data, "toolu_bench", {"signal": None})  # type: ignore[arg-type]
            times.append(time.perf_counter() - start)
            assert out["hookSpecificOutput"]["updatedToolOutput"]["stdout"].startswith("[spilled]")
        tracemalloc.start()
        await guard(data, "toolu_bench", {"signal": None})  # type: ignore[arg-type]
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return statistics.median(times), peak / 1e6


async def main() -> None:
    print(f"spill_guard ({platform.machine()}, Python {platform.python_version()}, one run)\n")
    print("Resident chars per request (`messages` of each request the model received)\n")
    print("| configuration | caller | requests | mean | peak | last | spills | chars moved out |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name, policy in CONFIGS.items():
        rows, spills, moved = await resident(policy)
        for row in rows:
            print(
                f"| {name} | {row.caller} | {row.requests} | {row.mean:,} | {row.peak:,} | {row.last:,} "
                f"| {spills} | {moved:,} |"
            )
    print("\nCost of one spill (Bash stdout, ASCII)\n")
    print("| output | median time | per MB | peak Python allocations |")
    print("|---:|---:|---:|---:|")
    for megabytes in (1, 10, 50):
        seconds, peak = await cost(megabytes)
        per_mb = seconds * 1000 / megabytes
        print(f"| {megabytes} MB | {seconds * 1000:.1f} ms | {per_mb:.1f} ms | {peak:.1f} MB |")


if __name__ == "__main__":
    asyncio.run(main())
