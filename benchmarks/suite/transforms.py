"""Peers' strategies as pure transforms of the recorded `baseline_raw` run: approximations, labelled so.

They cannot be installed into the CLI, so each recorded main-thread request is rewritten into the
request the strategy would have sent (peers.md §1.1, §1.7, §1.8, §4.1):
- `mask_N` (SWE-agent's LastNObservations, n=5; JetBrains' M=10): every tool result but the N most recent
  becomes `Old environment output: (k lines omitted)`; tool calls are kept;
- `clear_tool_uses` (the API's context editing, trigger 100k input tokens, keep 3, clear_at_least 0):
  once the request reaches the trigger, every tool result but the 3 most recent becomes `[cleared]`;
  inputs are kept.
Probes are asked again of each rewritten request. A fact that is gone (no pointer either) is re-run if
its tool is idempotent: the re-run call and the output the raw run saw are inserted into this request
and every later one, and count as one more request; otherwise the probe fails. A denied command whose
refusal was masked is issued again (counted as a retry; its request is not added). A request over the
CLI's local limit (window - 23k) ends the strategy's run there: these strategies never compact.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .actions import Workload
from .player import Ledger, ProbeRecord
from .probes import View, block_text, decide, denial_visible, latest_state, prints, stale_snapshots
from .trace import TURN_SECONDS, Req, Trace, make_req

MASK_NOTE = "Old environment output: ({lines} lines omitted)"
CLEARED = "[cleared]"


@dataclass(frozen=True)
class Peer:
    """One peer strategy: mask the last `keep` results always, or clear past `trigger` tokens."""

    name: str
    kind: str
    keep: int
    trigger: int = 0
    note: str = ""


PEERS = (
    Peer("mask_5", "mask", 5, note="SWE-agent LastNObservations, n=5"),
    Peer("mask_10", "mask", 10, note="JetBrains observation masking, M=10"),
    Peer("clear_tool_uses", "clear", 3, trigger=100_000, note="API context editing, trigger 100k, keep 3"),
)


def edit(peer: Peer, messages: Sequence[Mapping[str, Any]], tokens: int) -> list[Any]:
    """The messages as the peer would send them (`tokens`: the unedited request's size, for the trigger)."""
    spots = [
        (m, b)
        for m, message in enumerate(messages)
        if isinstance(message.get("content"), list)
        for b, block in enumerate(message["content"])
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    if peer.kind == "clear" and tokens < peer.trigger:
        return list(messages)
    old = spots[: max(0, len(spots) - peer.keep)]
    out = list(messages)
    for m, b in old:
        message = dict(out[m])
        content = list(message["content"])
        block = dict(content[b])
        text = block_text(block.get("content"))
        note = MASK_NOTE.format(lines=text.count("\n") + 1) if peer.kind == "mask" else CLEARED
        block["content"] = note
        content[b] = block
        message["content"] = content
        out[m] = message
    return out


def with_insertions(messages: Sequence[Any], insertions: Sequence[tuple[int, list[Any]]]) -> list[Any]:
    """Raw messages with the inserted re-run pairs placed after the raw message count they anchor to."""
    out: list[Any] = []
    start = 0
    for anchor, pair in sorted(insertions, key=lambda item: item[0]):
        if anchor > len(messages):
            break
        out += list(messages[start:anchor]) + pair
        start = anchor
    return out + list(messages[start:])


def rerun_pair(messages: Sequence[Mapping[str, Any]], label: str, n: int) -> list[Any] | None:
    """A copy of the call that printed `label` and of its result, with a fresh id (None if absent)."""
    body = {"messages": list(messages)}
    pair = next((p for p in reversed(View(body).pairs) if prints(p, label)), None)
    if pair is None:
        return None
    result = next(
        block
        for message in messages
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict)
        and block.get("type") == "tool_result"
        and block.get("tool_use_id") == pair.id
    )
    ident = f"toolu_rerun_{n:04d}"
    use = {"type": "tool_use", "id": ident, "name": pair.name, "input": copy.deepcopy(dict(pair.input))}
    return [
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [{**result, "tool_use_id": ident}]},
    ]


