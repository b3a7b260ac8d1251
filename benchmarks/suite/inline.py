"""The main thread of `coordinator(inline_until=T)`: hands-on itself while its context is small, then the
coordinator for the rest of the run.

`Inline` plays the workload's actions itself, as `flower -delegation`'s main thread does. Under a
`Runtime`, its session has no Agent tool and hands off once a reply that calls a tool reports a context
(`usage_for`: what the CLI writes to the transcript, what the runtime and the wall read) at or over T: the
call is stopped (interrupted, or refused by the wall), the session writes its handoff document, and at the
new session's first request `Play` hands the rest to a `Coordinator` (`take_over`), which partitions it as
it partitions a whole workload and delegates from then on, in every later session too. In a session that
offers the Agent tool (a resumed one), the switch is the wall's latch instead: the first request at or
over T is the coordinator's. When a coordinator's own session hands off, its successor is such a session
of the coordinator, small again: at its first request, if that request is under T, `Play` turns the
coordinator back into an inline actor of the rest of its items (`turn_back`: a delegated move becomes its
actions again, a subtask its subtask), which the wall's latch switches back at T.

The switch falls between two replies. Work left half-done there goes to the coordinator: a probe under
way and a look at a saved output carry over (a coordinator does those itself; a rerun it delegates); the
run of a script just written goes back as its `Reuse`, delegated; the rest of an open subtask is a subtask
again, delegated whole with its finding.
"""

from __future__ import annotations

from dataclasses import replace

from flower.testing import RecordedRequest, ToolUse, Usage

from .actions import Action, Reuse, Run, Subtask
from .delegate import Chunk, Coordinator
from .player import Actor, Stage, usage_for
from .probes import View


def context(usage: Usage) -> int:
    """The context a reply's usage reports: what the wall reads (input + cache read + cache written)."""
    return (usage.input_tokens or 0) + usage.cache_read_input_tokens + usage.cache_creation_input_tokens


class Inline(Actor):
    """The main thread doing every action itself until its context reaches `until` tokens."""

    def __init__(self, play: Stage, until: int, actions: tuple[Action, ...] | None = None) -> None:
        """The main thread of `actions` (the workload's when None), hands-on until its context reaches
        `until`."""
        if until <= 0:
            raise ValueError(f"Inline: until must be a positive number of tokens, got {until}")
        super().__init__(list(play.workload.actions if actions is None else actions), play, "main")
        self.until = until
        self.open: list[tuple[Subtask, int]] = []
        """The subtasks it took up, outermost first, each with the index in `actions` where it ends."""
        self.last: Action | None = None
        """The action it performed last (a `Reuse` whose queued run is still to come goes back whole)."""

    def due(self, request: RecordedRequest) -> bool:
        """This main-thread request is the first at or over the threshold: the coordinator answers it."""
        return context(usage_for(request, self.play.workload.pad)) >= self.until

    def perform(
        self, action: Action, view: View, request: RecordedRequest, notes: list[str]
    ) -> ToolUse | str | None:
        """As any agent; a subtask taken up is remembered with where its actions end."""
        self.last = action
        if isinstance(action, Subtask):
            width = len(action.actions)
            self.open = [(s, end + width if end >= self.pos else end) for s, end in self.open]
            self.open.append((action, self.pos + width))
        return super().perform(action, view, request, notes)

    def rest(self) -> list[Action]:
        """The actions not yet begun, an open subtask's rest again a subtask (its finding kept), and the
        `Reuse` whose script was written but not yet run first (its run is counted once)."""
        start = self.pos
        if self.queue and isinstance(self.last, Reuse):
            start -= 1
            self.play.ledger.runs -= 1  # the worker that runs it counts it again
        items = list(self.actions[start:])
        shift = 0
        for subtask, end in reversed([(s, e) for s, e in self.open if e > start]):  # innermost first
            cut = end - start - shift
            inner = tuple(items[:cut])
            pasted = subtask.pasted if any(isinstance(a, Run) for a in inner) else 0
            items[:cut] = [replace(subtask, actions=inner, pasted=pasted)]
            shift += cut - 1
        return items


def take_over(actor: Inline, play: Stage) -> Coordinator:
    """The coordinator that plays the rest of `actor`'s actions from where it stands (`Inline.rest`),
    partitioned as `Coordinator` partitions a workload; what it looked into and noted carries over."""
    lead = Coordinator(play, tuple(actor.rest()))
    lead.pending, lead.windows, lead.ran, lead.noted = actor.pending, actor.windows, actor.ran, actor.noted
    return lead


def turn_back(lead: Coordinator, play: Stage, until: int) -> Inline | None:
    """After a handoff: an inline actor of the rest of `lead`'s items (each delegated move its actions
    again, a move of subtasks its subtasks), what it looked into and noted carried over; None while `lead`
    still has calls of its own queued (a look at a saved output under way), which it finishes first."""
    if lead.queue or lead.windows:
        return None
    rest: list[Action] = []
    for item in lead.actions[lead.pos :]:
        if isinstance(item, Chunk):
            rest.extend(item.subtasks or item.actions)
        else:
            rest.append(item)
    actor = Inline(play, until, tuple(rest))
    actor.pending, actor.ran, actor.noted = lead.pending, lead.ran, lead.noted
    return actor
