"""The scripted model for one run: `Play` holds the workload's actors and answers every caller's requests.

The main thread is one `Actor` doing everything itself, or a `Coordinator` delegating chunks to workers
(`delegate`), or, with `inline_until`, an `Inline` actor whose session hands off to a coordinator once
its context reaches that many tokens (`inline`); handoff documents and compaction summaries come from one
summariser (`summary`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flower.testing import RecordedRequest, reply

from .actions import Action, Pause, Subtask, Workload
from .delegate import Coordinator, worker_for
from .inline import Inline, take_over, turn_back
from .player import Actor, Ledger, usage_for
from .probes import View
from .realistic import Behaviour
from .summary import compaction_summary, handoff_document

HANDOFF_ASK = "Write the handoff document now"
LATCH = "While your context is under"
"""In the rules of a coordinator whose wall lets it work hands-on while small
(`coordinator_rules(inline_until=...)`)."""


MOVE = 1_000_000
"""A chunk size no move reaches: one mandate covers every run up to the coordinator's next own step."""


class Play:
    """The scripted model for one run of one workload under one strategy: scripts for every caller."""

    def __init__(
        self,
        workload: Workload,
        root: Path,
        *,
        delegated: bool,
        pointers_in_handoff: bool,
        scripts: str,
        parallel: int = 1,
        behaviour: Behaviour | None = None,
        agent_type: str = "worker",
        chunk: int | None = None,
        self_glance: bool = True,
        fold: bool = False,
        own_steps: int = 0,
        batch: int = 1,
        inline_until: int | None = None,
    ) -> None:
        self.behaviour = behaviour or Behaviour()
        self.agent_type = agent_type
        """The subagent type the coordinator delegates to (`worker`, or the CLI's `general-purpose`)."""
        self.workload = workload
        self.root = root
        self.scripts = scripts
        self.parallel = parallel
        self.chunk = chunk or workload.chunk
        """At most this many runs in one mandate (`MOVE`: every run up to the next look or decision)."""
        self.self_glance = self_glance
        """A delegated coordinator runs its read-only looks itself (False: it delegates them too)."""
        self.fold = fold
        """A look that checks a worker's work goes in that worker's mandate (flower's rules)."""
        self.own_steps = own_steps
        """A move of one small hands-on step the coordinator takes itself, at most this many in a row."""
        self.batch = batch
        """Subtasks handed out at once that go to one worker as one mandate, at most (1: one each)."""
        self.ledger = Ledger()
        self.marks: dict[str, int] = {}
        self.flat = [a for a in _walk(workload.actions)]
        self.pause_requested: Pause | None = None
        self.pointers_in_handoff = pointers_in_handoff
        self.workers: dict[str, Actor] = {}
        self.inline_until = inline_until
        """A delegated main thread works hands-on itself until its context reaches this many tokens
        (`coordinator(inline_until=...)`), then turns coordinator (`inline.Inline`); None: from the start."""
        self.handed_off = False
        """A handoff document was just written: the next main-thread request is a new session's first."""
        self.main: Actor = (
            Actor(list(workload.actions), self, "main")
            if not delegated
            else Inline(self, inline_until)
            if inline_until is not None
            else Coordinator(self)
        )

    def script_path(self, path: str) -> str:
        """A workload path with `{scripts}` resolved for this strategy."""
        return path.replace("{scripts}", self.scripts)

    def current_state(self) -> int:
        """The true state version now (read from the workspace)."""
        status = self.root / "state" / "status.txt"
        return int(status.read_text().split()[2]) if status.exists() else 0

    def mark(self, key: str) -> str:
        """`key#n`: what a reply does, counted over the whole run (the n-th time any agent does it), so a
        worker's run of `out-007` and a main thread's are the same draw (`Behaviour.prose`)."""
        n = self.marks.get(key, 0)
        self.marks[key] = n + 1
        return f"{key}#{n}"

    def frontier(self) -> str:
        """Where the work stands, in one line (kept by every summary)."""
        return f"continue with action {self.main.pos + 1} of {len(self.main.actions)}"

    # -- the callers' scripts ------------------------------------------------------------------------------

    def on_main(self, request: RecordedRequest) -> Any:
        """The main thread's script: handoff documents when asked, else the main actor's next step."""
        if HANDOFF_ASK in request.last_user_text:
            view = View(request.body)
            self.main.rewind_if_interrupted(view)
            self.ledger.events.append(("handoff", request.seq))
            self.handed_off = True
            text = handoff_document(view, self.workload, len(self.ledger.events), self.frontier())
            return reply(text, usage=usage_for(request, self.workload.pad))
        handed_off, self.handed_off = self.handed_off, False
        inline_handed_off = handed_off and isinstance(self.main, Inline)  # the inline session's handoff
        if handed_off and self.inline_until is not None and isinstance(self.main, Coordinator):
            # a coordinator's successor: its wall lets it work hands-on while it is under T (the strict
            # coordinator an inline session hands off to says so in its rules, and stays a coordinator)
            back = turn_back(self.main, self, self.inline_until)
            if back is not None and LATCH in request.system_text and not back.due(request):
                self.main = back
                self.ledger.turned_back.append(request.seq)
        if isinstance(self.main, Inline) and (
            inline_handed_off  # the coordinator's session starts here
            or ("Agent" in request.tool_names and self.main.due(request))  # one session, the wall's latch
        ):
            self.main = take_over(self.main, self)
            self.ledger.took_over = request.seq
        return self.main.step(request)

    def on_compact(self, request: RecordedRequest) -> Any:
        """The script of the CLI's compaction requests: the shared summariser."""
        self.ledger.events.append(("compact", request.seq))
        return compaction_summary(View(request.body), self.workload, len(self.ledger.events), self.frontier())

    def on_worker(self, request: RecordedRequest) -> Any:
        """The script of every worker request: the actor of the chunk its mandate names."""
        return worker_for(self, request).step(request)


def _walk(actions: tuple[Action, ...]) -> list[Action]:
    out: list[Action] = []
    for action in actions:
        out.extend(_walk(action.actions) if isinstance(action, Subtask) else [action])
    return out
