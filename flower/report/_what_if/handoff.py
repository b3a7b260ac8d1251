"""Handoff and glance replayed: what each compaction cost against a handoff in its place, and how many
main-thread commands glance would have let the coordinator run itself.

A compaction costs its own request (the CLI's compaction worker reads the whole context and writes a
summary: `subagents/agent-acompact-*`, or, where the CLI kept no transcript of it, a request estimated from
the context before the boundary and the summary after it) and the restart (the first request after the
boundary writes the cache again). A handoff in its place costs a request asking for the document (the same
context read from the cache, `HANDOFF_PROMPT` written, the document as output) and the successor's start
(the restart, with `TAKEOVER_PROMPT` around the document). Both are priced at the main thread's model; the
document is taken as long as the summary the CLI wrote (an assumption, printed).

The successor is a new session: it starts from the session's fixed start (the system prompt, the tools,
the first prompt: its first request's context), the takeover prompt and the document, and nothing else.
After a compaction the CLI sends more than its summary (the files it had read, sent again, the last
messages it kept, listings), so the restart is priced at the successor's context. This line weighs each
compaction where it happened; the replays of flower (spill + layer 4, delegation) hand off where flower's
own policy fires instead (`threshold`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ..._cost import price
from ..._glance import is_ephemeral
from ..._handoff.document import HANDOFF_PROMPT, TAKEOVER_PROMPT
from ..._usage import TokenUsage
from ..._util.content import text_of
from .replay import Thread
from .spill import boundaries

__all__ = [
    "GlanceLine",
    "HandoffLine",
    "glance_line",
    "handoff_line",
    "handoff_requests",
    "main_model",
    "summary_chars",
    "unkept_compactions",
]


@dataclass(frozen=True, kw_only=True)
class HandoffLine:
    """Each compaction of the main thread against a handoff in its place, in dollars."""

    _derived: ClassVar[tuple[str, ...]] = ("saved_usd",)

    compactions: int = 0
    """Compaction boundaries of the main thread."""
    estimated: int = 0
    """Of those, compactions whose own request the CLI kept no transcript of (estimated)."""
    compaction_usd: float = 0.0
    """The compactions' requests and the restarts after them."""
    handoff_usd: float = 0.0
    """The handoff requests and the successors' starts that would have replaced them."""

    @property
    def saved_usd(self) -> float:
        """What the handoffs would have saved (negative: they cost more)."""
        return self.compaction_usd - self.handoff_usd


@dataclass(frozen=True, kw_only=True)
class GlanceLine:
    """The main thread's Bash calls, and those glance accepts (`flower.is_ephemeral`)."""

    _derived: ClassVar[tuple[str, ...]] = ("share",)

    bash_calls: int = 0
    accepted: int = 0

    @property
    def share(self) -> float | None:
        """The accepted part of the main thread's Bash calls (None without any)."""
        return self.accepted / self.bash_calls if self.bash_calls else None


def summary_chars(entries: Sequence[Mapping[str, Any]], boundary: int) -> int:
    """The length of the summary the CLI wrote at the boundary at entry `boundary` (0 without one)."""
    for entry in entries[boundary + 1 : boundary + 8]:
        if entry.get("isCompactSummary") is True:
            message = entry.get("message")
            return len(text_of(message.get("content") if isinstance(message, Mapping) else ""))
    return 0


def main_model(thread: Thread) -> str:
    """The model of most of a thread's requests ('' without any)."""
    models = [r.model for r in thread.requests]
    return max(set(models), key=models.count) if models else ""


def _kept(compactions: Sequence[Thread]) -> list[Thread]:
    return sorted(compactions, key=lambda t: str(t.entries[0].get("timestamp", "")) if t.entries else "")


