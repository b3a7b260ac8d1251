"""What delegating cost a run, as its own line of the economy report: worker starts, mandates, frames.

A worker's first reply pays for its start (its tools, its system prompt and its mandate, written to the
prompt cache or read from it); every mandate stays in the main thread for good; every Agent result comes
back inside the CLI's "[Subagent hand-back]" frame, which stays there too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from . import _metrics as m

__all__ = ["Delegation", "delegation", "frame_chars"]

_FRAME = "[Subagent hand-back]"
_REPORT_FOLLOWS = re.compile(r"The report follows:\n")


@dataclass(frozen=True, kw_only=True)
class Delegation:
    """The cost of delegating: every worker's replies, their starts, mandates and hand-back frames."""

    _derived: ClassVar[tuple[str, ...]] = ("share",)

    workers: int = 0
    """Worker runs (subagent transcripts)."""
    usd: float = 0.0
    """Every worker reply, estimated in dollars."""
    start_usd: float = 0.0
    """The workers' first replies: what starting them cost (tools, system prompt, mandate)."""
    start_tokens: int = 0
    """Input tokens of those first replies (cache reads included)."""
    start_cache_read: int = 0
    """Of those, tokens read from the cache (a start after the first reads the shared prefix)."""
    mandate_chars: int = 0
    """Characters of the mandates (the Agent prompts), which stay in the main thread."""
    frame_chars: int = 0
    """Characters of the CLI's hand-back frames around the reports, which stay in the main thread."""
    total_usd: float = 0.0
    """The run's whole estimate, for the share."""

    @property
    def share(self) -> float | None:
        """The workers' part of the run's cost (None when the run cost nothing)."""
        return self.usd / self.total_usd if self.total_usd else None


def frame_chars(text: str) -> int:
    """Characters of an Agent result that are the CLI's frame, not the worker's (indented) report."""
    if _FRAME not in text:
        return 0
    found = _REPORT_FOLLOWS.search(text)
    if found is None:
        return len(text)
    report = 0
    for line in text[found.end() :].split("\n"):
        if not line.startswith("  "):
            break
        report += len(line) + 1
    return len(text) - report


def delegation(
    main_entries: Sequence[Mapping[str, Any]],
    subagents: Iterable[Sequence[Mapping[str, Any]]],
    *,
    priced: Callable[[Sequence[m.Message]], float],
    total_usd: float,
) -> Delegation:
    """The delegation line of a run: `subagents` are the workers' transcripts, `priced` dollars replies."""
    runs = [m.turns(entries) for entries in subagents]
    firsts = [turns[0] for turns in runs if turns]
    agent_ids = {
        str(block.get("id")) for block in m.tool_uses(main_entries) if block.get("name") in ("Agent", "Task")
    }
    results = m.result_texts(main_entries)
    return Delegation(
        workers=len(runs),
        usd=priced([t for turns in runs for t in turns]),
        start_usd=priced(firsts),
        start_tokens=sum(t.usage.context for t in firsts),
        start_cache_read=sum(t.usage.cache_read for t in firsts),
        mandate_chars=sum(len(text) for text in m.mandates(main_entries)),
        frame_chars=sum(frame_chars(text) for tid, text in results.items() if tid in agent_ids),
        total_usd=total_usd,
    )
