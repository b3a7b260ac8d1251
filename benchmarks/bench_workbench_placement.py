"""Where should the workbench block go? Measure the prompt-cache prefix across a resume, and compaction.

Run from the repository root: `python benchmarks/bench_workbench_placement.py`. It prints two markdown tables.

Resume: for each placement, one scripted session runs three turns (two Bash calls and an answer), a script
is added to the workbench, and the session is resumed (`resume=session_id`, same cwd, same
CLAUDE_CONFIG_DIR). The last request before the resume is compared with the first request after it,
serialised in the order the prompt cache reads it (tools, then system, then each message; cache_control
markers left out): the byte-identical prefix is what a prompt cache can still serve; everything after the
first difference is written to the cache again (1.25x the input price instead of 0.1x for a read).

Compaction: the same session start, then usage numbers that make the CLI compact; is the block
still in the first request after compaction?

Placements:
- `system`: the block in `system_prompt={"type": "preset", "preset": "claude_code", "append": ...}`,
  rebuilt from the refreshed workbench for the resume (as the original design does);
- `first message`: the block prepended to the first user message of a new session (`Workbench.preface`),
  not re-sent on resume (the reference implementation, after it measured 3.7x the cost);
- `system + resume prompt`: the block in the system prompt, and the refreshed block prepended to the
  resume prompt too (`Workbench.preface`), so a resumed session learns what changed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import platform
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from flower._cost import without_marks
from flower._workbench import Workbench
from flower.testing import ScriptedModel, Usage, bash, reply
from flower.testing._requests import RecordedRequest

INSTRUCTIONS = "You coordinate the work. Delegate; read reports; decide."


def stream(request: RecordedRequest) -> list[tuple[str, bytes]]:
    """The request as the cache reads it: (part name, bytes), in order."""
    body = request.body
    parts = [("tools", json.dumps(body.get("tools", []), ensure_ascii=False).encode())]
    system = body.get("system", [])
    for index, block in enumerate(system if isinstance(system, list) else [system]):
        parts.append((f"system[{index}]", json.dumps(block, ensure_ascii=False).encode()))
    for index, message in enumerate(body.get("messages", [])):
        parts.append(
            (f"messages[{index}] ({message.get('role')})", json.dumps(message, ensure_ascii=False).encode())
        )
    return parts


@dataclass
class Comparison:
    placement: str
    before: int
    after: int
    identical: int
    first_difference: str
    block_in_resumed_request: bool


def compare(placement: str, before: RecordedRequest, after: RecordedRequest, marker: str) -> Comparison:
    a = [
        (name, json.dumps(without_marks(json.loads(data)), ensure_ascii=False).encode())
        for name, data in stream(before)
    ]
    b = [
        (name, json.dumps(without_marks(json.loads(data)), ensure_ascii=False).encode())
        for name, data in stream(after)
    ]
    identical = 0
    where = "none (the whole previous request is a prefix)"
    for (name_a, data_a), (name_b, data_b) in zip(a, b, strict=False):
        if data_a == data_b:
            identical += len(data_a)
            continue
        same = 0
        for x, y in zip(data_a, data_b, strict=False):
            if x != y:
                break
            same += 1
        identical += same
        where = f"{name_a} (byte {same})" if name_a == name_b else f"{name_a} vs {name_b}"
        break
    total_a = sum(len(d) for _, d in a)
    total_b = sum(len(d) for _, d in b)
    return Comparison(placement, total_a, total_b, identical, where, marker in after)


async def measure(placement: str) -> list[Comparison]:
    """The comparison for one placement (plus, for `system`, the counterfactual row)."""
    in_system = placement.startswith("system")
    with tempfile.TemporaryDirectory(prefix="flower-placement-") as tmp:
        workspace = Path(tmp)
        wb = Workbench(workspace).ensure()
        (wb.scripts / "count.py").write_text("# desc: Count lines per file\n")
        (wb.notes / "0001-store.md").write_text("# Use SQLite for the store\n")
        async with ScriptedModel() as model:
            model.script("main", [bash("echo one"), bash("echo two"), "first session done"])
            append = f"{INSTRUCTIONS}\n\n{wb.prompt_block()}" if in_system else INSTRUCTIONS
            prompt = "Measure the size of data/."
            if not in_system:
                prompt = wb.preface(prompt)
            first = await model.run(prompt, cwd=workspace, system_prompt=_preset(append))
            before = model.request("main", -1)

            (wb.scripts / "sizes.sh").write_text("# desc: NEW-SCRIPT sizes of data dirs\ndu -sh data\n")
            wb.refresh()
            model.script("main", ["resumed"])
            append = f"{INSTRUCTIONS}\n\n{wb.prompt_block()}" if in_system else INSTRUCTIONS
            prompt = "Continue."
            if placement == "system + resume prompt":
                prompt = wb.preface(prompt)
            await model.run(prompt, cwd=workspace, system_prompt=_preset(append), resume=first.session_id)
            after = model.request("main", -1)
    rows = [compare(placement, before, after, "NEW-SCRIPT")]
    if placement == "system":
        rebuilt = _with_system_of(before, append)
        row = compare("system, had the CLI re-read it (counterfactual)", before, rebuilt, "NEW-SCRIPT")
        row.after = rows[0].after
        rows.append(row)
    return rows


def _with_system_of(request: RecordedRequest, append: str) -> RecordedRequest:
    """`request` with the append of its system prompt swapped, as if the CLI re-read it on resume."""
    body = json.loads(json.dumps(request.body))
    block = body["system"][2]
    block["text"] = block["text"].rsplit(INSTRUCTIONS, 1)[0] + append
    return dataclasses.replace(request, body=body)


async def after_compaction(placement: str) -> bool:
    """Whether the block is still in the first request after an auto-compaction."""
    with tempfile.TemporaryDirectory(prefix="flower-placement-") as tmp:
        workspace = Path(tmp)
        wb = Workbench(workspace).ensure()
        (wb.scripts / "count.py").write_text("# desc: COUNT-MARKER lines per file\n")
        async with ScriptedModel() as model:
            model.script(
                "main",
                [
                    reply(bash("echo one"), usage=Usage(input_tokens=3_000, output_tokens=10)),
                    reply(bash("echo two"), usage=Usage(input_tokens=980_000, output_tokens=10)),
                    "after compaction",
                ],
            )
            model.script("compact", ["<analysis>a</analysis>\n<summary>SUMMARY</summary>"])
            in_system = placement.startswith("system")
            append = f"{INSTRUCTIONS}\n\n{wb.prompt_block()}" if in_system else INSTRUCTIONS
            prompt = "Measure the size of data/."
            await model.run(
                prompt if in_system else wb.preface(prompt), cwd=workspace, system_prompt=_preset(append)
            )
            assert [r.caller for r in model.requests()] == ["main", "main", "compact", "main"]
            return "COUNT-MARKER" in model.request("main", -1)


def _preset(append: str) -> dict[str, str]:
    return {"type": "preset", "preset": "claude_code", "append": append}


PLACEMENTS = ("system", "first message", "system + resume prompt")


async def main() -> None:
    rows = [row for placement in PLACEMENTS for row in await measure(placement)]
    print(f"Across a resume ({platform.machine()}, Python {platform.python_version()})\n")
    print(
        "| placement | before resume (bytes) | after resume (bytes) | identical prefix (bytes) "
        "| share of the previous request | first difference | new script visible |"
    )
    print("|---|---:|---:|---:|---:|---|---|")
    for row in rows:
        share = 100 * row.identical / row.before
        print(
            f"| {row.placement} | {row.before:,} | {row.after:,} | {row.identical:,} | {share:.1f}% | "
            f"{row.first_difference} | {'yes' if row.block_in_resumed_request else 'no'} |"
        )
    print("\nAfter an auto-compaction\n")
    print("| placement | block still in the request |")
    print("|---|---|")
    for placement in PLACEMENTS[:2]:
        print(f"| {placement} | {'yes' if await after_compaction(placement) else 'no'} |")


if __name__ == "__main__":
    asyncio.run(main())
