"""Tokens per character, measured per model on real Claude Code transcripts.

    python benchmarks/tokens_per_char.py [DIR]

A transcript records, on every assistant entry, the usage of the request that produced it: its whole
input is `input_tokens + cache_read_input_tokens + cache_creation_input_tokens`. Between two consecutive
requests of one session the input grows by what was added in between (the previous reply, the tool
results, a prompt): that growth in tokens against those entries' characters is the model's tokens per
character. Steps are kept only where the count is clean (see `_steps`). The transcripts are read from
`FLOWER_CORPUS` (or `FLOWER_REAL_TRANSCRIPTS`), else `shared/real-transcripts` beside the repository;
they are not part of it.
"""

from __future__ import annotations

import itertools
import json
import os
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def corpus_dir() -> Path:
    named = os.environ.get("FLOWER_CORPUS") or os.environ.get("FLOWER_REAL_TRANSCRIPTS")
    if named:
        return Path(named).expanduser()
    root = HERE.parent
    found = [b / "shared" / "real-transcripts" for b in (root.parent, root.parent.parent)]
    return next((p for p in found if p.is_dir()), found[0])


def _chars(block: Mapping[str, Any]) -> int:
    kind = block.get("type")
    if kind == "text":
        return len(str(block.get("text", "")))
    if kind == "thinking":
        return len(str(block.get("thinking", "")))
    if kind == "tool_use":
        return len(str(block.get("name", ""))) + len(json.dumps(block.get("input", {}), ensure_ascii=False))
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, str):
            return len(content)
        if isinstance(content, list):
            return sum(len(str(x.get("text", ""))) for x in content if isinstance(x, dict))
    return 0


def _steps(path: Path) -> Iterable[tuple[str, float]]:
    """(model, tokens per char) of each usable step of one transcript: two consecutive requests of one
    model, no compaction between, at least 2,000 chars added, 80 % of them tool calls and results (prose
    is too rare to measure alone), at most 5 % thinking (whether it stays in the context varies)."""
    entries = [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]
    requests: list[tuple[int, int, str]] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        message = entry.get("message") or {}
        usage, model = message.get("usage"), str(message.get("model", ""))
        if (
            entry.get("type") != "assistant"
            or not usage
            or model == "<synthetic>"
            or message.get("id") in seen
        ):
            continue
        seen.add(message.get("id"))
        total = sum(int(usage.get(k) or 0) for k in ("input_tokens", "cache_read_input_tokens"))
        requests.append((i, total + int(usage.get("cache_creation_input_tokens") or 0), model))
    for (start, before, model), (end, after, other) in itertools.pairwise(requests):
        span = entries[start:end]
        if model != other or after <= before:
            continue
        if any(e.get("subtype") in ("compact_boundary", "microcompact_boundary") for e in span):
            continue
        kinds: dict[str, int] = defaultdict(int)
        for e in span:
            content = (
                (e.get("message") or {}).get("content") if e.get("type") in ("user", "assistant") else None
            )
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
            for block in blocks:
                if isinstance(block, dict):
                    kinds[str(block.get("type"))] += _chars(block)
        chars = sum(kinds.values())
        tools = kinds["tool_use"] + kinds["tool_result"]
        if chars >= 2000 and tools >= 0.8 * chars and kinds["thinking"] <= 0.05 * chars:
            yield model, (after - before) / chars


def tokens_per_char(directory: Path) -> dict[str, tuple[float, int, list[str]]]:
    """Per model (date suffix dropped): the median tokens per char, the steps measured, the files."""
    found: dict[str, list[float]] = defaultdict(list)
    files: dict[str, set[str]] = defaultdict(set)
    for path in sorted(directory.rglob("*.jsonl")):
        for model, ratio in _steps(path):
            family = model.rsplit("-", 1)[0] if model[-8:].isdigit() else model
            found[family].append(ratio)
            files[family].add(path.name)
    return {m: (statistics.median(r), len(r), sorted(files[m])) for m, r in found.items()}


if __name__ == "__main__":
    where = Path(sys.argv[1]) if len(sys.argv) > 1 else corpus_dir()
    for model, (ratio, steps, files) in sorted(tokens_per_char(where).items()):
        print(f"{model}: {ratio:.3f} tokens/char ({steps} steps; {', '.join(files)})")
