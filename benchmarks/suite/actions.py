"""What a workload is made of: outputs the fake tool can print, facts planted in them, and actions.

A workload is data: a list of actions an agent performs in order (run a command, read a file, need a
fact, pause and resume...). The player (`player.py`) turns it into scripted-model replies for one
strategy; the same list drives every strategy, so only the context management differs.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import TypeAlias


@dataclass(frozen=True)
class Fact:
    """A fact an agent will need later: `key=value`, planted in an output (or in the task)."""

    key: str
    value: str
    label: str = ""
    """The output that holds it ("" for a fact given in the task, like a user constraint)."""
    where: str = "middle"
    """head / middle / tail of the output, `verdict` (the last line of a test run) or `task`."""
    idempotent: bool = True
    """Whether re-running the tool that printed it gives it again."""

    @property
    def text(self) -> str:
        """The fact as it is planted and looked for: `key=value`."""
        return f"{self.key}={self.value}"


@dataclass(frozen=True)
class Output:
    """One output of the fake tool (`gen.py`), written to the workspace's `bench.json`."""

    label: str
    kind: str
    """log, test, fetch, edit or once (see gen.py)."""
    size: int
    seed: int
    needles: tuple[Fact, ...] = ()
    verdict: str = ""
    exit: int = 0

    def spec(self) -> dict[str, object]:
        """This output's entry in `bench.json` (needle positions drawn from its seed)."""
        rng = random.Random(f"{self.seed}-needles")
        needles = [
            {"text": f"note: {f.text} (recorded)", "where": f.where, "u": round(rng.random(), 4)}
            for f in self.needles
        ]
        return {
            "label": self.label,
            "kind": self.kind,
            "size": self.size,
            "seed": self.seed,
            "needles": needles,
            "verdict": self.verdict,
            "exit": self.exit,
        }


@dataclass(frozen=True)
class Run:
    """Run a Bash command. `glance`: a read-only look a flower coordinator may run itself; `check`: a look
    that only checks the work just done (a listing, a status after an edit), which flower's rules put in
    the mandate of the worker that did it."""

    label: str
    command: str
    glance: bool = False
    check: bool = False


@dataclass(frozen=True)
class ReadFile:
    """Read a workspace file with the Read tool (a coordinator may do it itself)."""

    label: str
    path: str


@dataclass(frozen=True)
class WriteFile:
    """Write `chars` characters to `path` with the Write tool (to an existing unread file: it fails)."""

    label: str
    path: str
    chars: int


@dataclass(frozen=True)
class Probe:
    """The agent needs `fact` now (a verdict probe right after a test run, or a later need)."""

    fact: Fact
    verdict: bool = False
    counted: bool = True
    """False for the repeat a worker makes when a coordinator sends it back for a lost fact."""


@dataclass(frozen=True)
class StateCheck:
    """After a resume the agent needs the current state version (`STATE v N`); it trusts what it sees."""


@dataclass(frozen=True)
class Denied:
    """A command the session's permission rules deny; skipped when a visible denial names it."""

    command: str


@dataclass(frozen=True)
class Reuse:
    """A recurring analysis: run the script at `path` if the agent can see it exists, else write it."""

    path: str
    chars: int


@dataclass(frozen=True)
class Idle:
    """Nobody works for `seconds` (only the cache clock moves)."""

    seconds: float


@dataclass(frozen=True)
class Pause:
    """The session ends here and is resumed; `external_change`: the state moves meanwhile."""

    external_change: bool = False


@dataclass(frozen=True)
class Subtask:
    """A piece of work a coordinator may delegate whole; its report carries `finding` (and a pasted log)."""

    name: str
    actions: tuple[Action, ...]
    finding: Fact
    pasted: int = 0


Action: TypeAlias = Run | ReadFile | WriteFile | Probe | StateCheck | Denied | Reuse | Idle | Pause | Subtask


@dataclass(frozen=True)
class Workload:
    """A workload: its task, actions, outputs and the files its workspace starts with."""

    key: str
    title: str
    task: str
    actions: tuple[Action, ...]
    outputs: dict[str, Output] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    constraints: tuple[Fact, ...] = ()
    pad: int = 0
    """Tokens of residue per main-thread turn reported to the CLI on top of the real request (marathon)."""
    deny: tuple[str, ...] = ()
    """Permission deny rules of the session (settings), e.g. `Bash(rm:*)`."""
    chunk: int = 8
    """At most this many actions per delegation (flower's coordinator delegates runs in chunks)."""

    def bench_json(self) -> str:
        """`bench.json` for the workspace: every output `gen.py` can print."""
        return json.dumps({label: out.spec() for label, out in self.outputs.items()}, indent=0)

    @property
    def facts(self) -> list[Fact]:
        """Every fact a probe asks for, in order of first need."""
        seen: dict[str, Fact] = {}
        for action in flatten(self.actions):
            if isinstance(action, Probe):
                seen.setdefault(action.fact.key, action.fact)
        return list(seen.values())

    @property
    def expected(self) -> tuple[int, int]:
        """How many fact probes and verdict probes the workload asks (reached or not)."""
        probes = [a for a in flatten(self.actions) if isinstance(a, Probe) and a.counted]
        return sum(not p.verdict for p in probes), sum(p.verdict for p in probes)

    @property
    def labels(self) -> dict[str, str]:
        """Command of each output label run by the workload (for pointers in summaries)."""
        return {a.label: a.command for a in flatten(self.actions) if isinstance(a, Run)}


def flatten(actions: tuple[Action, ...]) -> list[Action]:
    """The actions with every subtask opened in place (what an agent doing it all itself performs)."""
    flat: list[Action] = []
    for action in actions:
        if isinstance(action, Subtask):
            flat.extend(flatten(action.actions))
        else:
            flat.append(action)
    return flat
