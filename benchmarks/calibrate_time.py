"""Measure how long real Claude Code requests, tools and subagents take: the calibrated clock's figures.

    python benchmarks/calibrate_time.py DIR          # DIR: a directory of real CLI transcripts (*.jsonl)
    python benchmarks/calibrate_time.py DIR --json   # the same figures as JSON
    python benchmarks/calibrate_time.py DIR --write  # also store the clock's tables (suite/timing.json)

It reads the transcripts where they are (nothing is copied; `suite/timing.json` holds quantiles and
sizes only) and prints what `benchmarks/suite/timing.py` draws from. How each figure is computed, from
the CLI's entry timestamps:

- A *thread* is one agent's entries in order: the main transcript (without sidechain and `progress`
  entries), a subagent's own file (`X--agent-Y.jsonl`; a compaction's `agent-acompact-*` is no agent),
  or, for CLIs that inline subagents, the messages carried by `progress` entries of type
  `agent_progress`, grouped by `agentId` (a subagent that also has its own file is read from the file).
- An assistant *message* is the run of entries sharing `message.id` (one entry per content block).
- **Request duration**: the message's last entry minus the last user entry before it in its thread (a
  prompt or tool results): what the model took, output included. **Latency**: to its first entry.
- **Context** of a request: input + cache read + cache creation tokens of its usage, in the buckets
  `<20k`, `20-50k`, `50-100k`, `>=100k`.
- **Step**: from one request's start to the next one's, when the next is driven by tool results (the
  model, then its tools): what the clock must reproduce.
- **Tool run**: a tool_use entry's stamp to its tool_result's (Agent and Task apart: a subagent run, the
  Agent call's stamp to its result's in the main thread). A background launch is not a tool run.
- **Unattended tool run**: one no person could have held up by approving it: a main-thread call made
  while the session's permission mode (the `permissionMode` of its latest prompt) was `bypassPermissions`
  or `dontAsk`, a call of a session run headless (`claude -p`: no `permissionMode` on any entry and no
  `file-history-snapshot`, which only interactive sessions write), and every subagent call. In a session
  where a person approves calls, a call's "run time" includes the prompt (a `chmod +x` that "took" 122 s),
  so the calibrated clock draws tool times from the unattended runs only (the suite runs in
  `bypassPermissions`); both tables are printed.
- **Idle gap**: the last entry before a human prompt to that prompt (main threads).
- **Report**: the characters of a subagent's final text (`toolUseResult.content`).
- Left out: a request whose interval holds an API error (`system`/`api_error`), a synthetic assistant
  (an API error), an interruption, a compaction, a request with no user entry before it, and any
  interval over `--idle-minutes` (default 10: a human away; 5 or 30 move no request figure).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

from benchmarks.calibrate import blocks, content_text
from flower.stores._local import read_jsonl

BUCKETS = ((0, "<20k"), (20_000, "20-50k"), (50_000, "50-100k"), (100_000, ">=100k"))
QUANTILES = tuple(i / 20 for i in range(21))
"""The quantiles stored for each distribution the clock draws from (0, 5 %, ... 100 %)."""
TOOL_GROUPS = {
    "Bash": "Bash",
    "Read": "Read",
    "Grep": "Read",
    "Glob": "Read",
    "Write": "Write",
    "Edit": "Write",
}
"""The suite's tools, and the measured tools whose times stand for them."""
TIMING = Path(__file__).resolve().parent / "suite" / "timing.json"


@dataclass
class Timing:
    """The raw samples, over every transcript read."""

    duration: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    latency: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    step: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    tools: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    unattended: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    """Tool runs no person could have held up (see the module docstring), by tool."""
    sources: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    """Unattended tool runs per transcript file (and `(subagents)`)."""
    subagents: list[float] = field(default_factory=list)
    idle: list[float] = field(default_factory=list)
    reports: list[int] = field(default_factory=list)
    excluded: dict[str, int] = field(default_factory=lambda: defaultdict(int))


def stamp(entry: Mapping[str, Any]) -> float | None:
    """An entry's timestamp in seconds, or None."""
    value = entry.get("timestamp")
    if not isinstance(value, str):
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def bucket(tokens: int) -> str:
    """The context bucket of a request of `tokens` tokens."""
    return [label for low, label in BUCKETS if tokens >= low][-1]


