"""A run reduced to numbers: one `Req` per request, plus what the agents' ledger says.

Real runs and the peers' transforms end up in the same `Trace`, so metrics, tables and plots treat them
alike. A request's blocks are keyed by their JSON with `cache_control` marks removed and a string
content read as one text block (the CLI moves those marks and changes that form from one request to the
next; neither changes the content the cache sees).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .cache import Block, tokens_of
from .player import Ledger, ProbeRecord
from .probes import View, residue, stale_snapshots

TURN_SECONDS = 20.0
"""Simulated clock: every request moves it 20 s, plus the workload's idle gaps (peers.md §4.1)."""


@dataclass(frozen=True)
class Req:
    """One request: who sent it, when (simulated), its size, its blocks and a few content measures."""

    caller: str
    time: float
    chars: int
    context: int
    """Tokens the model is told it holds (chars / 4, plus the marathon's residue per turn)."""
    blocks: tuple[Block, ...]
    residue: int = 0


@dataclass
class Trace:
    """Everything the report needs about one strategy on one workload."""

    workload: str
    strategy: str
    source: str
    """`real` (a run through the CLI) or `approximation` (a transform of the recorded raw run)."""
    requests: list[Req]
    probes: list[ProbeRecord]
    finished: bool
    error: str | None = None
    events: list[tuple[str, int]] = field(default_factory=list)
    """(kind, index among the main thread's requests of the first request after the event)."""
    staleness: int | None = None
    state_checks: list[str] = field(default_factory=list)
    retries: int = 0
    skipped: int = 0
    reuse_writes: int = 0
    reuse_runs: int = 0
    wall: float = 0.0
    note: str = ""
    expected: tuple[int, int] = (0, 0)
    """Fact probes and verdict probes the workload asks: one not reached counts as failed."""

    @property
    def main(self) -> list[Req]:
        """The main thread's requests, in order."""
        return [r for r in self.requests if r.caller == "main"]


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _block(value: Any) -> Block:
    text = json.dumps(_strip(value), sort_keys=True, ensure_ascii=False)
    return Block(hash(text), tokens_of(len(text)))


def blocks_of(body: Mapping[str, Any], pad: int = 0) -> tuple[Block, ...]:
    """The ordered blocks of a request body: system blocks, the tool list, every message block.

    With `pad`, each assistant message is followed by a block of `pad` tokens (the marathon's residue per
    turn), keyed by that message, so it is cached along with the prefix it belongs to.
    """
    system = body.get("system") or []
    out = [_block(b) for b in (system if isinstance(system, list) else [system])]
    out.append(_block(body.get("tools") or []))
    for message in body.get("messages") or []:
        content = message.get("content")
        items = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        blocks = [_block({"role": message.get("role"), **item}) for item in items if isinstance(item, dict)]
        out += blocks
        if pad and message.get("role") == "assistant":
            out.append(Block(hash(("pad", tuple(b.key for b in blocks))), pad))
    return tuple(out)


def assistant_turns(body: Mapping[str, Any]) -> int:
    """Assistant messages in a request: the turn the marathon's residue is counted on."""
    return sum(1 for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "assistant")


def make_req(body: Mapping[str, Any], caller: str, time: float, pad: int, view: View | None = None) -> Req:
    """A `Req` from a request body (the main thread's context includes the per-turn residue `pad`)."""
    chars = len(json.dumps(body, ensure_ascii=False))
    context = chars // 4 + (pad * assistant_turns(body) if caller == "main" else 0)
    found = residue(view) if view is not None else 0
    return Req(caller, time, chars, context, blocks_of(body, pad if caller == "main" else 0), found)


def clock(count: int, idle_after: Mapping[int, float]) -> list[float]:
    """Simulated send times of `count` requests, with idle gaps after the given request positions."""
    times, now = [], 0.0
    for i in range(count):
        times.append(now)
        now += TURN_SECONDS + idle_after.get(i, 0.0)
    return times


def from_recording(rec: Any) -> Trace:
    """A real run (`runs.Recording`) as a Trace."""
    ledger: Ledger = rec.ledger
    requests = rec.requests
    times = clock(len(requests), ledger.idle)
    reqs: list[Req] = []
    main_index: dict[int, int] = {}
    staleness: int | None = None
    pause_seqs = sorted(rec.resume_states)
    for r, when in zip(requests, times, strict=True):
        caller = "main" if r.caller == "main" else ("compact" if r.caller == "compact" else "worker")
        view = View(r.body) if caller == "main" else None
        if caller == "main":
            main_index[r.seq] = len(main_index)
            if view is not None and staleness is None and pause_seqs and r.seq > pause_seqs[0]:
                staleness = stale_snapshots(view, rec.resume_states[pause_seqs[0]])
        reqs.append(make_req(r.body, caller, when, rec.workload.pad, view))
    events = []
    for kind, seq in ledger.events:
        after = [i for s, i in main_index.items() if s > seq]
        events.append((kind, min(after) if after else len(main_index)))
    return Trace(
        workload=rec.workload.key,
        strategy=rec.strategy.name,
        source="real",
        requests=reqs,
        probes=list(ledger.probes),
        finished=rec.finished,
        error=rec.error,
        events=events,
        staleness=staleness,
        state_checks=list(ledger.state_checks),
        retries=ledger.retries,
        skipped=ledger.skipped,
        reuse_writes=ledger.writes,
        reuse_runs=ledger.runs,
        wall=rec.wall,
        note=rec.strategy.note,
        expected=rec.workload.expected,
    )


def main_bodies(rec: Any) -> tuple[list[Mapping[str, Any]], list[float]]:
    """The raw run's main-thread request bodies and their simulated times (the transforms' input)."""
    times = clock(len(rec.requests), rec.ledger.idle)
    pairs = [(r.body, t) for r, t in zip(rec.requests, times, strict=True) if r.caller == "main"]
    return [b for b, _ in pairs], [t for _, t in pairs]
