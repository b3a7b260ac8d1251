"""The peers' strategies as server-side edits of each request: real runs, with the CLI's compaction behind.

A peer runs as the plain SDK does (flower's tool list, compaction on); the scripted model rewrites every
request before the agent reads it (`ScriptedModel(edit=...)`), so the agent decides from the request the
strategy would have sent, its usage is what the CLI counts (so the CLI compacts when the *edited*
context reaches its line), and the cost is computed on the edited request:
- `mask`: SWE-agent's `LastNObservations`: observations are the task prompt and every
  tool result; all but the last `n` become `Old environment output: (k lines omitted)`, the task prompt
  never. With `polling` P the number removed is `floor(count / P) * P - n`, so the masked boundary moves
  once every P results (between n and n + P results stay): the option SWE-agent ships for caching.
- `clear`: the API's `clear_tool_uses_20250919`, `flower.testing.ClearToolUses`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from flower.testing import ClearToolUses

from .probes import block_text

MASK_NOTE = "Old environment output: ({lines} lines omitted)"


@dataclass(frozen=True)
class Masking:
    """SWE-agent's `LastNObservations(n, polling)` over a request body."""

    n: int
    polling: int = 1

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages")
        if not isinstance(messages, list):
            return body
        spots = [
            (m, b)
            for m, message in enumerate(messages)
            if isinstance(message, dict) and isinstance(message.get("content"), list)
            for b, block in enumerate(message["content"])
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]
        observations = 1 + len(spots)  # the task prompt is SWE-agent's first observation
        removed = max(0, (observations // self.polling) * self.polling - self.n)
        old = spots[: max(0, removed - 1)]  # never the first observation (the task prompt)
        if not old:
            return body
        out = copy.copy(body)
        out["messages"] = list(messages)
        for m, b in old:
            message = dict(out["messages"][m])
            content = list(message["content"])
            text = block_text(content[b].get("content"))
            content[b] = {**content[b], "content": MASK_NOTE.format(lines=text.count("\n") + 1)}
            message["content"] = content
            out["messages"][m] = message
        return out


@dataclass(frozen=True)
class Peer:
    """A peer strategy: its name in the tables, the edit, and where its setting comes from."""

    name: str
    edit: Masking | ClearToolUses
    note: str


MASKS = (
    Peer("mask n5 p1", Masking(5, 1), "SWE-agent LastNObservations, n=5 (its paper's), polling 1"),
    Peer("mask n5 p5", Masking(5, 5), "n=5, polling 5"),
    Peer("mask n10 p10", Masking(10, 10), "n=10, polling 10"),
)
"""The masking sweep (n and polling; n=10 with polling 1 costs like n=5 with polling 1, every request a
rewrite, and is left out for time); the cheapest per workload is the peer's best."""

CLEARS = (
    Peer("clear_tool_uses", ClearToolUses(), "API defaults: trigger 100k, keep 3, clear_at_least 0"),
    Peer(
        "clear_tool_uses tuned",
        ClearToolUses(trigger=50_000, keep=3, clear_at_least=20_000),
        "trigger 50k, keep 3, clear_at_least 20k",
    ),
)
"""`clear_tool_uses` at its defaults and one tuned setting."""


def _clear(trigger: int, keep: int, least: int) -> Peer:
    """One setting of the `clear_tool_uses` sweep, named by its three numbers."""
    name = f"clear_tool_uses t{trigger // 1000}k k{keep} a{least // 1000}k"
    return Peer(name, ClearToolUses(trigger=trigger, keep=keep, clear_at_least=least), name.split(" ", 1)[1])


CLEAR_SWEEP = (
    _clear(30_000, 3, 20_000),
    _clear(80_000, 3, 20_000),
    _clear(50_000, 1, 20_000),
    _clear(50_000, 6, 20_000),
    _clear(50_000, 3, 0),
    _clear(50_000, 3, 40_000),
    _clear(30_000, 1, 0),
)
"""The `clear_tool_uses` sweep run on the held-out seed only: each of (trigger, keep, clear_at_least)
moved one way and the other from the tuned setting (50k, 3, 20k), and the most eager corner (30k, 1, 0).
The cheapest of these and `CLEARS` there is `clear_tool_uses` at its best."""

PEERS = {peer.name: peer for peer in (*MASKS, *CLEARS, *CLEAR_SWEEP)}

CLEAR_ACTS = frozenset({"w1", "w4"})
"""Workloads whose context reaches `clear_tool_uses`' default 100k trigger; elsewhere that setting would
replay `baseline_raw` request for request (with compaction on, which it never reaches) and is not run."""
