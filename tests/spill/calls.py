"""Calling the spill hook as the CLI would, and reading what it wrote: the big outputs, the pointer,
the manifest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flower._workbench import Workbench

BIG = "".join(f"row {i:05d} " + "v" * 40 + "\n" for i in range(200))  # 10,200 chars

NAMES = [f"src/module_{i:03d}/file_{'n' * 40}.py" for i in range(120)]


async def call(hook: Any, data: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = await hook(data, data.get("tool_use_id"), {"signal": None})
    return result


def updated(result: dict[str, Any]) -> Any:
    assert result, "the hook kept the original output"
    assert result["hookSpecificOutput"]["hookEventName"] == "PostToolUse"
    return result["hookSpecificOutput"]["updatedToolOutput"]


def manifest(wb: Workbench) -> list[dict[str, Any]]:
    path = wb.spill / "INDEX.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def spill_path(text: str) -> Path:
    """The file named by a pointer line."""
    first = text.splitlines()[0]
    quoted = first.split(" to ", 1)[1].split(" (Read it", 1)[0]
    assert quoted.startswith("`") and quoted.endswith("`"), quoted  # quoted: a space stays in the path
    return Path(quoted[1:-1])
