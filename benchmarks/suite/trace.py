"""A run reduced to numbers: one `Req` per request (priced by `flower._cost`), plus what the ledger says.

Each request is cut into cache blocks once, then priced through a simulated prompt cache under every
clock (`timing.CLOCKS`): the run's own clock gives the trace's requests (the billing block as sent, the
headline; and the billing block ignored, the sensitivity row), every clock its all-agent dollars
(`Trace.costs`). The marathon's residue per turn (`Workload.pad`) is a block after each assistant
message of the main thread, keyed by that message, so it is cached with the prefix it belongs to.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from flower._cost import TTL_1H, Block, PromptCache, TokenUsage, blocks_of, price

from . import bounds, floor, pricing, timing, warm
from .player import Ledger, ProbeRecord
from .probes import View, block_text, residue, stale_snapshots
from .runs import ONE_HOUR


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
    """The billing block as sent (the headline)."""
    ignored: TokenUsage
    """The billing block ignored by the cache."""
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
    clock: str = "calibrated"
    """The clock `requests` are timed and priced under."""
    costs: dict[str, float] = field(default_factory=dict)
    """All-agent dollars under each clock (`timing.CLOCKS`)."""
    waits: list[float] = field(default_factory=list)
    """Seconds the coordinator waited on each delegation, under `clock`."""
    report_chars: int = 0
    """Characters of the workers' reports (the Agent results) the main thread received."""
    reads_cut: float = 0.0
    """How often the coordinator was to Read a report flower's cap cut (`Behaviour.reads_cut`)."""
    cut_reads: int = 0
    """Cut reports the coordinator Read whole."""
    bounds: dict[str, dict[str, float]] = field(default_factory=dict)
    """All-agent dollars of each replay of `bounds.VARIANTS` under each of `bounds.CLOCKS` (flower's
    runs whose coordinator asked for a 1-hour cache and delegated; empty for the others)."""
    floor: float = 0.0
    """Dollars of this run replayed with nothing paid twice (`floor.py`): no clock moves it."""

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


@dataclass(frozen=True)
class Sent:
    """One request as sent, cut into the cache's blocks once (for every clock)."""

    caller: str
    model: str
    blocks: list[Block]
    ignored: list[Block]
    chars: int
    context: int
    residue: int
    output: int
    results: Mapping[int, str] = field(default_factory=dict)
    """Block key -> the tool_use id of each tool_result block (`floor.Seen.results`)."""
    trims: Mapping[int, int] = field(default_factory=dict)
    """Block key -> tokens of a worker's narration a report result carries (`floor.Seen.trims`)."""


def cut(body: Mapping[str, Any], caller: str, output: int, pad: int, view: View | None) -> Sent:
    """A `Sent` from a request body (the main thread's context includes the per-turn residue `pad`)."""
    pad = pad if caller == "main" else 0
    chars = len(json.dumps(body, ensure_ascii=False))
    blocks = blocks_of(body)
    results, trims = _results(body, blocks)
    return Sent(
        caller,
        str(body.get("model") or ""),
        with_pad(blocks, pad),
        with_pad(blocks_of(body, billing="ignored"), pad),
        chars,
        chars // 4 + pad * assistant_turns(body),
        residue(view) if view is not None else 0,
        output,
        results,
        trims,
    )


def _results(body: Mapping[str, Any], blocks: Sequence[Block]) -> tuple[dict[int, str], dict[int, int]]:
    """The tool_result blocks of a body by block key (their tool_use ids, and a report's narration):
    `blocks_of` cuts one block per dict item of each message, in order, so the two walks align."""
    items = []
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        listed = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        items += [item for item in listed if isinstance(item, dict)]
    results: dict[int, str] = {}
    trims: dict[int, int] = {}
    for block, item in zip([b for b in blocks if b.message >= 0], items, strict=True):
        if item.get("type") == "tool_result":
            results[block.key] = str(item.get("tool_use_id"))
            told = floor.narration(block_text(item.get("content")))
            if told:
                trims[block.key] = told
    return results, trims


