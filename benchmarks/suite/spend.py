"""Where a run's money goes: every token of every request priced and put in one category.

A recording is priced as the suite prices its headline row (Sonnet 4.6 at its measured tokens per
character, `pricing.SONNET`; one simulated cache, the run's clock and seed); each
request's usage is then laid over its blocks in the API's order: the prefix it read, the segments it
wrote (each at its mark's lifetime), the plain input after its last mark. A block's share of each is
paid at the model's prices and added to `<its category>: <read | write 5m | write 1h | input>`:

- `coordinator prompt` / `worker prompt`: the tools and system blocks (the CLI's and flower's prompt);
- `reports`: the Agent results the coordinator carries, without `hand-back frames` (the CLI's
  `[Subagent hand-back]` preamble and its `agentId`/`<usage>` tail around each report);
- `mandates and own calls`: what the coordinator wrote (its Agent calls, glances, notes, prose);
- `own results`: the coordinator's other tool results (glances, Reads, greps); `task`: user text;
- `worker mandates`, `worker outputs`, `worker calls`: the same inside the workers' contexts;
- `compaction`: the CLI's summary requests; `output: coordinator` / `output: workers`.

`pings`: the keep-warm requests flower's `Runtime` sends while its coordinator waits on a worker, priced
as the suite prices them (`warm.as_flower`; a recording holds none), input and output together.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from flower._cost import TTL_5M, PromptCache, blocks_of, price, price_for

from . import pricing, timing, warm
from .probes import block_text
from .trace import Sent, cut

FRAME_END = "\nagentId:"
"""Where the CLI's tail after a report starts (`agentId: … <usage>…`)."""
REPORT_START = "[task "
"""Where the scripted worker's report starts inside the hand-back (`delegate.Worker.finish`)."""


def _categories(body: Mapping[str, Any], caller: str) -> list[tuple[str, float]]:
    """(category, share of the block that is the hand-back frame) of each block, in `blocks_of`'s order."""
    side = "coordinator" if caller == "main" else "worker"
    out: list[tuple[str, float]] = []
    out += [(f"{side} prompt", 0.0)] * len([t for t in body.get("tools") or [] if isinstance(t, dict)])
    system = body.get("system") or []
    out += [(f"{side} prompt", 0.0)] * (1 if isinstance(system, str) else len(system))
    agents = {
        str(item.get("id"))
        for message in body.get("messages") or []
        if isinstance(message, dict) and isinstance(message.get("content"), list)
        for item in message["content"]
        if isinstance(item, dict) and item.get("type") == "tool_use" and item.get("name") in ("Agent", "Task")
    }
    first_user = True
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        items = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        role = message.get("role")
        for item in (i for i in items if isinstance(i, dict)):
            out.append(_category(item, role, side, agents, first_user))
        if role == "user":
            first_user = False
    return out


def _category(
    item: Mapping[str, Any], role: Any, side: str, agents: set[str], first_user: bool
) -> tuple[str, float]:
    if role == "assistant":
        return ("mandates and own calls" if side == "coordinator" else "worker calls", 0.0)
    if item.get("type") != "tool_result":
        if side == "worker":
            return ("worker mandates" if first_user else "worker outputs", 0.0)
        return ("task", 0.0)
    if side == "worker":
        return ("worker outputs", 0.0)
    if str(item.get("tool_use_id")) not in agents:
        return ("own results", 0.0)
    text = block_text(item.get("content"))
    start, end = text.find(REPORT_START), text.find(FRAME_END)
    frame = max(0, start) + (len(text) - end if end >= 0 else 0)
    return ("reports", frame / len(text) if text else 0.0)


