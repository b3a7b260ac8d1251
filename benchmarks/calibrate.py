"""Measure how real Claude Code agents retrieve, pipe, read and retry: the realistic player's calibration.

    python benchmarks/calibrate.py DIR        # DIR: a directory of real CLI transcripts (*.jsonl)
    python benchmarks/calibrate.py DIR --json # the same figures as JSON

It reads the transcripts where they are (nothing is copied) and prints the figures that
`benchmarks/suite/realistic.py` is calibrated from (docs/benchmarks.md states them):
- Bash commands piped through `head`, `tail` or `grep` (share of all Bash calls, and of those whose
  unpiped form printed more than 4,000 chars is unknowable, so the share of large Bash results is given);
- Read calls of a whole file (no `offset`/`limit`) against a window of it, and the share of look-up
  calls that are Reads;
- refused calls (a denial or a user rejection) issued again with the same input later on;
- retrievals: runs of consecutive look-up calls (Read, Grep, Glob, a Bash `grep`/`cat`/`head`/`tail`/
  `sed -n`/`find`/`ls`/`rg`) in one agent's thread: how many calls each takes;
- output tokens per model reply (the usage of each API message, counted once per message id).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from flower.stores._local import read_jsonl

PIPE = re.compile(r"\|\s*(head|tail|grep|rg)\b")
LOOKUP = re.compile(r"^\s*(grep|rg|cat|head|tail|sed\s+-n|find|ls|awk|wc)\b")
REFUSED = ("has been denied", "doesn't want to proceed", "was rejected", "user rejected")
LARGE = 4_000


@dataclass
class Calibration:
    """The figures, over every transcript read."""

    files: int = 0
    replies: int = 0
    bash: int = 0
    bash_piped: int = 0
    bash_large_results: int = 0
    pipes: dict[str, int] = field(default_factory=dict)
    reads: int = 0
    reads_whole: int = 0
    lookups: int = 0
    lookup_reads: int = 0
    refused: int = 0
    refused_retried: int = 0
    retrievals: list[int] = field(default_factory=list)
    output_tokens: list[int] = field(default_factory=list)
    thinking: list[int] = field(default_factory=list)
    text: list[int] = field(default_factory=list)

    def figures(self) -> dict[str, float]:
        """The rates the player uses (shares in 0..1, counts as medians)."""
        runs = self.retrievals or [0]
        out = self.output_tokens or [0]
        return {
            "files": self.files,
            "bash_calls": self.bash,
            "bash_piped_share": _share(self.bash_piped, self.bash),
            "bash_large_result_share": _share(self.bash_large_results, self.bash),
            "read_calls": self.reads,
            "read_whole_share": _share(self.reads_whole, self.reads),
            "lookup_calls": self.lookups,
            "lookup_read_share": _share(self.lookup_reads, self.lookups),
            "refused_calls": self.refused,
            "refused_retried_share": _share(self.refused_retried, self.refused),
            "retrievals": len(self.retrievals),
            "retrieval_calls_median": statistics.median(runs),
            "retrieval_calls_mean": round(statistics.fmean(runs), 2),
            "retrieval_one_call_share": _share(sum(1 for r in runs if r == 1), len(runs)),
            "retrieval_two_calls_share": _share(sum(1 for r in runs if r == 2), len(runs)),
            "retrieval_three_plus_share": _share(sum(1 for r in runs if r >= 3), len(runs)),
            "output_tokens_median": statistics.median(out),
            "output_tokens_mean": round(statistics.fmean(out), 1),
            "replies": self.replies,
            **{f"pipe_{k}_share": _share(n, self.bash_piped) for k, n in sorted(self.pipes.items())},
            **_prose("thinking", self.thinking, self.replies),
            **_prose("text", self.text, self.replies),
        }


def _prose(kind: str, sizes: list[int], replies: int) -> dict[str, float]:
    """Share of replies with this kind of block, and the median / 90th percentile of its chars."""
    present = sorted(n for n in sizes if n > 0) or [0]
    return {
        f"{kind}_present_share": _share(len([n for n in sizes if n > 0]), replies),
        f"{kind}_chars_median": statistics.median(present),
        f"{kind}_chars_p90": present[int(0.9 * (len(present) - 1))],
    }


def _share(part: int, whole: int) -> float:
    return round(part / whole, 3) if whole else 0.0


def _entries(path: Path) -> Iterator[Mapping[str, Any]]:
    """Every entry of the file, read as flower imports a CLI transcript (a damaged line is named)."""
    yield from read_jsonl(path)


def blocks(entry: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The content blocks of an entry's message ([] for a string content or none)."""
    message = entry.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def content_text(content: Any) -> str:
    """A content's text: the string itself, or every block's `text` joined by newlines (a block without
    one counts as an empty line: the sizes measured here were taken that way)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, Mapping))
    return ""


def _is_lookup(name: str, data: Mapping[str, Any]) -> bool:
    if name in ("Read", "Grep", "Glob"):
        return True
    command = data.get("command")
    return name == "Bash" and isinstance(command, str) and LOOKUP.match(command) is not None


def measure_file(path: Path, into: Calibration) -> None:
    """Add one transcript's figures to `into`."""
    into.files += 1
    calls: dict[str, tuple[str, str]] = {}  # id -> (thread, name + input)
    refused: list[tuple[str, str, int]] = []  # (thread, call key, position)
    order: list[tuple[str, str, int]] = []  # (thread, call key, position) of every call
    runs: dict[str, int] = {}
    usage: dict[str, int] = {}
    prose: dict[str, list[int]] = {}
    for position, entry in enumerate(_entries(path)):
        thread = "sub" if entry.get("isSidechain") else "main"
        if "--agent-" in path.name:
            thread = path.stem
        if entry.get("type") == "assistant":
            message = entry.get("message") or {}
            ident, used = message.get("id"), message.get("usage") or {}
            if isinstance(ident, str) and isinstance(used.get("output_tokens"), int):
                usage[ident] = max(usage.get(ident, 0), used["output_tokens"])
            sizes = prose.setdefault(str(ident), [0, 0])
            for block in blocks(entry):
                sizes[0] += len(str(block.get("thinking", ""))) if block.get("type") == "thinking" else 0
                sizes[1] += len(str(block.get("text", ""))) if block.get("type") == "text" else 0
            for block in blocks(entry):
                if block.get("type") != "tool_use":
                    continue
                name, data = str(block.get("name")), block.get("input") or {}
                key = f"{name} {json.dumps(data, sort_keys=True)}"
                calls[str(block.get("id"))] = (thread, key)
                order.append((thread, key, position))
                if name == "Bash" and isinstance(data.get("command"), str):
                    into.bash += 1
                    piped = PIPE.search(data["command"])
                    if piped is not None:
                        into.bash_piped += 1
                        into.pipes[piped.group(1)] = into.pipes.get(piped.group(1), 0) + 1
                if name == "Read":
                    into.reads += 1
                    into.reads_whole += not (data.get("offset") or data.get("limit"))
                if _is_lookup(name, data):
                    runs[thread] = runs.get(thread, 0) + 1
                    into.lookups += 1
                    into.lookup_reads += name == "Read"
                elif runs.get(thread):
                    into.retrievals.append(runs.pop(thread))
        for block in blocks(entry):
            if block.get("type") != "tool_result":
                continue
            found = calls.get(str(block.get("tool_use_id")))
            if found is None:
                continue
            text = content_text(block.get("content"))
            if found[1].startswith("Bash ") and len(text) > LARGE:
                into.bash_large_results += 1
            if block.get("is_error") and any(word in text for word in REFUSED):
                refused.append((found[0], found[1], position))
    into.retrievals += [n for n in runs.values() if n]
    into.replies += len(usage)
    into.output_tokens += list(usage.values())
    into.thinking += [sizes[0] for sizes in prose.values()]
    into.text += [sizes[1] for sizes in prose.values()]
    for thread, key, at in refused:
        into.refused += 1
        into.refused_retried += any(t == thread and k == key and p > at for t, k, p in order)


def measure(paths: Iterable[Path]) -> Calibration:
    """The figures over these transcripts."""
    found = Calibration()
    for path in sorted(paths):
        measure_file(path, found)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, help="a directory of real CLI transcripts (*.jsonl)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    paths = list(args.directory.glob("*.jsonl"))
    if not paths:
        print(f"no *.jsonl transcripts in {args.directory}", file=sys.stderr)
        return 2
    figures = measure(paths).figures()
    if args.json:
        print(json.dumps(figures, indent=1))
    else:
        for name, value in figures.items():
            print(f"{name:32s} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["Calibration", "asdict", "blocks", "content_text", "measure", "measure_file"]