def at_one_hour(sent: Sequence[Sent]) -> list[Sent]:
    """The same requests with every mark of the main thread at one hour: what a plain run with
    `CLAUDE_CODE_PROMPT_CACHE_TTL=1h` sends (measured: the CLI marks the main thread's requests so and
    leaves its compaction requests and subagents at 5 minutes; nothing else changes that prices)."""
    out = []
    for s in sent:
        if s.caller != "main":
            out.append(s)
            continue
        blocks, ignored = (
            [b if b.breakpoint is None else replace(b, breakpoint=TTL_1H) for b in found]
            for found in (s.blocks, s.ignored)
        )
        out.append(replace(s, blocks=blocks, ignored=ignored))
    return out


def usages(sent: Sequence[Sent], times: Sequence[float], *, ignored: bool = False) -> list[TokenUsage]:
    """Each request's usage through one fresh simulated cache (every agent of a run shares it)."""
    cache = PromptCache(billing="ignored" if ignored else "as_sent")
    return [
        cache.send_blocks(s.ignored if ignored else s.blocks, at=at, model=s.model, output=s.output)
        for s, at in zip(sent, times, strict=True)
    ]


def dollars(sent: Sequence[Sent], used: Sequence[TokenUsage]) -> float:
    """All-agent dollars of these usages, each at its request's model's prices."""
    models = {s.model for s in sent}
    return round(
        sum(
            price([u for s, u in zip(sent, used, strict=True) if s.model == m], model=m).total for m in models
        ),
        4,
    )


def _caller(name: str) -> str:
    return name if name in ("main", "compact") else "worker"


def _seeds(player: str) -> tuple[int, ...]:
    """The seeds that draw a drawn clock: the realistic player's own, or all of `timing.SEEDS`."""
    return (int(player.split("#")[1].split()[0]),) if "#" in player else timing.SEEDS