def spend(rec: Any, clock: str = "calibrated", seed: int | None = None) -> dict[str, float]:
    """Dollars of one recording by category, under `clock` drawn with `seed` (default: the realistic
    player's own seed, else 1)."""
    requests = rec.requests
    if seed is None:
        seed = rec.behaviour.seed if rec.behaviour.realistic else 1
    sent: list[Sent] = []
    kinds: list[list[tuple[str, float]]] = []
    for r in requests:
        caller = r.caller if r.caller in ("main", "compact", "ping") else "worker"
        sent.append(cut(r.body, caller, r.output_tokens, rec.workload.pad, None))
        pad = rec.workload.pad if caller == "main" else 0
        kinds.append(_with_residue(r.body, _categories(r.body, caller), pad))
    sent = pricing.at_rate(sent, pricing.SONNET)  # the headline row's model and tokens per character
    tokens = [s.context for s in sent]
    about = getattr(rec.ledger, "about", {})
    times = timing.send_times(requests, rec.ledger.idle, clock, seed, tokens, about)
    if warm.keeps_warm(rec.strategy, sent):
        idle = [rec.ledger.idle.get(r.seq, 0.0) for r in requests]
        sent, times = warm.as_flower(sent, times, idle, rate=pricing.SONNET.rate)
        own = iter(kinds)  # the run's own requests keep their order among the pings
        kinds = [[] if s.caller == warm.PING else next(own) for s in sent]
    cache = PromptCache()
    out: dict[str, float] = defaultdict(float)
    for s, kind, at in zip(sent, kinds, times, strict=True):
        usage = cache.send_blocks(s.blocks, at=at, model=s.model, output=s.output)
        if s.caller == warm.PING:
            out["pings"] += price([usage], model=s.model).total
            continue
        row = price_for(s.model)[0]
        label = {"main": "coordinator", "compact": "compaction", "ping": "pings"}.get(s.caller, "workers")
        out[f"output: {label}"] += usage.output * row.output / 1e6
        for category, dollars in _laid(s, kind, usage.cache_read, row).items():
            out[category] += dollars
    return {k: round(v, 4) for k, v in sorted(out.items(), key=lambda kv: -kv[1])}


def _laid(s: Sent, kind: Sequence[tuple[str, float]], hit: int, row: Any) -> dict[str, float]:
    """One request's input dollars by category: its blocks over the read prefix, the written segments
    (each at its mark's lifetime, as `PromptCache` bills them) and the plain input."""
    spans: list[tuple[int, float, str]] = []  # (end token, dollars per token, how) of each billed range
    total, cumulative, marks = 0, [], []
    for i, block in enumerate(s.blocks):
        total += block.tokens
        cumulative.append(total)
        if block.breakpoint is not None:
            marks.append(i)
    spans.append((hit, row.cache_read / 1e6, "read"))
    done = hit
    for mark in marks:
        if cumulative[mark] >= row.min_cacheable and cumulative[mark] > done:
            ttl = s.blocks[mark].breakpoint or TTL_5M
            one_hour = ttl > TTL_5M
            rate = (row.cache_creation_1h if one_hour else row.cache_creation) / 1e6
            spans.append((cumulative[mark], rate, "write 1h" if one_hour else "write 5m"))
            done = cumulative[mark]
    spans.append((total, row.input / 1e6, "input"))
    out: dict[str, float] = defaultdict(float)
    start = 0
    for end, (category, frame) in zip(cumulative, kind, strict=True):
        low = start
        for span_end, rate, how in spans:
            high = min(end, span_end)
            if high > low:
                paid = (high - low) * rate
                if frame:
                    out[f"hand-back frames: {how}"] += paid * frame
                out[f"{category}: {how}"] += paid * (1 - frame)
                low = high
            if low >= end:
                break
        start = end
    return out


def _with_residue(
    body: Mapping[str, Any], kinds: list[tuple[str, float]], pad: int
) -> list[tuple[str, float]]:
    """`kinds` with a `residue` entry after each assistant message, where `trace.with_pad` puts the
    marathon's residue block (`pad` tokens a main-thread turn)."""
    if not pad:
        return kinds
    blocks = blocks_of(body)
    out: list[tuple[str, float]] = []
    for i, (block, kind) in enumerate(zip(blocks, kinds, strict=True)):
        out.append(kind)
        ends = i + 1 == len(blocks) or blocks[i + 1].message != block.message
        if block.role == "assistant" and ends:
            out.append(("residue", 0.0))
    return out


__all__ = ["spend"]
