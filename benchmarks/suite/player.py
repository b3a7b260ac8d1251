"""The scripted model's side of a workload: an agent that performs actions and decides from its request.

An `Actor` plays a list of actions for one agent (the main thread doing everything itself, or one
worker's delegated chunk): one reply per request, each reply decided from that request alone. Probes
follow one probe policy (`probes.decide`); denied commands are skipped only when a denial naming them is
visible; a recurring script is re-run only when the agent can see it exists. Everything it did and
decided goes to a `Ledger`, from which the metrics are computed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from flower.testing import RecordedRequest, Reply, ToolUse, Usage, bash, read, reply, tool_use

from .actions import (
    Action,
    Denied,
    Fact,
    Idle,
    Pause,
    Probe,
    ReadFile,
    Reuse,
    Run,
    StateCheck,
    Subtask,
    Workload,
    WriteFile,
)
from .probes import CLI_POINTER, SPILL_POINTER, View, decide, denial_visible, grep_command, latest_state
from .realistic import LOOK_WINDOW_LINES, READ_CAP_CHARS, Behaviour, piped

INTERRUPTED = ("doesn't want to proceed", "was stopped while running", "interrupted")
STOPPED = (*INTERRUPTED, "flower: this session does not")
"""A call the handoff stopped: interrupted by the CLI, or refused by the wall of an inline session past its
size (`INLINE_SESSION_REASON`), whichever came first."""


@dataclass
class ProbeRecord:
    """One probe: where it was first asked (caller, index among that caller's requests) and how it ended."""

    fact: Fact
    verdict: bool
    caller: str
    index: int
    answered: bool = False
    extra: int = 0


@dataclass
class Ledger:
    """What the scripted agents did during one run (the part of the metrics the requests cannot show)."""

    probes: list[ProbeRecord] = field(default_factory=list)
    idle: dict[int, float] = field(default_factory=dict)
    """Seconds of idle time after the request with this seq (all callers)."""
    events: list[tuple[str, int]] = field(default_factory=list)
    """(compact | handoff, seq of the request that wrote the summary or document)."""
    attempts: dict[str, int] = field(default_factory=dict)
    denials: list[tuple[str, int, str]] = field(default_factory=list)
    """(caller, index, command) of every point where a denied command was due (issued or skipped)."""
    skipped: int = 0
    writes: int = 0
    runs: int = 0
    write_chars: int = 0
    state_checks: list[str] = field(default_factory=list)
    """`current`, `stale` (trusted an old snapshot) or `re-run` (looked again, +1 call)."""
    pauses: list[int] = field(default_factory=list)
    cut_reads: int = 0
    """Saved reports the coordinator Read after flower's report cap cut them (`Behaviour.reads_cut`)."""
    look_reads: int = 0
    """Saved outputs an agent Read back to look at them after a preview (`Behaviour.reads_to_look`)."""
    about: dict[int, str] = field(default_factory=dict)
    """What the reply to the request with this seq does (`run out-007#0`, `look W1-F03#1`...): the key
    its prose is drawn by, and the calibrated clock its duration, so strategies pair (`Behaviour.prose`)."""
    took_over: int | None = None
    """The seq of the main-thread request the coordinator answered first, after an inline start
    (`Play(inline_until=...)`): the first request of the session the inline session handed off to (or,
    in a session that offers the Agent tool, the first at the threshold); None when it never switched."""
    turned_back: list[int] = field(default_factory=list)
    """The seqs of the main-thread requests where the main thread went inline again, a new session's
    first after a coordinator's handoff (`Play(inline_until=...)`)."""
    done: bool = False

    @property
    def retries(self) -> int:
        """Denied commands issued again after a first denial."""
        return sum(max(0, n - 1) for n in self.attempts.values())


@dataclass
class Pending:
    """A probe under way: the pointers already looked into, whether the tool was re-run, and the calls
    left in the retrieval under way (`Behaviour.retrieval`) with the path it reads."""

    probe: ProbeRecord
    tried: tuple[str, ...] = ()
    reran: bool = False
    plan: tuple[str, ...] = ()
    path: str = ""


def _size(path: str) -> int:
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0


def usage_for(request: RecordedRequest, pad: int) -> Usage:
    """The context the CLI is told: the real request (chars / 4) plus the workload's residue per turn."""
    return Usage(input_tokens=10, cache_read_input_tokens=request.sizes.total // 4 + pad * request.turn)


def script_text(chars: int) -> str:
    """A runnable analysis script of about `chars` chars (the recurring analysis of W5)."""
    rng = random.Random(chars)
    doc = " ".join(
        rng.choice(("count", "group", "sum", "filter", "rows", "by", "key")) for _ in range(chars // 6)
    )
    body = doc[: max(0, chars - 120)]
    return f'# desc: recurring analysis of the records\n"""{body}"""\nprint("analysis: 42")\n'


class Stage(Protocol):
    """What an actor reads and writes of the run it plays in (`play.Play` is the one stage)."""

    workload: Workload
    root: Path
    behaviour: Behaviour
    ledger: Ledger
    agent_type: str
    """The subagent type the coordinator delegates to."""
    parallel: int
    chunk: int
    """At most this many runs in one mandate."""
    self_glance: bool
    """A delegated coordinator runs its read-only looks itself."""
    fold: bool
    """...except a look that checks a worker's work, which goes in that worker's mandate."""
    own_steps: int
    """A delegated coordinator takes a move of one small hands-on step itself, this many in a row."""
    batch: int
    """Subtasks handed out at once that go to one worker as one mandate, at most."""
    flat: list[Action]
    """The workload's actions, subtasks flattened."""
    pause_requested: Pause | None
    workers: dict[str, Actor]

    def script_path(self, path: str) -> str: ...
    def current_state(self) -> int: ...
    def mark(self, key: str) -> str: ...


class Actor:
    """Plays `actions` for one agent, one reply per request."""

    def __init__(self, actions: list[Action], play: Stage, caller: str) -> None:
        self.actions = actions
        self.play = play
        self.caller = caller
        self.pos = 0
        self.pending: Pending | None = None
        self.queue: list[tuple[ToolUse, str]] = []
        self.about = ""
        """What the reply being built does (`Stage.mark`); "" when it has no counterpart elsewhere."""
        self.noted: list[str] = []
        self.ran = ""
        """The mark of this agent's last call when it ran a command (`run out-007#0`), else ""."""
        self.windows: list[ToolUse] = []
        """The Reads left of a look at a saved output over the Read cap."""
        self.snapshot: tuple[int, Pending | None, int] = (0, None, 0)

    # -- one reply ---------------------------------------------------------------------------------------

    def step(self, request: RecordedRequest) -> Reply:
        """The reply to one request: notes on answered probes, then the next call or the final text."""
        view = View(request.body)
        notes: list[str] = []
        self.about = ""
        call = self._next_call(view, request, notes)
        if call is None:
            return self.answer(request, *notes, self.finish(view))
        return self.answer(request, *notes, call)

    def answer(self, request: RecordedRequest, *blocks: str | ToolUse) -> Reply:
        """A reply with these blocks, the player's prose before them (drawn by what the reply does,
        `about`, else by its own place in the run), and the usage the CLI is told."""
        about = self.about or f"{self.caller} request {request.index}"
        self.play.ledger.about[request.seq] = about
        thinking, text = self.play.behaviour.prose(about, worker=self.caller != "main")
        usage = usage_for(request, self.play.workload.pad if self.caller == "main" else 0)
        prose = [text] if text else []
        return reply(*prose, *blocks, thinking=thinking or None, usage=usage)

    def _next_call(self, view: View, request: RecordedRequest, notes: list[str]) -> ToolUse | str | None:
        self.keep_place()
        look = self._look_back(view)
        if look is not None:
            return look
        if self.queue:
            call, self.about = self.queue.pop(0)
            return call
        if self.pending is not None:
            follow = self._advance(view, self.pending, notes)
            if follow is not None:
                return follow
        while self.pos < len(self.actions):
            action = self.actions[self.pos]
            self.pos += 1
            call = self.perform(action, view, request, notes)
            if call is not None:
                return call
        return None

    def _look_back(self, view: View) -> ToolUse | None:
        """A Read of the saved whole of the output this agent's last command printed, when only a preview
        and a path came back and the player reads it to look at it (`Behaviour.reads_to_look`, drawn
        once per output, by the run that printed it): the whole file in one Read under the CLI's Read cap,
        else two windows of it."""
        if self.windows:
            self.about = self.play.mark("look window")
            return self.windows.pop(0)
        ran, self.ran = self.ran, ""
        last = view.pairs[-1] if view.pairs else None
        if not ran or last is None or not last.command:
            return None
        found = next((m for p in (SPILL_POINTER, CLI_POINTER) if (m := p.search(last.result))), None)
        if found is None or not self.play.behaviour.reads_to_look(ran):
            return None
        path = found.group(1)
        self.play.ledger.look_reads += 1
        self.about = self.play.mark(f"look at {ran}")
        if _size(path) <= READ_CAP_CHARS:
            return read(path)
        lines = LOOK_WINDOW_LINES
        self.windows = [tool_use("Read", file_path=path, offset=1 + lines, limit=lines)]
        return tool_use("Read", file_path=path, offset=1, limit=lines)

    def keep_place(self) -> None:
        """Remember where the actions stand: an interrupted call is issued again from here."""
        self.snapshot = (
            self.pos,
            replace(self.pending) if self.pending else None,
            len(self.play.ledger.probes),
        )

    def rewind_if_interrupted(self, view: View) -> None:
        """The CLI interrupted the last call (a handoff became due): it will be issued again."""
        last = view.pairs[-1] if view.pairs else None
        if last is not None and last.is_error and any(word in last.result for word in STOPPED):
            self.pos, self.pending, probes = self.snapshot
            del self.play.ledger.probes[probes:]

    # -- actions -----------------------------------------------------------------------------------------

    def perform(
        self, action: Action, view: View, request: RecordedRequest, notes: list[str]
    ) -> ToolUse | str | None:
        """The call for one action, or None when it needs no call (the loop goes on to the next one)."""
        play = self.play
        if isinstance(action, Run):
            pipe = None if action.glance else play.behaviour.pipe(action.label)
            self.about = self.ran = play.mark(f"run {action.label}")
            return bash(piped(action.command, pipe) if pipe else action.command)
        if isinstance(action, ReadFile):
            self.about = play.mark(f"read {action.path}")
            return read(str(play.root / action.path))
        if isinstance(action, WriteFile):
            self.about = play.mark(f"write {action.label}")
            return tool_use("Write", file_path=str(play.root / action.path), content="x" * action.chars)
        if isinstance(action, Probe):
            record = ProbeRecord(action.fact, action.verdict, request.caller, request.index)
            if action.counted:
                play.ledger.probes.append(record)
            return self._advance(view, Pending(record), notes)
        if isinstance(action, Denied):
            play.ledger.denials.append((request.caller, request.index, action.command))
            if denial_visible(view, action.command):
                play.ledger.skipped += 1
                return None
            play.ledger.attempts[action.command] = play.ledger.attempts.get(action.command, 0) + 1
            self.about = play.mark(f"denied {action.command}")
            return bash(action.command)
        if isinstance(action, Reuse):
            path = play.script_path(action.path)
            if view.has(Path(path).name):
                play.ledger.runs += 1
                self.about = play.mark("reuse run")
                return bash(f"python3 {path}")
            play.ledger.writes += 1
            play.ledger.runs += 1
            play.ledger.write_chars += action.chars
            self.about = play.mark("reuse write")
            self.queue.append((bash(f"python3 {path}"), play.mark("reuse run")))
            return tool_use("Write", file_path=str(play.root / path), content=script_text(action.chars))
        if isinstance(action, StateCheck):
            return self._state(view)
        if isinstance(action, Idle):
            play.ledger.idle[request.seq] = play.ledger.idle.get(request.seq, 0.0) + action.seconds
            return None
        if isinstance(action, Pause):
            play.ledger.pauses.append(request.seq)
            play.pause_requested = action
            self.about = play.mark("pause")
            return "Pausing here; the session will be resumed."
        if isinstance(action, Subtask):  # inline: do it all here
            self.actions[self.pos : self.pos] = list(action.actions)
            return None
        raise TypeError(f"unknown action {action!r}")

    def _state(self, view: View) -> ToolUse | None:
        seen = latest_state(view)
        if seen is None:
            self.play.ledger.state_checks.append("re-run")
            self.about = self.play.mark("state")
            return bash("cat state/status.txt")
        self.play.ledger.state_checks.append("current" if seen == self.play.current_state() else "stale")
        return None

    def _advance(self, view: View, pending: Pending, notes: list[str]) -> ToolUse | None:
        record = pending.probe
        fact = record.fact
        nxt = decide(
            view, fact.text, fact.label, idempotent=fact.idempotent, tried=pending.tried, reran=pending.reran
        )
        if nxt.decision == "answered" or (nxt.decision == "failed" and not pending.plan):
            record.answered = nxt.decision == "answered"
            notes.append(f"Noted {fact.text}." if record.answered else f"Could not recover {fact.key}.")
            if record.answered:
                self.noted.append(fact.text)
            self.pending = None
            return None
        record.extra += 1
        if pending.plan:  # a retrieval under way: its next call
            return self._retrieve(pending, pending.plan, pending.path)
        if nxt.decision == "grep":
            plan = tuple(self.play.behaviour.retrieval(fact.key, len(pending.tried)))
            return self._retrieve(Pending(record, (*pending.tried, nxt.path), pending.reran), plan, nxt.path)
        self.pending = Pending(record, pending.tried, True)
        return self.redo(fact)

    def _retrieve(self, pending: Pending, plan: tuple[str, ...], path: str) -> ToolUse:
        """The next call of a retrieval through `path` (see `Behaviour.retrieval`)."""
        key = pending.probe.fact.key
        self.about = self.play.mark(f"look {key}")
        step, rest = plan[0], plan[1:]
        if step == "read" and _size(path) > READ_CAP_CHARS:
            rest = ("grep", *rest)  # the CLI refuses the whole file: the agent greps after the error
        self.pending = Pending(pending.probe, pending.tried, pending.reran, rest, path)
        if step == "read":
            return read(path)
        if step == "miss-read":
            return tool_use("Read", file_path=path, offset=1, limit=100)
        if step == "miss-grep":
            return bash(f"grep -n -i -E 'error|fail' {path} | head -n 20")
        return bash(grep_command(key, path))

    def redo(self, fact: Fact) -> ToolUse:
        """Run again what printed `fact` (a Bash command, or a Read)."""
        for action in self.play.flat:
            if isinstance(action, Run) and action.label == fact.label:
                self.about = self.play.mark(f"run {action.label}")
                return bash(action.command)
            if isinstance(action, ReadFile) and action.path == fact.label:
                self.about = self.play.mark(f"read {action.path}")
                return read(str(self.play.root / action.path))
        raise KeyError(f"no action prints {fact.label}")

    def finish(self, view: View) -> str:
        """The final text of this agent (the main thread's last answer)."""
        self.about = self.play.mark("final")
        self.play.ledger.done = True
        return "DONE: all work finished."