def _tokens(body: Mapping[str, Any], pad: int) -> int:
    turns = sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")
    return len(json.dumps(body, ensure_ascii=False)) // 4 + pad * turns


def transform(
    peer: Peer,
    workload: Workload,
    bodies: Sequence[Mapping[str, Any]],
    times: Sequence[float],
    ledger: Ledger,
    *,
    finished: bool,
    limit: int,
    resume: tuple[int, int] | None = None,
) -> Trace:
    """The Trace the peer would have produced, from the raw run's main-thread requests.

    `resume` is (index of the first main request after the pause, the true state version then).
    """
    probes_at: dict[int, list[ProbeRecord]] = {}
    for probe in ledger.probes:
        if probe.caller == "main":
            probes_at.setdefault(probe.index, []).append(probe)
    denials_at: dict[int, list[str]] = {}
    for caller, index, command in ledger.denials:
        if caller == "main":
            denials_at.setdefault(index, []).append(command)
    insertions: list[tuple[int, list[Any]]] = []
    out: list[Req] = []
    records: list[ProbeRecord] = []
    attempts: dict[str, int] = {}
    skipped, shift, staleness, checks = 0, 0.0, None, []
    stop = len(bodies)

    def build(raw: Mapping[str, Any]) -> dict[str, Any]:
        messages = with_insertions(raw["messages"], insertions)
        return {**raw, "messages": edit(peer, messages, _tokens({**raw, "messages": messages}, workload.pad))}

    for i, raw in enumerate(bodies):
        body = build(raw)
        view = View(body)
        req = make_req(body, "main", times[i] + shift, workload.pad, view)
        if req.context > limit:
            finished, stop = False, i
            break
        out.append(req)
        if resume is not None and i == resume[0]:
            staleness = stale_snapshots(view, resume[1])
            seen = latest_state(view)
            checks.append("re-run" if seen is None else "current" if seen == resume[1] else "stale")
        for command in denials_at.get(i, []):
            if denial_visible(view, command):
                skipped += 1
            else:
                attempts[command] = attempts.get(command, 0) + 1
        for probe in probes_at.get(i, []):
            fact = probe.fact
            record = ProbeRecord(fact, probe.verdict, "main", len(out) - 1, probe.answered, probe.extra)
            nxt = decide(view, fact.text, fact.label, idempotent=fact.idempotent, tried=(), reran=False)
            if nxt.decision == "rerun":
                pair = rerun_pair(with_insertions(raw["messages"], insertions), fact.label, len(insertions))
                if pair is None:
                    record.answered, record.extra = False, 0
                else:
                    insertions.append((len(raw["messages"]), pair))
                    shift += TURN_SECONDS
                    again = build(raw)
                    out.append(make_req(again, "main", times[i] + shift, workload.pad, View(again)))
                    record.extra += 1
            elif nxt.decision == "failed":
                record.answered, record.extra = False, 0
            records.append(record)
    lost = [_lost(p) for p in ledger.probes if p.caller == "main" and p.index >= stop]
    return Trace(
        workload=workload.key,
        strategy=peer.name,
        source="approximation",
        requests=out,
        probes=records + lost,
        finished=finished,
        error=None if finished else "stopped at the CLI's local limit (never compacts)",
        staleness=staleness,
        state_checks=checks,
        retries=sum(max(0, n - 1) for n in attempts.values()),
        skipped=skipped,
        reuse_writes=ledger.writes,
        reuse_runs=ledger.runs,
        note=peer.note,
        expected=workload.expected,
    )


def _lost(probe: ProbeRecord) -> ProbeRecord:
    """A probe the strategy never reached (its run stopped before)."""
    return ProbeRecord(probe.fact, probe.verdict, "main", probe.index, False, 0)
