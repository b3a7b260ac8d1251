"""The delegated way to play a workload: a coordinator that looks and decides, workers that do.

The coordinator does itself what a flower coordinator may do (read-only looks, Reads, probes, pauses)
and hands every other run of actions to a worker (a subtask is one chunk; with `parallel`, consecutive
subtasks go out in one message). flower's coordinator follows flower's rules: one mandate per move (every
run up to its next own step: `MOVE`), and a look that only checks the work just done (`Run.check`) goes
in that worker's mandate; a move of one small hands-on step it takes itself (`own_steps`: never two in
a row, as flower's wall allows); its ablations chunk by the workload's size, keep every look or delegate
every step. A worker plays
its chunk like any agent, then reports in the shape flower's worker rules ask for: the conclusion, the
facts it was asked for, one line per output it saw a pointer for (`label -> path`), denials, scripts
written, and, for some subtasks, a pasted log; the realistic player's worker then writes on to a size
drawn from real subagent reports (`Behaviour.report_chars`), which flower's report cap cuts to its head. The
same coordinator and workers play the CLI-with-subagents baseline, so reports are identical there. A
coordinator may Read the saved whole of a cut report before its next move (`Behaviour.reads_cut`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import cast

from flower._hooks import OWN_STEP_MAX_INPUT
from flower.testing import RecordedRequest, Reply, ToolUse, agent, bash, read

from .actions import Action, Denied, Fact, Probe, ReadFile, Reuse, Run, Subtask, WriteFile
from .gen import body
from .player import Actor, Stage
from .probes import CLI_POINTER, SPILL_POINTER, View, denial_visible, prints
from .realistic import filler

TASK_ID = re.compile(r"\[task ([cr]\d+)\]")
CUT_NOTE = re.compile(r"\[flower: report cut at [\d,]+ of [\d,]+ chars; the whole report: ([^\]\n]+)\]")
SENT_BACK = re.compile(r"flower: your report is [\d,]+ chars; .*? saved whole to (\S+?\.txt)")


@dataclass
class Chunk:
    """Actions delegated as one Agent call."""

    cid: str
    actions: list[Action]
    subtask: Subtask | None = None
    batched: tuple[Subtask, ...] = ()
    """More subtasks handed out in the same mandate, after `subtask` (`partition(batch=...)`)."""

    @property
    def subtasks(self) -> tuple[Subtask, ...]:
        """Every subtask of the mandate, in order."""
        return (self.subtask, *self.batched) if self.subtask is not None else ()


def _self_action(action: Action, glances: bool = True) -> bool:
    """What a flower coordinator does itself: glances (unless `glances` is False), Reads, probes and the
    flow (idle, pause, checks)."""
    if isinstance(action, Run):
        return action.glance and glances
    return not isinstance(action, WriteFile | Denied | Reuse | Subtask)


def _joins(action: Action, fold: bool) -> bool:
    """A verdict probe joins the chunk that ran the test; with `fold`, a look that checks the work too."""
    if isinstance(action, Probe):
        return action.verdict
    return fold and isinstance(action, Run) and action.check


def _own_step(action: Action) -> bool:
    """A hands-on step flower's wall lets a coordinator take itself: a command that is not a glance, or a
    write of at most `OWN_STEP_MAX_INPUT` chars (never a denial, a script's reuse or a subtask)."""
    if isinstance(action, Run):
        return not action.glance
    return isinstance(action, WriteFile) and action.chars <= OWN_STEP_MAX_INPUT


def _take_own_steps(items: list[Action | Chunk], own_steps: int) -> list[Action | Chunk]:
    """Each chunk of one own step (no probe joined) done by the coordinator itself, at most `own_steps`
    in a row, as the wall counts them: a delegation, a glance or a Read ends a row."""
    taken: list[Action | Chunk] = []
    row = 0
    for item in items:
        single = isinstance(item, Chunk) and item.subtask is None and len(item.actions) == 1
        if single and row < own_steps and _own_step(item.actions[0]):  # type: ignore[union-attr]
            taken.append(item.actions[0])  # type: ignore[union-attr]
            row += 1
            continue
        if isinstance(item, Chunk | ReadFile) or (isinstance(item, Run) and item.glance):
            row = 0
        taken.append(item)
    return taken


def partition(
    actions: tuple[Action, ...],
    size: int,
    first: int = 0,
    *,
    glances: bool = True,
    fold: bool = False,
    own_steps: int = 0,
    batch: int = 1,
) -> list[Action | Chunk]:
    """Coordinator-level items: self actions as they are, delegatable runs grouped into chunks of at most
    `size` runs (`MOVE`: one chunk per move).

    A verdict probe right after a delegated run stays in that run's chunk: the worker that ran the test
    reads its verdict. With `fold`, a look that checks the work (`Run.check`) joins the chunk it follows.
    With `own_steps`, a chunk of one small hands-on step is the coordinator's own (`_take_own_steps`).
    With `batch`, up to that many subtasks handed out at once (nothing of the coordinator's between them)
    go to one worker as one mandate, as flower's rules ask of small items.
    """
    items: list[Action | Chunk] = []
    current: list[Action] = []
    count = first

    def close() -> None:
        """End the chunk being built."""
        nonlocal current, count
        if current:
            items.append(Chunk(f"c{count}", current))
            count += 1
            current = []

    for action in actions:
        if isinstance(action, Subtask):
            close()
            last = items[-1] if items else None
            if isinstance(last, Chunk) and last.subtask is not None and len(last.subtasks) < batch:
                last.actions.extend(action.actions)
                last.batched = (*last.batched, action)
                continue
            items.append(Chunk(f"c{count}", list(action.actions), action))
            count += 1
        elif current and _joins(action, fold):
            current.append(action)
        elif _self_action(action, glances):
            close()
            items.append(action)
        else:
            if sum(not isinstance(a, Probe) for a in current) >= size:
                close()
            current.append(action)
    close()
    return _take_own_steps(items, own_steps) if own_steps else items


class Coordinator(Actor):
    """The main thread in delegated mode."""

    def __init__(self, play: Stage, actions: tuple[Action, ...] | None = None) -> None:
        """The coordinator of `actions` (the workload's when None; the rest of an inline main thread's,
        `inline.take_over`), partitioned by the play's knobs."""
        items = partition(
            play.workload.actions if actions is None else actions,
            play.chunk,
            glances=play.self_glance,
            fold=play.fold,
            own_steps=play.own_steps,
            batch=play.batch,
        )
        super().__init__(items, play, "main")  # type: ignore[arg-type]
        self.chunks = sum(isinstance(i, Chunk) for i in self.actions)
        self.cuts_drawn: set[str] = set()

    def step(self, request: RecordedRequest) -> Reply:
        """Read a cut report's saved whole when the player does; launch parallel subtasks together when
        allowed; otherwise play like any agent."""
        view = View(request.body)
        self.about = ""
        saved = self._cut_to_read(view)
        if saved is not None:
            self.keep_place()  # nothing of the actions was done: an interrupted Read rewinds nothing
            self.play.ledger.cut_reads += 1
            self.about = self.play.mark(f"read cut {saved.rsplit('/', 1)[-1]}")
            return self.answer(request, read(saved))
        group = self._parallel_group(view, request)
        if group:
            return self.answer(request, *group)
        return super().step(request)

    def _cut_to_read(self, view: View) -> str | None:
        """The saved path of a cut report not yet drawn for that the player Reads now (one draw a report,
        `Behaviour.reads_cut_report`), else None."""
        for pair in view.pairs:
            note = CUT_NOTE.search(pair.result) if pair.name in ("Agent", "Task") else None
            if note is None:
                continue
            task = TASK_ID.search(pair.result)
            key = task.group(1) if task else pair.id
            if key in self.cuts_drawn:
                continue
            self.cuts_drawn.add(key)
            if self.play.behaviour.reads_cut_report(key):
                return note.group(1)
        return None

    def _parallel_group(self, view: View, request: RecordedRequest) -> list[ToolUse]:
        """Up to `parallel` consecutive subtask chunks launched in one message (W3's parallel variant)."""
        if self.play.parallel <= 1 or self.queue or self.pending is not None:
            return []
        calls: list[ToolUse] = []
        while self.pos < len(self.actions) and len(calls) < self.play.parallel:
            item = self.actions[self.pos]
            if not (isinstance(item, Chunk) and item.subtask is not None):
                break
            self.pos += 1
            call = self._delegate(item, view)
            if call is not None:
                calls.append(call)
        return calls

    def perform(
        self, action: object, view: View, request: RecordedRequest, notes: list[str]
    ) -> ToolUse | str | None:
        """A chunk becomes an Agent call; anything else is done here, like any agent."""
        if isinstance(action, Chunk):
            return self._delegate(action, view)
        return super().perform(cast(Action, action), view, request, notes)

    def _delegate(self, chunk: Chunk, view: View) -> ToolUse | None:
        kept: list[Action] = []
        for action in chunk.actions:
            if isinstance(action, Denied) and denial_visible(view, action.command):
                self.play.ledger.skipped += 1
                continue
            kept.append(action)
        if not any(not isinstance(a, Probe) for a in kept):
            return None
        self.about = self.about or self.play.mark(f"delegate {chunk.cid}")  # a parallel group: its first
        self.play.workers[chunk.cid] = Worker(Chunk(chunk.cid, kept, chunk.subtask, chunk.batched), self.play)
        return agent(
            self.play.agent_type,
            mandate(Chunk(chunk.cid, kept, chunk.subtask, chunk.batched), view, self.play),
            description=chunk.cid,
        )

    def redo(self, fact: Fact) -> ToolUse:
        """A Read or a glance the coordinator does again itself; anything else goes back to a worker."""
        for action in self.play.flat:
            if isinstance(action, ReadFile) and action.path == fact.label:
                self.about = self.play.mark(f"read {action.path}")
                return read(str(self.play.root / action.path))
            if isinstance(action, Run) and action.label == fact.label:
                if action.glance:
                    self.about = self.play.mark(f"run {action.label}")
                    return bash(action.command)
                self.about = self.play.mark(f"delegate rerun {fact.key}")
                cid = f"r{len(self.play.workers)}"
                chunk = Chunk(cid, [action, Probe(fact, counted=False)])
                self.play.workers[cid] = Worker(chunk, self.play)
                return agent(
                    self.play.agent_type, mandate(chunk, View({}), self.play), description=f"rerun {fact.key}"
                )
        raise KeyError(f"no action prints {fact.label}")


def mandate(chunk: Chunk, view: View, play: Stage) -> str:
    """The Agent prompt: the task id, then one line per action (never a fact's value)."""
    title = ", ".join(t.name for t in chunk.subtasks) if chunk.subtask else "work"
    lines = [f"[task {chunk.cid}] {title}: do the following, then report briefly (paths, not contents)."]
    for action in chunk.actions:
        if isinstance(action, Run):
            lines.append(f"- run `{action.command}`")
        elif isinstance(action, WriteFile):
            lines.append(f"- write {action.path} ({action.chars:,} chars of generated data)")
        elif isinstance(action, Denied):
            lines.append(f"- run `{action.command}`")
        elif isinstance(action, Reuse):
            path = play.script_path(action.path)
            name = path.rsplit("/", 1)[-1]
            if view.has(name):
                lines.append(f"- run the analysis script {path}")
            else:
                lines.append("- write a reusable analysis script in the scripts directory and run it")
        elif isinstance(action, Probe):
            lines.append(f"- tell me {action.fact.key}")
    lines += [f"- report {t.finding.key}" for t in chunk.subtasks]
    return "\n".join(lines)


class Worker(Actor):
    """One worker playing one chunk; its final reply is the report."""

    def __init__(self, chunk: Chunk, play: Stage) -> None:
        super().__init__(list(chunk.actions), play, f"worker:{chunk.cid}")
        self.chunk = chunk
        self.denied: list[str] = []
        self.wrote: list[str] = []

    def perform(
        self, action: Action, view: View, request: RecordedRequest, notes: list[str]
    ) -> ToolUse | str | None:
        """As any agent; a script it has to write is remembered for the report."""
        if isinstance(action, Reuse) and not view.has(self.play.script_path(action.path).rsplit("/", 1)[-1]):
            self.wrote.append(self.play.script_path(action.path))
        return super().perform(action, view, request, notes)

    def finish(self, view: View) -> str:
        """The report: conclusion, facts asked for, `label -> path` pointers, denials, scripts, pasted log.

        Sent back by flower's report cap (a background worker), it answers without the log and with the
        saved report's path; a foreground worker's report is cut by the cap, not sent back.
        """
        chunk = self.chunk
        self.about = self.play.mark(f"report {chunk.cid}")
        lines = [f"[task {chunk.cid}] done."]
        for task in chunk.subtasks:
            found = task.finding.text in self.noted
            lines.append(f"Conclusion: {task.finding.text if found else 'finding not recovered'}.")
        lines += [f"- {fact}" for fact in self.noted]
        for action in chunk.actions:
            if isinstance(action, Run):
                path = _own_pointer(view, action.label)
                lines.append(f"- {action.label} -> {path}" if path else f"- {action.label}: ok")
            elif isinstance(action, Denied) and denial_visible(view, action.command):
                lines.append(f"- denied: `{action.command}`")
        lines += [f"- wrote {path}" for path in self.wrote]
        sent_back = next((m for s in view.strings if (m := SENT_BACK.search(s))), None)
        if sent_back is not None:  # flower's report cap: the long report is on disk, point to it
            return "\n".join([*lines, f"- full report: {sent_back.group(1)}"])
        for task in chunk.subtasks:
            if task.pasted:
                first = next(a for a in task.actions if isinstance(a, Run))
                spec = self.play.workload.outputs[first.label].spec()
                lines.append("Log excerpt:\n" + body(spec, task.pasted))
        report = "\n".join(lines)
        size = self.play.behaviour.report_chars(chunk.cid)
        if size > len(report) + 20:  # the realistic worker narrates on, as real subagents do
            rng = self.play.behaviour.rng("report text", chunk.cid)
            report += "\nWhat I did: " + filler(rng, size - len(report) - 13)
        return report


def _own_pointer(view: View, label: str) -> str | None:
    for pair in reversed(view.pairs):
        if prints(pair, label):
            for pattern in (SPILL_POINTER, CLI_POINTER):
                match = pattern.search(pair.result)
                if match:
                    return match.group(1)
    return None


def worker_for(play: Stage, request: RecordedRequest) -> Actor:
    """The worker a subagent request belongs to, by the task id its mandate carries."""
    for message in request.messages:
        if message.get("role") == "user":
            found = TASK_ID.search(str(message.get("content")))
            if found and found.group(1) in play.workers:
                return play.workers[found.group(1)]
    raise LookupError(f"no task id in subagent request #{request.seq}")
