"""Measure how often, and how much, real Claude Code agents read back an output they saw only as a preview.

    python benchmarks/calibrate_read_back.py DIR [DIR ...]          # directories of real CLI transcripts
    python benchmarks/calibrate_read_back.py DIR [DIR ...] --json   # the same figures as JSON

The CLI does for its largest outputs what flower's spill does for every large one: a Bash output over
30,000 characters, or a Grep's content over about 20,000, is saved to a file and the model gets a
`<persisted-output>` block (a 2 KB preview and the file's path). So real transcripts record what a model
does with a preview: whether a later call of the same thread reads the file (a Read, with or without
`offset`/`limit`, or a command naming its path), how many requests and characters that takes. These are
the figures `flower.report._measured` keeps for `flower report --what-if`'s read-back estimate.

It reads the transcripts where they are (nothing is copied) and counts:

- **persisted outputs**, each once (a tool_use id seen in several files, such as checkpoint copies of one
  session, counts once), on the main thread and in subagents (their own files, or the messages the CLI
  inlined in `agent_progress` entries); a read-back belongs to the latest persisted output of its thread
  whose path its input names (paths the publisher redacted to one name stay apart by time);
- for each: read back or not, the calls and the characters they brought back, whether the whole file
  was read in one call, whether the output was over the Read cap (100,000 characters), and whether a
  later reply *copies* from the part the preview hid (`flower.report._what_if.quotes`, the strict test,
  with the CLI's 2,000-character preview; read-backs of the file count as the output itself) — where the
  transcript keeps the output's whole text (the main thread's `toolUseResult`) or a whole read-back;
- **outputs seen whole** (the spill matcher's tools, 4,000 characters or more, not persisted, not an
  error): how many a later reply quotes from (the loose test) and copies from (the strict one) beyond
  flower's own preview (300 characters of head, 100 of tail).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

from flower._util.content import text_of
from flower.report._what_if.quotes import ThreadText
from flower.stores._local import read_jsonl

SAVED = re.compile(r"Full output saved to: (\S+)")
SIZE = re.compile(r"Output too large \(([\d.]+)\s*(KB|MB|B)\)")
UNITS = {"B": 1, "KB": 1_024, "MB": 1_024 * 1_024}
TOOLS = ("Bash", "Read", "Grep", "Glob", "WebFetch", "WebSearch")
READ_CAP = 100_000
CLI_PREVIEW = 2_000
HEAD, TAIL, THRESHOLD = 300, 100, 4_000


@dataclass
class Persisted:
    """One output the CLI saved to a file, and what followed it."""

    tool: str
    thread: str
    chars: int | None
    """The output's whole length: where the transcript keeps it, else as the CLI's block states it (in
    KB, to a tenth)."""
    read_back: bool = False
    calls: int = 0
    whole: bool = False
    """One call read the whole file (a Read without offset or limit)."""
    chars_back: int = 0
    after: int | None = None
    """Replies between the output and the first read-back."""
    copied: bool | None = None
    """A later reply copies from the hidden part (None: the hidden part is not in the transcript)."""


@dataclass
class Found:
    """Every figure, over the transcripts read."""

    files: int = 0
    persisted: list[Persisted] = field(default_factory=list)
    seen_whole: int = 0
    seen_whole_quoted: int = 0
    seen_whole_copied: int = 0
    by_tool: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0, 0]))
    """Outputs seen whole, per tool: [outputs, quoted, copied]."""


def _threads(path: Path) -> Iterator[tuple[str, list[Mapping[str, Any]]]]:
    """The file's own thread, then each subagent whose messages the CLI inlined in progress entries."""
    own: list[Mapping[str, Any]] = []
    inlined: dict[str, dict[str, Mapping[str, Any]]] = defaultdict(dict)
    for entry in read_jsonl(path):
        data = entry.get("data")
        if entry.get("type") == "progress":
            if isinstance(data, Mapping) and data.get("type") == "agent_progress":
                inner = data.get("message")
                if isinstance(inner, Mapping):
                    agent = inlined[str(data.get("agentId"))]
                    agent.setdefault(str(inner.get("uuid") or len(agent)), inner)
            continue
        own.append(entry)
    yield ("subagent" if path.parent.name == "subagents" or "--" in path.stem else "main"), own
    for agent in inlined.values():
        yield "subagent", list(agent.values())


