"""A real lower bound on what a workload's run can cost: its requests with nothing paid twice.

A run's requests are replayed with three things no strategy can beat, and nothing else changed (the
same requests, in the same order, each with its own blocks):

- **every tool output dropped right after its last use**: a tool result is in the context from the
  request that first carries it (the model reads it there) through the last request whose reply uses it
  (notes a fact, `K=v`, that the result holds), and costs nothing after that;
- **the cache always warm**: a block the run has sent before (any agent, any time) is read from the
  cache (0.1x input); only a block sent for the first time is paid, at the plain input price, below a
  cache write's 1.25x (or 2x) and below any re-write an expired or broken prefix costs;
- **minimal reports**: a worker's final report without the narration the realistic player adds to it
  (its output, and the report as the coordinator's context carries it, are as short as its lines).

Every request pays at least that much as sent (a block first sent pays at least the input price; a block
carried pays at least the cache read), so the replay of a run never costs more than the run. The bound
of a workload, for one player and seed, is the cheapest such replay over every strategy that ran it:
no strategy of the suite costs less. It depends on no clock. Being a bound, it is not a strategy: it
assumes an oracle that knows each output's last use, and it keeps the prefix cached past any removal,
which the API's prefix cache does not.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from flower._cost import Block, TokenUsage, price, tokens_of

NARRATION = re.compile(r"\n[ \t]*What I did: ")
"""Where the realistic worker's narration starts in its report (`delegate.Worker.finish`; the CLI's
hand-back indents every line of a report)."""
NOTED = re.compile(r"Noted ([\w-]+=\w+)\.")
"""A fact a reply notes (`player.Actor._advance`): a use of the result that holds it."""


@dataclass(frozen=True)
class Seen:
    """One request as the bound sees it."""

    thread: str
    """`main`, `compact` or `worker:<task id>` (`timing.thread_of`): whose context it is."""
    model: str
    blocks: Sequence[Block]
    results: Mapping[int, str]
    """Block key -> the tool_use id of a tool_result block."""
    output: int
    """Output tokens of its reply, a worker's report as short as its lines."""
    uses: frozenset[str] = frozenset()
    """Tool results (by tool_use id) its reply uses beyond their first read."""
    trims: Mapping[int, int] | None = None
    """Block key -> tokens of narration a report result carries (left out of the bound)."""


def last_uses(seen: Sequence[Seen]) -> dict[tuple[str, str], int]:
    """(thread, tool_use id) -> the index of the last request of that thread that uses the result: the
    first that carries it, or a later one whose reply uses it (`Seen.uses`)."""
    last: dict[tuple[str, str], int] = {}
    for i, request in enumerate(seen):
        for ident in request.results.values():
            last.setdefault((request.thread, ident), i)
        for ident in request.uses:
            if (request.thread, ident) in last:
                last[(request.thread, ident)] = i
    return last


def floor_usage(seen: Sequence[Seen]) -> dict[str, TokenUsage]:
    """The bound's usage per model: blocks first sent as input, carried blocks as cache reads, dropped
    results nothing, outputs as given."""
    last = last_uses(seen)
    sent: set[int] = set()
    out: dict[str, TokenUsage] = {}
    for i, request in enumerate(seen):
        new = carried = 0
        trims = request.trims or {}
        for block in request.blocks:
            ident = request.results.get(block.key)
            if ident is not None and i > last.get((request.thread, ident), i):
                continue  # past its last use: dropped
            tokens = max(0, block.tokens - trims.get(block.key, 0))
            if block.key in sent:
                carried += tokens
            else:
                sent.add(block.key)
                new += tokens
        usage = TokenUsage(input=new, cache_read=carried, output=request.output)
        out[request.model] = out[request.model] + usage if request.model in out else usage
    return out


def floor_dollars(seen: Sequence[Seen]) -> float:
    """The bound in dollars (`floor_usage` at each model's prices)."""
    return round(sum(price([u], model=m).total for m, u in floor_usage(seen).items()), 4)


def narration(text: str) -> int:
    """Tokens of the realistic worker's narration in a report (0 when it has none)."""
    found = NARRATION.search(text)
    return 0 if found is None else tokens_of(len(text) - found.start())


def noted(answer: str) -> set[str]:
    """The facts (`K=v`) a reply notes."""
    return set(NOTED.findall(answer))


__all__ = ["NARRATION", "Seen", "floor_dollars", "floor_usage", "last_uses", "narration", "noted"]
