"""A run reduced to numbers: one `Req` per request (priced by `flower.cost`), plus what the ledger says.

Each request goes through three simulated prompt caches, one per pricing the report shows: the billing
block as sent (the headline), the billing block ignored (the sensitivity row), and a 1-hour cache. The
marathon's residue per turn (`Workload.pad`) is a block after each assistant message of the main
thread, keyed by that message, so it is cached with the prefix it belongs to.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from flower.cost import TTL_1H, Block, PromptCache, TokenUsage, blocks_of

from .player import Ledger, ProbeRecord
from .probes import View, residue, stale_snapshots

TURN_SECONDS = 20.0
"""Simulated clock: every request moves it 20 s, plus the workload's idle gaps."""


@dataclass(frozen=True)
class Req:
    """One request: who sent it, when (simulated), its size and its usage under each pricing."""

    caller: str
    time: float
    chars: int
    context: int
    """Tokens the model is told it holds (chars / 4, plus the marathon's residue per turn)."""
    model: str
    usage: TokenUsage
    """The billing block as sent, 5-minute cache (the headline)."""
    ignored: TokenUsage
    """The billing block ignored by the cache."""
    hour: TokenUsage
    """A 1-hour cache."""
    residue: int = 0


@dataclass
class Trace:
    """Everything the report needs about one strategy on one workload, under one player."""

    workload: str
    strategy: str
    family: str
    requests: list[Req]
    probes: list[ProbeRecord]
    finished: bool
    player: str = "ideal"
    size: int = 0
    error: str | None = None
    events: list[tuple[str, int]] = field(default_factory=list)
    """(kind, index among the main thread's requests of the first request after the event)."""
    staleness: int | None = None
    state_checks: list[str] = field(default_factory=list)
    retries: int = 0
    skipped: int = 0
    reuse_writes: int = 0
    reuse_runs: int = 0
    mandates: int = 0
    """Agent calls of the main thread (each a mandate, a worker start and a hand-back frame)."""
    wall: float = 0.0
    note: str = ""
    expected: tuple[int, int] = (0, 0)
    """Fact probes and verdict probes the workload asks: one not reached counts as failed."""
    cli_gap: float = 0.0
    """The largest gap between transcript entries a resumed plain session showed the CLI (seconds)."""

    @property
    def main(self) -> list[Req]:
        """The main thread's requests, in order."""
        return [r for r in self.requests if r.caller == "main"]


def with_pad(blocks: Sequence[Block], pad: int) -> list[Block]:
    """`blocks` with a block of `pad` tokens after each assistant message (the marathon's residue)."""
    if not pad:
        return list(blocks)
    out: list[Block] = []
    for i, block in enumerate(blocks):
        out.append(block)
        ends = i + 1 == len(blocks) or blocks[i + 1].message != block.message
        if block.role == "assistant" and ends:
            keys = tuple(b.key for b in blocks[: i + 1] if b.message == block.message)
            out.append(Block(hash(("pad", keys)), pad, None, "assistant", block.message))
    return out


def assistant_turns(body: Mapping[str, Any]) -> int:
    """Assistant messages in a request: the turn the marathon's residue is counted on."""
    return sum(1 for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "assistant")


class Pricer:
    """The three simulated caches a run's requests go through, in order."""

    def __init__(self) -> None:
        self.sent = PromptCache()
        self.ignored = PromptCache(billing="ignored")
        self.hour = PromptCache(ttl=TTL_1H)

    def req(
        self, body: Mapping[str, Any], caller: str, at: float, output: int, pad: int, view: View | None
    ) -> Req:
        """A `Req` from a request body (the main thread's context includes the per-turn residue `pad`)."""
        pad = pad if caller == "main" else 0
        model = str(body.get("model") or "")
        chars = len(json.dumps(body, ensure_ascii=False))
        sent, ignored = blocks_of(body), blocks_of(body, billing="ignored")
        usage = self.sent.send_blocks(with_pad(sent, pad), at=at, model=model, output=output)
        return Req(
            caller,
            at,
            chars,
            chars // 4 + pad * assistant_turns(body),
            model,
            usage,
            self.ignored.send_blocks(with_pad(ignored, pad), at=at, model=model, output=output),
            self.hour.send_blocks(with_pad(sent, pad), at=at, model=model, output=output),
            residue(view) if view is not None else 0,
        )


def clock(count: int, idle_after: Mapping[int, float]) -> list[float]:
    """Simulated send times of `count` requests, with idle gaps after the given request positions."""
    times, now = [], 0.0
    for i in range(count):
        times.append(now)
        now += TURN_SECONDS + idle_after.get(i, 0.0)
    return times


def _caller(name: str) -> str:
    return name if name in ("main", "compact") else "worker"


def from_recording(rec: Any, size: int = 0) -> Trace:
    """A real run (`record.Recording`) as a Trace."""
    ledger: Ledger = rec.ledger
    requests = rec.requests
    times = clock(len(requests), ledger.idle)
    pricer = Pricer()
    reqs: list[Req] = []
    main_index: dict[int, int] = {}
    staleness: int | None = None
    pause_seqs = sorted(rec.resume_states)
    for r, when in zip(requests, times, strict=True):
        caller = _caller(r.caller)
        view = View(r.body) if caller == "main" else None
        if caller == "main":
            main_index[r.seq] = len(main_index)
            if view is not None and staleness is None and pause_seqs and r.seq > pause_seqs[0]:
                staleness = stale_snapshots(view, rec.resume_states[pause_seqs[0]])
        reqs.append(pricer.req(r.body, caller, when, r.output_tokens, rec.workload.pad, view))
    events = []
    for kind, seq in ledger.events:
        after = [i for s, i in main_index.items() if s > seq]
        events.append((kind, min(after) if after else len(main_index)))
    return Trace(
        workload=rec.workload.key,
        strategy=rec.strategy.name,
        family=rec.strategy.family,
        requests=reqs,
        probes=list(ledger.probes),
        finished=rec.finished,
        player=rec.behaviour.label,
        size=size,
        error=rec.error,
        events=events,
        staleness=staleness,
        state_checks=list(ledger.state_checks),
        retries=ledger.retries,
        skipped=ledger.skipped,
        reuse_writes=ledger.writes,
        reuse_runs=ledger.runs,
        mandates=len(
            {
                str(block.get("id"))
                for r in requests
                if r.caller == "main"
                for block in r.tool_uses
                if block.get("name") == "Agent"
            }
        ),
        wall=rec.wall,
        note=rec.strategy.note,
        expected=rec.workload.expected,
        cli_gap=max(rec.gaps, default=0.0),
    )
