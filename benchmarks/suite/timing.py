"""The suite's clocks: when each request of a recorded run was sent.

A run's requests do not depend on the clock (the scripted agents decide from the requests, flower's and
the CLI's own idle clocks are moved by the workload's idle gaps), but the prompt cache does: an entry
lives 5 minutes (1 hour for a `"ttl": "1h"` mark) after its last use. So a run is recorded once and its
requests, exactly as sent, are priced under each clock:

- `"10"`, `"20"`, `"35"`, `"60"`: every request moves the clock that many seconds, whoever sends it;
- `"calibrated"` (the default): each request takes a duration drawn for its context size from real
  main-thread requests, plus the output it wrote beyond the real mean; the tools its reply called take
  a run time drawn per tool from the real calls no person approved (`tool_seconds`: sessions in
  `bypassPermissions` or run headless, and subagents; see `benchmarks/calibrate_time.py`); a worker
  lasts what its own requests and tools take, and its coordinator waits that long;
- `"stress"`: calibrated, but every worker lasts a duration drawn from a distribution measured over 56
  real sessions (median 56 s, p75 116 s, p90 404 s, 18 % over 5 minutes), spread over its requests,
  whatever its size.

The workload's idle gaps are added on every clock. `benchmarks/calibrate_time.py` measures the tables
(`timing.json`) from real transcripts; docs/benchmarks.md states them.

**Paired draws.** A draw is seeded by the seed and what it is about, never by a request's place in the
run where a better key exists, so every strategy of a seed draws alike where it does alike (common random
numbers): a request's duration by what its reply does (the player's `Ledger.about`: `run out-007#0`,
`look W1-F03#1`; the same key whichever agent sends it, its context size picking the table), a Bash
command's run time by its text (its pipe and the run's temporary directory left out), a Read by the
file's path inside the workspace, a stress-clock worker by its task id. A request whose reply has no
counterpart (a mandate, a handoff, a compaction) draws by its thread and index.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

TABLES: dict[str, Any] = json.loads(Path(__file__).with_name("timing.json").read_text())
CLOCKS = ("10", "20", "35", "60", "calibrated", "stress")
"""Every clock a run is priced under (the sensitivity table's rows)."""
DRAWN = ("calibrated", "stress")
"""The clocks that draw durations: the realistic player's seed draws them; the ideal player's cost is the
median over `SEEDS`."""
SEEDS = (1, 2, 3, 4, 5)
TASK_ID = re.compile(r"\[task ([cr]\d+)\]")
OUTPUT_RATE = 50.0
"""Tokens a second for a reply's output beyond `OUTPUT_MEAN`: about the 90th percentile of the rates the
real transcripts show (their CLIs recorded output mid-stream, so measured rates are lower bounds)."""
OUTPUT_MEAN = 226
"""Output tokens of the real replies, on average: what the drawn durations already include."""
RUN_ROOT = re.compile(r"/[^\s'\"]*?flower-bench-[^/\s]+/")
"""A run's temporary workspace in a path (`/tmp/flower-bench-x1y2/`): left out of a tool draw's key."""
TOOLS = {"Bash": "Bash", "Read": "Read", "Grep": "Read", "Glob": "Read", "Write": "Write", "Edit": "Write"}
WORKER_QUANTILES = (
    (0.0, 10.0),
    (0.10, 20.0),
    (0.25, 35.0),
    (0.50, 56.0),
    (0.75, 116.0),
    (0.82, 300.0),
    (0.90, 404.0),
    (0.97, 900.0),
    (1.0, 1800.0),
)
"""The stress clock's worker durations (seconds), log-linear between these (quantile, seconds): p50, p75,
p90 and the share over 5 minutes are measured on 56 real sessions; below the median they follow the 11
subagent runs of the calibration corpus (15-99 s); p97 and the maximum are assumed."""


def _rng(*about: object) -> random.Random:
    return random.Random("|".join(str(a) for a in about))


def at_quantile(table: Sequence[float], u: float) -> float:
    """The value at quantile `u` of a table of evenly spaced quantiles (min, ..., max), linear between
    them (with deciles, u = 0.55 lies halfway from the 5th decile to the 6th)."""
    k = u * (len(table) - 1)
    low = int(k)
    high = min(low + 1, len(table) - 1)
    return table[low] + (table[high] - table[low]) * (k - low)


def _bucket(tokens: int) -> str:
    if tokens >= 100_000:
        return ">=100k"
    if tokens >= 50_000:
        return "50-100k"
    return "20-50k" if tokens >= 20_000 else "<20k"


def request_seconds(seed: int, thread: str, index: int, tokens: int, output: int, about: str = "") -> float:
    """A request's duration: drawn for its context size (by what its reply does, `about`, else by its
    thread and index), plus its output beyond the real mean."""
    table = TABLES["request_seconds"][_bucket(tokens)]
    extra = max(0, output - OUTPUT_MEAN) / OUTPUT_RATE
    rng = _rng(seed, "request", about) if about else _rng(seed, "request", thread, index)
    return at_quantile(table, rng.random()) + extra


def tool_seconds(seed: int, name: str, key: str) -> float:
    """A tool's run time, drawn per tool; a Bash command by its text (without a pipe)."""
    table = TABLES["tool_seconds"].get(TOOLS.get(name, ""))
    return at_quantile(table, _rng(seed, "tool", name, key).random()) if table else 0.0


def worker_seconds(u: float) -> float:
    """The stress clock's worker duration at quantile `u`."""
    for (p0, v0), (p1, v1) in itertools.pairwise(WORKER_QUANTILES):
        if u <= p1:
            share = 0.0 if p1 == p0 else (u - p0) / (p1 - p0)
            return math.exp(math.log(v0) + share * (math.log(v1) - math.log(v0)))
    return WORKER_QUANTILES[-1][1]


def thread_of(caller: str, body: Mapping[str, Any]) -> str:
    """`main`, `compact`, or `worker:<task id>` (from the task id its mandate starts with)."""
    if caller in ("main", "compact"):
        return caller
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "user":
            found = TASK_ID.search(json.dumps(message.get("content")))
            if found:
                return f"worker:{found.group(1)}"
    return "worker:?"


def reply_tools(requests: Sequence[Any], threads: Sequence[str]) -> list[list[tuple[str, str]]]:
    """(tool, key) of the calls each request's reply made, read from its thread's next request (whose
    last assistant message is that reply); Agent calls are left out (their workers are timed)."""
    out: list[list[tuple[str, str]]] = [[] for _ in requests]
    later: dict[str, int] = {}
    for i in range(len(requests) - 1, -1, -1):
        nxt = later.get(threads[i])
        later[threads[i]] = i
        if nxt is None:
            continue
        messages = requests[nxt].body.get("messages") or []
        replies = [m for m in messages if isinstance(m, dict) and m.get("role") == "assistant"]
        content = replies[-1].get("content") if replies else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") != "Agent":
                data = block.get("input") or {}
                key = str(data.get("command") or data.get("file_path") or "").split(" | ")[0]
                out[i].append((str(block.get("name")), RUN_ROOT.sub("", key)))
    return out


def send_times(
    requests: Sequence[Any],
    idle: Mapping[int, float],
    clock: str,
    seed: int,
    tokens: Sequence[int],
    about: Mapping[int, str] | None = None,
) -> list[float]:
    """When each request was sent under `clock` (`CLOCKS`), `seed` drawing the calibrated durations;
    `tokens` is each request's context. `idle`: seconds of idle time after the request with that seq;
    `about`: what the reply to the request with that seq does (`Ledger.about`, the durations' key)."""
    about = about or {}
    if clock not in DRAWN:
        step = float(clock)
        durations = [step] * len(requests)
    else:
        threads = [thread_of(r.caller, r.body) for r in requests]
        tools = reply_tools(requests, threads)
        count = {t: threads.count(t) for t in set(threads)}
        durations = []
        for i, r in enumerate(requests):
            thread = threads[i]
            if clock == "stress" and thread.startswith("worker"):
                durations.append(worker_seconds(_rng(seed, "worker", thread).random()) / count[thread])
                continue
            took = request_seconds(seed, thread, r.index, tokens[i], r.output_tokens, about.get(r.seq, ""))
            took += sum(tool_seconds(seed, name, key) for name, key in tools[i])
            durations.append(took)
    times, now = [], 0.0
    for r, took in zip(requests, durations, strict=True):
        times.append(now)
        now += took + idle.get(r.seq, 0.0)
    return times


def worker_spans(requests: Sequence[Any], times: Sequence[float]) -> list[float]:
    """How long the coordinator waited on each delegation: from the main-thread request whose reply
    delegated to the next main-thread request, when workers ran in between (seconds)."""
    out: list[float] = []
    last: float | None = None
    ran = False
    for r, at in zip(requests, times, strict=True):
        if r.caller == "main":
            if last is not None and ran:
                out.append(at - last)
            last, ran = at, False
        elif r.caller != "compact":
            ran = True
    return out


__all__ = [
    "CLOCKS",
    "DRAWN",
    "SEEDS",
    "at_quantile",
    "send_times",
    "thread_of",
    "worker_seconds",
    "worker_spans",
]
