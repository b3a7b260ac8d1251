"""`flower report` and `flower report --what-if` over a long history: time and peak memory.

Run from the repository root: `python benchmarks/bench_report_scale.py` (`--sessions 1000`, the
default; `--keep DIR` leaves the history there; `--write-docs` writes the table into docs/what-if.md).
It writes a history of that many sessions, about 41 entries each on average (41,000 for 1,000), as the
CLI lays it out (`projects/<project>/<session>.jsonl`, subagents in `<session>/subagents/`), in a
temporary directory; then runs each command as a user would, in a process of its own, and prints its
wall time, CPU time and peak resident memory (`ru_maxrss`).
Bounds: under a minute each on two cores; under 400 MB for `--what-if`, under 500 MB for the report.
The report is given `--window` so that it does not start the bundled CLI to ask for the model's window
(a few seconds, whatever the history's size).

The history is generated, not copied: every entry is made of random words, in the shapes real Claude Code
transcripts have (the 18 public sessions flower's tests read): the same kinds of entries in the same
proportions (progress 44 %, assistant 33 %, user 19 %, file-history snapshots 3 %, system 2 %), the same
fields, one assistant entry per content block repeating the reply's usage, tool results whose sizes follow
the real ones' deciles (50 to 4,828 chars, up to 61,004), the structured output (`toolUseResult`) beside
each, a context that grows with what each request adds. Session lengths are drawn from a log-normal of
mean 41 entries (some sessions run to several hundred); one in ten has a worker, one in twenty a
compaction, one in fifteen a resume after a pause.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

MEAN_ENTRIES = 35
"""The log-normal's mean; with the entries a loop adds past it and the workers', sessions average about 41."""
RESULT_DECILES = (12, 50, 116, 138, 237, 472, 912, 1576, 2638, 4828, 61004)
"""Tool result sizes (chars) of the real sessions: min, deciles 1-9, max."""
TEXT_DECILES = (5, 37, 59, 70, 83, 99, 120, 164, 277, 748, 14864)
"""Assistant text block sizes (chars) of the real sessions."""
PROGRESS_CHARS = 1_200
WORDS = [
    "the",
    "a",
    "file",
    "test",
    "build",
    "run",
    "error",
    "line",
    "value",
    "check",
    "path",
    "module",
    "result",
    "data",
    "config",
    "list",
]
MODEL = "claude-sonnet-4-5-20250929"
DOCS = Path(__file__).resolve().parent.parent / "docs" / "what-if.md"
BEGIN, END = "<!-- scale: begin -->", "<!-- scale: end -->"
BOUNDS = {"report": (60.0, 500.0), "what-if": (60.0, 400.0)}
"""Seconds and MB of peak resident memory each command must stay under."""


def _draw(table: tuple[int, ...], rng: random.Random) -> int:
    k = rng.random() * (len(table) - 1)
    low = int(k)
    high = min(low + 1, len(table) - 1)
    if high == len(table) - 1:  # the last decile to the maximum: log-linear, the tail is long
        return int(
            math.exp(math.log(table[low]) + (math.log(table[high]) - math.log(table[low])) * (k - low))
        )
    return int(table[low] + (table[high] - table[low]) * (k - low))


def _words(chars: int, rng: random.Random) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(WORDS)
        out.append(word)
        size += len(word) + 1
        if rng.random() < 0.08:
            out.append("\n")
    return " ".join(out)[:chars]


class _Session:
    """One generated transcript, entry by entry, with the fields the CLI writes."""

    def __init__(self, session_id: str, cwd: str, start: float, rng: random.Random) -> None:
        self.id, self.cwd, self.time, self.rng = session_id, cwd, start, rng
        self.entries: list[dict[str, Any]] = []
        self.tip: str | None = None
        self.context = 18_000 + rng.randint(0, 8_000)

    def _base(self, kind: str) -> dict[str, Any]:
        self.time += self.rng.uniform(0.5, 8.0)
        stamp = (
            time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.time))
            + f".{int(self.time * 1000) % 1000:03d}Z"
        )
        entry = {
            "parentUuid": self.tip,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.id,
            "version": "2.1.39",
            "gitBranch": "main",
            "type": kind,
            "uuid": str(uuid.UUID(int=self.rng.getrandbits(128), version=4)),
            "timestamp": stamp,
        }
        return entry

    def add(self, entry: dict[str, Any], tip: bool = True) -> dict[str, Any]:
        self.entries.append(entry)
        if tip:
            self.tip = entry["uuid"]
        return entry

    def prompt(self, text: str) -> None:
        entry = self._base("user")
        entry["message"] = {"role": "user", "content": text}
        self.add(entry)

    def progress(self) -> None:
        entry = self._base("progress")
        entry["data"] = {
            "type": "hook_progress",
            "hookEvent": "PostToolUse",
            "output": _words(PROGRESS_CHARS, self.rng),
        }
        self.add(entry, tip=False)

    def reply(self, blocks: list[dict[str, Any]], added: int) -> None:
        self.context += added // 4
        written = added // 4 + self.rng.randint(20, 400)
        usage = {
            "input_tokens": 3,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": self.context,
            "cache_creation": {"ephemeral_5m_input_tokens": written, "ephemeral_1h_input_tokens": 0},
            "output_tokens": self.rng.randint(20, 900),
        }
        ident = f"msg_{self.rng.getrandbits(64):016x}"
        for block in blocks:
            entry = self._base("assistant")
            entry["message"] = {
                "model": MODEL,
                "id": ident,
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": "tool_use" if block["type"] == "tool_use" else "end_turn",
                "usage": usage,
            }
            entry["requestId"] = f"req_{self.rng.getrandbits(64):016x}"
            self.add(entry)

    def tool(self) -> int:
        """A call and its result; the characters the result added."""
        call = f"toolu_{self.rng.getrandbits(64):016x}"
        size = _draw(RESULT_DECILES, self.rng)
        name = self.rng.choice(("Bash", "Bash", "Read", "Grep", "Edit"))
        text = _words(size, self.rng)
        tool_input = (
            {"command": f"{self.rng.choice(WORDS)} --{self.rng.choice(WORDS)}"}
            if name == "Bash"
            else {"file_path": f"{self.cwd}/{self.rng.choice(WORDS)}.py"}
        )
        self.reply(
            [
                {"type": "text", "text": _words(_draw(TEXT_DECILES, self.rng), self.rng)},
                {"type": "tool_use", "id": call, "name": name, "input": tool_input},
            ],
            200,
        )
        entry = self._base("user")
        entry["message"] = {
            "role": "user",
            "content": [{"tool_use_id": call, "type": "tool_result", "content": text}],
        }
        entry["toolUseResult"] = (
            {"stdout": text, "stderr": "", "interrupted": False, "isImage": False}
            if name == "Bash"
            else {
                "type": "text",
                "file": {"filePath": tool_input.get("file_path", ""), "content": text, "startLine": 1},
            }
        )
        entry["sourceToolAssistantUUID"] = self.tip
        self.add(entry)
        return size


def _session(
    number: int, rng: random.Random, start: float
) -> tuple[str, list[dict[str, Any]], list[dict[str, Any]] | None]:
    session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    s = _Session(session_id, f"/home/dev/project-{number % 25}", start, rng)
    target = max(6, int(rng.lognormvariate(math.log(MEAN_ENTRIES) - 0.5, 1.0)))
    s.prompt(_words(rng.randint(40, 900), rng))
    resumed = rng.random() < 1 / 15
    compacted = rng.random() < 1 / 20
    while len(s.entries) < target:
        added = s.tool()
        for _ in range(rng.choice((0, 1, 2, 3, 3))):
            s.progress()
        if rng.random() < 0.03:
            snapshot = s._base("file-history-snapshot")
            snapshot["snapshot"] = {"trackedFileBackups": {"a.py": {"backupFileName": _words(40, rng)}}}
            s.add(snapshot, tip=False)
        if rng.random() < 0.12:
            s.reply([{"type": "text", "text": _words(_draw(TEXT_DECILES, rng), rng)}], added)
            system = s._base("system")
            system.update(subtype="turn_duration", durationMs=rng.randint(2_000, 90_000))
            s.add(system, tip=False)
            if resumed and rng.random() < 0.3:
                s.time += 900
                s.prompt(_words(60, rng))
                s.entries.append({"type": "mode", "mode": "normal", "sessionId": session_id})
            elif compacted and rng.random() < 0.2:
                boundary = s._base("system")
                boundary.update(
                    subtype="compact_boundary",
                    content="Conversation compacted",
                    compactMetadata={"trigger": "auto", "preTokens": s.context},
                )
                s.add(boundary)
                summary = s._base("user")
                summary["message"] = {"role": "user", "content": _words(9_000, rng)}
                summary.update(isCompactSummary=True, isVisibleInTranscriptOnly=True)
                s.add(summary)
                s.context = 20_000
                compacted = False
            else:
                s.prompt(_words(rng.randint(40, 600), rng))
    s.reply([{"type": "text", "text": _words(_draw(TEXT_DECILES, rng), rng)}], 100)
    worker = None
    if rng.random() < 0.1:
        w = _Session(session_id, s.cwd, s.time, rng)
        w.prompt(_words(500, rng))
        for _ in range(rng.randint(3, 15)):
            w.tool()
        w.reply([{"type": "text", "text": _words(1_900, rng)}], 100)
        for entry in w.entries:
            entry["isSidechain"] = True
        worker = w.entries
    return session_id, s.entries, worker


def write_history(root: Path, sessions: int, seed: int = 41) -> tuple[int, int]:
    """Write `sessions` sessions under `root/projects`: (entries, bytes)."""
    rng = random.Random(seed)
    entries = size = 0
    start = 1_767_000_000.0
    for number in range(sessions):
        project = root / "projects" / f"-home-dev-project-{number % 25}"
        session_id, main, worker = _session(number, rng, start + number * 3_600)
        files = [(project / f"{session_id}.jsonl", main)]
        if worker is not None:
            files.append((project / session_id / "subagents" / f"agent-a{number:06x}.jsonl", worker))
        for path, written in files:
            path.parent.mkdir(parents=True, exist_ok=True)
            text = "\n".join(json.dumps(e, separators=(",", ":")) for e in written) + "\n"
            path.write_text(text)
            entries += len(written)
            size += len(text)
    return entries, size


def measure(argv: list[str]) -> tuple[float, float, float]:
    """Run `python -m flower._cli ARGV` to the end: (wall seconds, CPU seconds, peak RSS in MB)."""
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "flower._cli", *argv], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"flower {' '.join(argv)} failed")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1_000)
    parser.add_argument("--keep", type=Path, help="write the history here and leave it")
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/what-if.md")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="flower-scale-"))
    try:
        began = time.perf_counter()
        entries, size = write_history(root, args.sessions)
        print(
            f"history: {args.sessions:,} sessions, {entries:,} entries, {size / 1e6:.1f} MB "
            f"(written in {time.perf_counter() - began:.0f} s)",
            flush=True,
        )
        print(f"{'command':<34}{'wall s':>8}{'CPU s':>8}{'peak RSS MB':>13}  bound")
        failed = False
        rows = [
            f"{args.sessions:,} sessions, {entries:,} entries, {size / 1e6:.1f} MB of transcripts "
            f"({os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} when it started):",
            "",
            "| command | wall time | CPU time | peak memory (RSS) | bound |",
            "|---|---|---|---|---|",
        ]
        for name, argv in (
            ("report", ["report", str(root / "projects"), "--json", "--window", "200000"]),
            ("what-if", ["report", "--what-if", str(root / "projects"), "--json"]),
        ):
            wall, cpu, rss = measure(argv)
            seconds, megabytes = BOUNDS[name]
            ok = wall < seconds and rss < megabytes
            failed |= not ok
            print(
                f"flower {name:<27}{wall:>8.1f}{cpu:>8.1f}{rss:>13.0f}  "
                f"{'ok' if ok else 'MISSED'} (< {seconds:.0f} s, < {megabytes:.0f} MB)",
                flush=True,
            )
            command = "flower report" if name == "report" else "flower report --what-if"
            rows.append(
                f"| `{command}` | {wall:.1f} s | {cpu:.1f} s | {rss:.0f} MB | "
                f"{'within' if ok else 'MISSED'} (< {seconds:.0f} s, < {megabytes:.0f} MB) |"
            )
        if args.write_docs:
            page = DOCS.read_text(encoding="utf-8")
            start, end = page.index(BEGIN) + len(BEGIN), page.index(END)
            DOCS.write_text(page[:start] + "\n" + "\n".join(rows) + "\n" + page[end:], encoding="utf-8")
            print(f"wrote {DOCS}")
        return 1 if failed else 0
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