def family(model: str) -> str:
    """`claude-opus-4-5-20251101` -> `opus-4-5`."""
    parts = model.removeprefix("claude-").split("-")
    return "-".join(p for p in parts[:3] if not (p.isdigit() and len(p) == 8))


def _is_prompt(entry: Mapping[str, Any]) -> bool:
    if entry.get("type") != "user" or entry.get("isMeta") or entry.get("isCompactSummary"):
        return False
    content = (entry.get("message") or {}).get("content")
    if any(b.get("type") == "tool_result" for b in blocks(entry)):
        return False
    text = content_text(content).lstrip()
    return bool(text) and not text.startswith(("<local-command", "<command-", "Caveat:"))


UNATTENDED_MODES = frozenset({"bypassPermissions", "dontAsk"})
"""Permission modes in which no person is asked to approve a call."""


def headless(entries: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a main transcript was run headless (`claude -p`): it names no permission mode and has no
    `file-history-snapshot` entry (the checkpoints an interactive session writes before each prompt)."""
    kinds = {entry.get("type") for entry in entries}
    return "file-history-snapshot" not in kinds and not any("permissionMode" in entry for entry in entries)


class _Thread:
    """Walks one agent's entries and records its requests, steps and tool runs."""

    def __init__(
        self, side: str, into: Timing, idle: float, source: str = "", *, unattended: bool = False
    ) -> None:
        self.side, self.into, self.idle = side, into, idle
        self.source = source
        self.unattended = unattended
        """No person approves this thread's calls (a subagent, a headless session); a main thread
        becomes so when a prompt names an unattended permission mode, and stops when one names another."""
        self.start: float | None = None  # the request under way started here (last user entry)
        self.driven = False  # ... and was driven by tool results
        self.dirty = ""  # why the request under way is left out
        self.message: dict[str, Any] | None = None
        self.seen: set[str] = set()
        self.calls: dict[str, tuple[str, float]] = {}
        self.last_start: float | None = None  # the previous counted request's start

    def walk(self, entries: Iterable[Mapping[str, Any]]) -> None:
        for entry in entries:
            kind, at = entry.get("type"), stamp(entry)
            if kind == "system" and entry.get("subtype") in ("api_error", "compact_boundary"):
                self.dirty = self.dirty or str(entry.get("subtype"))
            elif kind == "system" and entry.get("subtype") == "microcompact_boundary":
                self.dirty = self.dirty or "compaction"
            elif kind == "user" and at is not None:
                self._user(entry, at)
            elif kind == "assistant" and at is not None:
                self._assistant(entry, at)
        self._close()

    def _user(self, entry: Mapping[str, Any], at: float) -> None:
        mode = entry.get("permissionMode")
        if isinstance(mode, str):
            self.unattended = mode in UNATTENDED_MODES
        if entry.get("isCompactSummary"):
            self.dirty = "compaction"
        if "[Request interrupted" in json.dumps((entry.get("message") or {}).get("content")):
            self.dirty = "interrupted"
        results = [b for b in blocks(entry) if b.get("type") == "tool_result"]
        for block in results:
            name, called = self.calls.pop(str(block.get("tool_use_id")), ("", 0.0))
            body = content_text(block.get("content"))[:300].lower()
            if not name or name in ("Agent", "Task"):
                continue
            if "running in background" in body or "in the background" in body:
                self.into.excluded["tool: background"] += 1
            elif at - called > self.idle:
                self.into.excluded["tool: over the idle limit"] += 1
            else:
                self.into.tools[name].append(at - called)
                if self.unattended:
                    self.into.unattended[name].append(at - called)
                    self.into.sources[self.source] += 1
        self._close()
        if entry.get("isMeta") and self.start is not None:
            self.start = at  # bookkeeping: the request starts after it
            return
        if results or _is_prompt(entry):
            if not results and self.dirty not in ("interrupted", "compaction"):
                self.dirty = ""
            self.start, self.driven = at, bool(results)

    def _assistant(self, entry: Mapping[str, Any], at: float) -> None:
        message = entry.get("message") or {}
        ident = str(message.get("id"))
        if message.get("model") == "<synthetic>" or entry.get("isApiErrorMessage"):
            self.into.excluded[f"{self.side}: API error (synthetic reply)"] += 1
            self.dirty = "synthetic"
            return
        for block in blocks(entry):
            if block.get("type") == "tool_use":
                self.calls[str(block.get("id"))] = (str(block.get("name")), at)
        if self.message is not None and self.message["id"] == ident:
            self.message["last"] = at
            return
        if ident in self.seen:
            return
        self._close()
        self.seen.add(ident)
        usage = message.get("usage") or {}
        context = sum(
            int(usage.get(k) or 0)
            for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        )
        why = "no user entry before it" if self.start is None else self.dirty
        if not why and self.start is not None and at - self.start > self.idle:
            why = "over the idle limit"
        if why:
            self.into.excluded[f"{self.side}: {why}"] += 1
        self.message = {
            "id": ident,
            "start": self.start,
            "first": at,
            "last": at,
            "model": family(str(message.get("model") or "")),
            "context": context,
            "skip": bool(why),
            "driven": self.driven,
        }
        self.dirty = ""

    def _close(self) -> None:
        msg, self.message = self.message, None
        if msg is None or msg["skip"]:
            return
        duration, latency = msg["last"] - msg["start"], msg["first"] - msg["start"]
        for key in (f"{self.side}", f"{self.side} {msg['model']}", f"{self.side} {bucket(msg['context'])}"):
            self.into.duration[key].append(duration)
            self.into.latency[key].append(latency)
        self.into.duration[f"{self.side} {msg['model']} {bucket(msg['context'])}"].append(duration)
        if msg["driven"] and self.last_start is not None and msg["start"] - self.last_start <= self.idle:
            self.into.step[self.side].append(msg["start"] - self.last_start)
        self.last_start = msg["start"]


def _subagent_runs(main: Sequence[Mapping[str, Any]], into: Timing) -> None:
    calls: dict[str, float] = {}
    for entry in main:
        at = stamp(entry)
        if at is None:
            continue
        for block in blocks(entry):
            if block.get("type") == "tool_use" and block.get("name") in ("Task", "Agent"):
                calls[str(block.get("id"))] = at
            elif block.get("type") == "tool_result" and str(block.get("tool_use_id")) in calls:
                into.subagents.append(at - calls.pop(str(block.get("tool_use_id"))))
                result = entry.get("toolUseResult")
                if isinstance(result, Mapping):
                    into.reports.append(len(content_text(result.get("content"))))


def _idle_gaps(main: Sequence[Mapping[str, Any]], into: Timing) -> None:
    last: float | None = None
    for entry in main:
        at = stamp(entry)
        if at is None:
            continue
        if _is_prompt(entry) and last is not None:
            into.idle.append(at - last)
        if entry.get("type") in ("user", "assistant"):
            last = at


SUBAGENTS = "(subagents)"
"""How `Timing.sources` names the subagents' calls, pooled over every session."""


def measure(directory: Path, *, idle_minutes: float = 10.0) -> Timing:
    """The samples over every transcript in `directory`."""
    into, idle = Timing(), idle_minutes * 60
    files = sorted(directory.glob("*.jsonl"))
    own = {p.stem.split("--agent-", 1)[1] for p in files if "--agent-" in p.name}
    for path in files:
        entries = read_jsonl(path)
        if "--agent-" in path.name:
            if not path.stem.split("--agent-", 1)[1].startswith("acompact"):
                _Thread("sub", into, idle, SUBAGENTS, unattended=True).walk(entries)
            continue
        main = [e for e in entries if e.get("type") != "progress" and not e.get("isSidechain")]
        _Thread("main", into, idle, path.name, unattended=headless(entries)).walk(main)
        _idle_gaps(main, into)
        _subagent_runs(main, into)
        inlined: dict[str, dict[str, Mapping[str, Any]]] = defaultdict(dict)
        for entry in entries:
            data = entry.get("data") if entry.get("type") == "progress" else None
            if isinstance(data, Mapping) and data.get("type") == "agent_progress":
                agent, inner = str(data.get("agentId")), data.get("message")
                if agent not in own and isinstance(inner, Mapping):
                    inlined[agent].setdefault(str(inner.get("uuid") or len(inlined[agent])), inner)
        for thread in inlined.values():
            _Thread("sub", into, idle, SUBAGENTS, unattended=True).walk(thread.values())
    return into


def quantile(values: Sequence[float], q: float) -> float:
    """The `q` quantile, linear between samples."""
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    low = int(k)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (k - low)


def _shape(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "median": round(quantile(values, 0.5), 2),
        "p75": round(quantile(values, 0.75), 2),
        "p90": round(quantile(values, 0.9), 2),
        "max": round(max(values), 1),
    }


def _table(values: Sequence[float]) -> list[float]:
    return [round(quantile(values, q), 2) for q in QUANTILES]


def figures(found: Timing) -> dict[str, Any]:
    """Everything printed: each distribution's shape, and what was left out."""
    return {
        "request_duration": {k: _shape(v) for k, v in sorted(found.duration.items())},
        "request_latency": {k: _shape(v) for k, v in sorted(found.latency.items()) if " " not in k[5:]},
        "step": {k: _shape(v) for k, v in sorted(found.step.items())},
        "tools": {k: _shape(v) for k, v in sorted(found.tools.items(), key=lambda kv: -len(kv[1]))},
        "tools_unattended": {
            k: _shape(v) for k, v in sorted(found.unattended.items(), key=lambda kv: -len(kv[1]))
        },
        "tool_tables": {
            "all sessions": _grouped_shapes(found.tools),
            "unattended (prices the suite)": _grouped_shapes(found.unattended),
        },
        "unattended_sources": dict(sorted(found.sources.items())),
        "subagent_runs": _shape(found.subagents) | {"all": sorted(round(s, 1) for s in found.subagents)},
        "idle_gaps": _shape(found.idle) | {"over_5_min": sum(g > 300 for g in found.idle)},
        "report_chars": _shape([float(r) for r in found.reports]) | {"all": sorted(found.reports)},
        "excluded": dict(sorted(found.excluded.items())),
    }


def _grouped(runs: Mapping[str, list[float]]) -> dict[str, list[float]]:
    """Tool runs pooled into the suite's tools (`TOOL_GROUPS`)."""
    tools: dict[str, list[float]] = defaultdict(list)
    for name, found in runs.items():
        if name in TOOL_GROUPS:
            tools[TOOL_GROUPS[name]] += found
    return dict(sorted(tools.items()))


def _grouped_shapes(runs: Mapping[str, list[float]]) -> dict[str, dict[str, float]]:
    """Each suite tool's run times as a shape, with its 95th percentile and the share over 5 minutes."""
    return {
        name: _shape(found)
        | {
            "p95": round(quantile(found, 0.95), 2),
            "over_5_min": round(sum(f > 300 for f in found) / len(found), 3),
        }
        for name, found in _grouped(runs).items()
        if found
    }


def clock_tables(found: Timing) -> dict[str, Any]:
    """What the calibrated clock draws from (`suite/timing.json`): request durations of main threads by
    context bucket (every model pooled: the suite's Sonnet 4.6 is not in the corpus, and the models'
    medians are within a second of each other), tool run times for the suite's tools, the real subagent
    runs and report sizes. Requests under 20k tokens take the 20-50k table: the corpus has one such
    main-thread request (its sidechains under 20k are Haiku, about twice as fast). `tool_seconds` (what
    the clock draws) holds the unattended tool runs; `tool_seconds_all` every session's, for the record."""
    requests = {label: _table(found.duration[f"main {label}"]) for _, label in BUCKETS[1:]}
    return {
        "request_seconds": {"<20k": requests["20-50k"], **requests},
        "tool_seconds": {name: _table(runs) for name, runs in _grouped(found.unattended).items()},
        "tool_seconds_all": {name: _table(runs) for name, runs in _grouped(found.tools).items()},
        "subagent_seconds": sorted(round(s, 1) for s in found.subagents),
        "report_chars": sorted(found.reports),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, help="a directory of real CLI transcripts (*.jsonl)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--write", action="store_true", help=f"store the clock's tables in {TIMING.name}")
    parser.add_argument("--idle-minutes", type=float, default=10.0, help="longer intervals are a human away")
    args = parser.parse_args(argv)
    if not any(args.directory.glob("*.jsonl")):
        print(f"no *.jsonl transcripts in {args.directory}", file=sys.stderr)
        return 2
    found = measure(args.directory, idle_minutes=args.idle_minutes)
    out = figures(found)
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        for section, value in out.items():
            print(f"== {section}")
            for key, shape in value.items():
                if section == "tool_tables":
                    print(f"  -- {key}")
                    for tool, figures_ in shape.items():
                        print(f"     {tool:31s} {figures_}")
                    continue
                print(f"  {key:34s} {shape}")
    if args.write:
        TIMING.write_text(json.dumps(clock_tables(found), indent=1) + "\n")
        print(f"wrote {TIMING}")
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["UNATTENDED_MODES", "Timing", "clock_tables", "figures", "headless", "measure", "quantile"]