def unkept_compactions(main: Thread, compactions: Sequence[Thread], rate: float) -> list[TokenUsage]:
    """The compaction requests the CLI kept no transcript of (one per boundary past the transcripts of its
    compaction worker), estimated: the context before the boundary read from the cache, the summary after
    it as output."""
    cuts = boundaries(main.entries)
    kept = [t for t in _kept(compactions) if t.requests]
    return [
        TokenUsage(
            cache_read=main.end_of(main.first_after(cut) - 1),
            output=round(summary_chars(main.entries, cut) * rate),
        )
        for cut in cuts[len(kept) :]
    ]


def _successor(main: Thread, cut: int, rate: float) -> int:
    """The context (tokens) a handoff's successor starts with in place of the compaction at entry `cut`:
    the session's fixed start, the takeover prompt, the document (as long as the summary), never more than
    the CLI's restart carried. The fixed start is the first request's context (the system prompt, the
    tools, what a session starts with); a session that began with a history (its first request larger
    than the restart) takes the restart's cached prefix instead."""
    restart = main.requests[main.first_after(cut)].usage
    first = main.requests[0].usage.context
    fixed = first if first <= restart.context or not restart.cache_read else restart.cache_read
    framed = round(len(TAKEOVER_PROMPT) * rate)
    return min(restart.context, fixed + framed + round(summary_chars(main.entries, cut) * rate))


def handoff_requests(main: Thread, used: Sequence[TokenUsage], rate: float) -> list[TokenUsage]:
    """The requests asking for a handoff document in place of `main`'s compactions: the context before
    each boundary (as `used`, the main thread's replayed usage, has it) read from the cache,
    `HANDOFF_PROMPT` written, the document (as long as the summary) as output."""
    asked = round(len(HANDOFF_PROMPT) * rate)
    out = []
    for cut in boundaries(main.entries):
        last = min(main.first_after(cut), len(used)) - 1
        before = used[last].context + used[last].output if last >= 0 else 0
        document = round(summary_chars(main.entries, cut) * rate)
        out.append(TokenUsage(cache_read=before, cache_creation=asked, output=document))
    return out


def handoff_line(main: Thread, compactions: Sequence[Thread], rate: float) -> HandoffLine:
    """The handoff line of a session: its main thread and its compaction workers' threads (by time)."""
    cuts = boundaries(main.entries)
    if not cuts or not main.requests:
        return HandoffLine(compactions=len(cuts))
    model = main_model(main)
    kept = [t for t in _kept(compactions) if t.requests]
    unkept = unkept_compactions(main, compactions, rate)
    asks = handoff_requests(main, [r.usage for r in main.requests], rate)
    compaction = handoff = 0.0
    for number, cut in enumerate(cuts):
        restart = main.first_after(cut)
        if number < len(kept):
            own = sum(price([r.usage], model=r.model).total for r in kept[number].requests)
        else:
            own = price([unkept[number - len(kept)]], model=model).total
        again = main.requests[restart].usage if restart < len(main.requests) else TokenUsage()
        compaction += own + price([again], model=model).total
        successor = _successor(main, cut, rate) if restart < len(main.requests) else 0
        start = TokenUsage(  # the restart's cached prefix read, the rest of the successor's start written
            input=again.input,
            cache_read=min(again.cache_read, successor),
            cache_creation=max(0, successor - again.cache_read - again.input),
            output=again.output,
        )
        handoff += price([asks[number], start], model=model).total
    return HandoffLine(
        compactions=len(cuts), estimated=len(unkept), compaction_usd=compaction, handoff_usd=handoff
    )


def glance_line(main: Thread) -> GlanceLine:
    """How many of the main thread's Bash calls glance accepts."""
    commands = [
        str(block.get("input", {}).get("command", ""))
        for request in main.requests
        for block in request.blocks
        if block.get("type") == "tool_use"
        and block.get("name") == "Bash"
        and isinstance(block.get("input"), Mapping)
    ]
    return GlanceLine(bash_calls=len(commands), accepted=sum(1 for c in commands if is_ephemeral(c)))