def from_recording(
    rec: Any, size: int = 0, run_clock: str = "calibrated", *, one_hour: bool = False
) -> Trace:
    """A real run (`record.Recording`) as a Trace under `run_clock`, with its dollars under every clock
    (`one_hour`: its main thread's marks at one hour, `at_one_hour`, named `<strategy> (1h cache)`).

    Under a drawn clock the realistic player's seed draws the durations; the ideal player's dollars are
    the median over `timing.SEEDS`, and its trace is the run under the median draw."""
    ledger: Ledger = rec.ledger
    requests = rec.requests
    sent: list[Sent] = []
    main_index: dict[int, int] = {}
    staleness: int | None = None
    pause_seqs = sorted(rec.resume_states)
    for r in requests:
        caller = _caller(r.caller)
        view = View(r.body) if caller == "main" else None
        if caller == "main":
            main_index[r.seq] = len(main_index)
            if view is not None and staleness is None and pause_seqs and r.seq > pause_seqs[0]:
                staleness = stale_snapshots(view, rec.resume_states[pause_seqs[0]])
        sent.append(cut(r.body, caller, r.output_tokens, rec.workload.pad, view))
    if one_hour:
        sent = at_one_hour(sent)
    idle = [ledger.idle.get(r.seq, 0.0) for r in requests]
    pinged = warm.keeps_warm(rec.strategy, sent)
    costs: dict[str, float] = {}
    chosen: dict[str, tuple[list[float], list[Sent], list[float], list[TokenUsage]]] = {}
    drawn: dict[str, list[list[float]]] = {}
    headline = sent
    for row in (*pricing.ROWS, *pricing.SENSITIVITY):
        counted = pricing.at_rate(sent, row)  # the row's model, its tokens per character
        tokens = [s.context for s in counted]
        clocks = timing.CLOCKS if row is pricing.SONNET else {*pricing.HEADLINE_CLOCKS, run_clock}
        for name in (c for c in timing.CLOCKS if c in clocks):
            runs = []
            for seed in _seeds(rec.behaviour.label) if name in timing.DRAWN else (0,):
                times = timing.send_times(
                    requests, ledger.idle, name, seed, tokens, getattr(ledger, "about", {})
                )
                # flower's pings, which its Runtime would have sent on this clock (none reach a recording)
                billed, at = (
                    warm.as_flower(counted, times, idle, rate=row.rate) if pinged else (counted, times)
                )
                used = usages(billed, at)
                runs.append((dollars(billed, used), times, billed, at, used))
            runs.sort(key=lambda run: run[0])
            costs[pricing.key(name, row)] = round(statistics.median(run[0] for run in runs), 4)
            if row is pricing.SONNET:
                median = runs[(len(runs) - 1) // 2]
                drawn[name] = [run[1] for run in runs]
                chosen[name] = median[1:]
                headline = counted
    times, billed, at, used = chosen[run_clock]
    ignored = usages(billed, at, ignored=True)
    earlier = pinged and bounds.asks_one_hour(sent)  # recorded before flower kept warm: re-marked
    replays = _replays(rec, headline, drawn) if bounds.asks_one_hour(sent) and not pinged else {}
    reqs = [
        Req(s.caller, when, s.chars, s.context, s.model, u, i, s.residue)
        for s, when, u, i in zip(billed, at, used, ignored, strict=True)
    ]
    events = []
    for kind, seq in ledger.events:
        after = [i for s, i in main_index.items() if s > seq]
        events.append((kind, min(after) if after else len(main_index)))
    return Trace(
        workload=rec.workload.key,
        strategy=rec.strategy.name + (ONE_HOUR if one_hour else ""),
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
        note=rec.strategy.note + (f"; {warm.EARLIER}" if earlier else ""),
        expected=rec.workload.expected,
        cli_gap=max(rec.gaps, default=0.0),
        clock=run_clock,
        costs=costs,
        waits=timing.worker_spans(requests, times),
        report_chars=_report_chars(requests),
        reads_cut=rec.behaviour.reads_cut,
        cut_reads=ledger.cut_reads,
        bounds=replays,
        floor=floor.floor_dollars(seen(requests, headline)),
    )


def seen(requests: Sequence[Any], sent: Sequence[Sent]) -> list[floor.Seen]:
    """A run's requests as the lower bound sees them (`floor.Seen`): each reply's noted facts are uses
    of the results that hold them, and a worker's report is as short as its lines."""
    finals = set(bounds.worker_finals(requests))
    out = []
    for i, (r, s) in enumerate(zip(requests, sent, strict=True)):
        facts = floor.noted(r.answer)
        uses = frozenset(
            result.tool_use_id for result in r.tool_results if facts and any(f in result.text for f in facts)
        )
        output = s.output - floor.narration(r.answer) if i in finals else s.output
        thread = timing.thread_of(r.caller, r.body)
        out.append(floor.Seen(thread, s.model, s.blocks, s.results, max(0, output), uses, s.trims))
    return out


def _replays(rec: Any, sent: list[Sent], drawn: dict[str, list[list[float]]]) -> dict[str, dict[str, float]]:
    """`Trace.bounds`: each replay priced under each of `bounds.CLOCKS`, with the send times `drawn` for
    the run's own pricing (one list per seed), the median over them (as `Trace.costs`)."""
    finals, excess = bounds.worker_finals(rec.requests), bounds.cut_excess(rec.requests)
    idle = [rec.ledger.idle.get(r.seq, 0.0) for r in rec.requests]
    out: dict[str, dict[str, float]] = {}
    for name in bounds.CLOCKS:
        per: dict[str, list[float]] = {}
        for times in drawn[name]:
            for variant, (replayed, at) in bounds.variants(sent, times, idle, finals, excess).items():
                per.setdefault(variant, []).append(dollars(replayed, usages(replayed, at)))
        out[name] = {variant: round(statistics.median(found), 4) for variant, found in per.items()}
    return out


def agent_call_ids(requests: Sequence[Any]) -> set[str]:
    """The ids of the Agent calls the main thread made (a worker's start, each once)."""
    return {
        str(b.get("id"))
        for r in requests
        if r.caller == "main"
        for b in r.tool_uses
        if b.get("name") == "Agent"
    }


def _report_chars(requests: Sequence[Any]) -> int:
    """Characters of every Agent result the main thread received (each once)."""
    agents = agent_call_ids(requests)
    seen: dict[str, int] = {}
    for r in requests:
        if r.caller == "main":
            for result in r.tool_results:
                if result.tool_use_id in agents:
                    seen[result.tool_use_id] = len(result.text)
    return sum(seen.values())