def _blocks(entry: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def _stated(shown: str) -> int | None:
    match = SIZE.search(shown)
    return round(float(match.group(1)) * UNITS[match.group(2)]) if match else None


def _whole_text(entry: Mapping[str, Any]) -> str | None:
    found = entry.get("toolUseResult")
    if isinstance(found, Mapping):
        for key in ("stdout", "content"):
            text = found.get(key)
            if isinstance(text, str) and text and "<persisted-output>" not in text:
                return text
    return None


def measure_thread(kind: str, entries: Sequence[Mapping[str, Any]], seen: set[str], into: Found) -> None:
    """Add one thread's persisted outputs and outputs seen whole to `into`."""
    replies = [(i, _blocks(e)) for i, e in enumerate(entries) if e.get("type") == "assistant"]
    calls = {str(b.get("id")): (i, b) for i, blocks in replies for b in blocks if b.get("type") == "tool_use"}
    results = {
        str(b.get("tool_use_id")): (i, b, e)
        for i, e in enumerate(entries)
        if e.get("type") == "user"
        for b in _blocks(e)
        if b.get("type") == "tool_result"
    }
    text = ThreadText.of(entries, replies)
    saved: list[tuple[int, str, str]] = [  # (entry, tool_use_id, path) of the persisted outputs, in order
        (i, ident, match.group(1))
        for ident, (i, b, _) in sorted(results.items(), key=lambda item: item[1][0])
        if "<persisted-output>" in (shown := text_of(b.get("content"))) and (match := SAVED.search(shown))
    ]
    for ident, (index, block, entry) in sorted(results.items(), key=lambda item: item[1][0]):
        call = calls.get(ident, (0, {}))[1]
        tool = str(call.get("name", ""))
        shown = text_of(block.get("content"))
        if ident in seen or tool not in TOOLS or block.get("is_error") is True:
            continue
        persisted = next(((i, p) for i, d, p in saved if d == ident), None)
        if persisted is not None:
            seen.add(ident)
            into.persisted.append(
                _persisted(kind, tool, index, call, persisted[1], entry, saved, calls, results, text)
            )
        elif len(shown) >= THRESHOLD:
            seen.add(ident)
            quoted = text.quoted_at(index, shown, call, HEAD, TAIL) is not None
            copied = bool(text.copies(index, shown, call, HEAD, TAIL))
            into.seen_whole += 1
            into.seen_whole_quoted += quoted
            into.seen_whole_copied += copied
            row = into.by_tool[tool]
            row[0], row[1], row[2] = row[0] + 1, row[1] + quoted, row[2] + copied


def _persisted(
    kind: str,
    tool: str,
    index: int,
    call: Mapping[str, Any],
    path: str,
    entry: Mapping[str, Any],
    saved: Sequence[tuple[int, str, str]],
    calls: Mapping[str, tuple[int, Mapping[str, Any]]],
    results: Mapping[str, tuple[int, Mapping[str, Any], Mapping[str, Any]]],
    text: ThreadText,
) -> Persisted:
    until = next((i for i, _, p in saved if i > index and p == path), math.inf)
    backs = sorted(
        (i, b) for i, b in calls.values() if index < i < until and path in json.dumps(b.get("input", {}))
    )
    whole = _whole_text(entry)
    stated = _stated(text_of(results[str(call.get("id"))][1].get("content")))
    out = Persisted(tool=tool, thread=kind, chars=len(whole) if whole is not None else stated)
    out.read_back, out.calls = bool(backs), len(backs)
    out.whole = any(
        b.get("name") == "Read" and not {"offset", "limit"} & set(b.get("input", {})) for _, b in backs
    )
    ids = [str(b.get("id")) for _, b in backs]
    out.chars_back = sum(len(text_of(results[i][1].get("content"))) for i in ids if i in results)
    if backs:
        out.after = sum(1 for i in {c[0] for c in calls.values()} if index < i < backs[0][0])
    if whole is None and out.whole:
        whole = "\n".join(text_of(results[i][1].get("content")) for i in ids if i in results)
    if whole is not None:
        out.copied = bool(text.copies(index, whole, call, CLI_PREVIEW, 0, ids))
    return out


def measure(directories: Sequence[Path]) -> Found:
    """Every `*.jsonl` under `directories` (recursively), each tool_use id once."""
    found, seen = Found(), set[str]()
    for directory in directories:
        for path in sorted(directory.rglob("*.jsonl")):
            found.files += 1
            for kind, entries in _threads(path):
                measure_thread(kind, entries, seen, found)
    return found


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson interval of `hits` in `n`."""
    if not n:
        return (0.0, 1.0)
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (round(centre - half, 3), round(centre + half, 3))


def figures(found: Found) -> dict[str, Any]:
    """The figures `flower.report._measured` keeps, with the counts behind them."""
    every = found.persisted
    back = [p for p in every if p.read_back]
    under = [p for p in back if p.chars is None or p.chars <= READ_CAP]
    wholes = [p for p in back if p.whole]
    ratios = [p.chars_back / p.chars for p in wholes if p.chars]
    known = [p for p in every if p.copied is not None]
    return {
        "files": found.files,
        "persisted": len(every),
        "persisted_main": sum(1 for p in every if p.thread == "main"),
        "persisted_by_tool": {
            t: sum(1 for p in every if p.tool == t) for t in sorted({p.tool for p in every})
        },
        "persisted_chars_median": statistics.median([p.chars for p in every if p.chars] or [0]),
        "read_back": len(back),
        "read_back_share": round(len(back) / len(every), 4) if every else 0.0,
        "read_back_interval": wilson(len(back), len(every)),
        "read_back_calls": [p.calls for p in back],
        "read_back_chars": [p.chars_back for p in back],
        "read_back_after_replies": [p.after for p in back],
        "whole_reads": len(wholes),
        "whole_reads_under_cap": f"{sum(1 for p in under if p.whole)} of {len(under)}",
        "over_cap_read_backs": [(p.calls, p.chars_back) for p in back if p.chars and p.chars > READ_CAP],
        "whole_read_chars_per_output_char": [round(r, 3) for r in ratios],
        "copied_known": len(known),
        "copied_read_back": sum(1 for p in known if p.copied and p.read_back),
        "copied_not_read_back": sum(1 for p in known if p.copied and not p.read_back),
        "not_read_back_known": sum(1 for p in known if not p.read_back),
        "seen_whole": found.seen_whole,
        "seen_whole_quoted": found.seen_whole_quoted,
        "seen_whole_copied": found.seen_whole_copied,
        "seen_whole_by_tool": {t: row for t, row in sorted(found.by_tool.items())},
        "outputs": [asdict(p) for p in every],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directories", type=Path, nargs="+", help="directories of real CLI transcripts")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    result = figures(measure(args.directories))
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for name, value in result.items():
        if name != "outputs":
            print(f"{name:36} {value}")
    print("\nper persisted output (tool, thread, chars, read back, calls, whole, chars back, after, copied):")
    for p in result["outputs"]:
        print("  " + ", ".join(str(v) for v in p.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
