"""The strategies the suite runs, all for real through the bundled CLI: baselines, peers, flower, ablations.

- `baseline_raw`: plain `ClaudeAgentOptions` with the `claude_code` preset (what an SDK user doing
  hands-on coding work sets), flower's tool list without `Agent` (it never delegates) and flower's model,
  compaction off;
- `baseline_cc_default`: the CLI as a user gets it: its own tool set, its built-in agents (a fan-out goes
  to `general-purpose`), its compaction, its idle handling;
- the peers (`peers.py`): `baseline_raw`'s options with compaction on and the peer's edit in the
  scripted model; with `prompt="sdk"` (`(SDK prompt)`), the SDK's empty default system prompt instead of
  the preset; with a 1-hour cache (`(1h cache)`), the same requests priced with every main-thread mark at
  one hour (`replays.py`; `(1h cache, as run)` records it for real, with the CLI's variable set);
- flower (`Runtime(..., configure=model.attach)`) in full and without each layer or lever, and the spill
  preview sweep of W1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from flower import SpillPolicy, coordinator, worker
from flower._options import session_tools

from .actions import Denied, Pause, Reuse, Run, Subtask, Workload, flatten
from .peers import CLEAR_ACTS, CLEAR_SWEEP, CLEARS, MASKS, PEERS
from .play import MOVE

MODEL = "claude-sonnet-4-6"
"""The CLI reports a 200,000-token window for it (CLI 2.1.332), so the marathon reaches the wall."""
WINDOW = 200_000
HARD_LIMIT = WINDOW - 23_000
"""With compaction off, the CLI refuses a prompt locally at about window - 23k (measured with CLI 2.1.332)."""
WORKER_PROMPT = "You do hands-on work: run what you are asked, then report briefly."


def _flower_worker() -> Any:
    return worker("Runs commands and reports.", WORKER_PROMPT, tools=["Bash", "Read", "Write", "Edit"])


def lead(model: str = MODEL, **knobs: Any) -> Any:
    """flower's coordinator for the benchmark: one worker with Bash, Read, Write and Edit (`knobs`:
    more `coordinator()` arguments, for the delegation ablations)."""
    return coordinator(
        "lead", "Drive the benchmark task.", {"worker": _flower_worker()}, model=model, **knobs
    )


TOOLS = session_tools(lead())
"""flower's session tools; `baseline_raw` and the peers are offered the same list without `Agent`."""
INLINE_TOOLS = [t for t in TOOLS if t != "Agent"]


@dataclass(frozen=True)
class Strategy:
    """How a run is made: plain SDK or flower, inline or delegated, and the knobs of each."""

    name: str
    engine: Literal["plain", "flower"]
    delegated: bool = False
    compaction: bool = True
    runtime: Mapping[str, Any] = field(default_factory=dict)
    spec: Mapping[str, Any] = field(default_factory=dict)
    """More `coordinator()` arguments (the delegation ablations)."""
    self_glance: bool = True
    """A delegated coordinator runs read-only looks itself, their output bounded by spill (False: it
    delegates them like any run)."""
    whole_loops: bool = True
    """flower's coordinator gives one mandate per move (every run up to its next own step), as its rules
    say (False: at most the workload's `chunk` of runs a mandate). Plain strategies chunk by the workload."""
    fold: bool = True
    """flower's coordinator puts a look that checks a worker's work in that worker's mandate, as its
    rules say (False: it runs every look itself)."""
    own_steps: int = 0
    """One-off hands-on steps flower's coordinator may take itself (`coordinator(own_steps=...)`); 0, the
    default: the strict wall, every hands-on step delegated (`flower +own_steps` loosens it to 1)."""
    prompt: Literal["preset", "sdk"] = "preset"
    """A plain strategy's system prompt: the `claude_code` preset, or the SDK's empty default."""
    cache: Literal["auto", "1h"] = "auto"
    """A plain strategy's prompt-cache lifetime: the CLI's own choice (5 minutes on an API key), or
    `CLAUDE_CODE_PROMPT_CACHE_TTL=1h` set for the run."""
    batch: int = 1
    """Subtasks handed out at once that flower's coordinator gives one worker as one mandate, at most
    (flower's rules ask it of small items; 1: a mandate each, `flower +batch` gives up to 4)."""
    parallel: int = 1
    model: str = MODEL
    note: str = ""
    peer: str = ""
    """The peer whose edit the scripted model applies (`peers.PEERS`)."""
    defaults: bool = False
    """The CLI's own tool set and built-in agents (else flower's tool list, built-in agents off)."""

    @property
    def inline_until(self) -> int | None:
        """The context (tokens) below which flower's main thread works hands-on itself before it turns
        coordinator (`coordinator(inline_until=...)`, `spec`), told to the player too; None: strict."""
        value = self.spec.get("inline_until")
        return int(value) if value is not None else None

    @property
    def chunk(self) -> int | None:
        """Runs a mandate holds at most (`MOVE`: one mandate per move); None: the workload's chunk."""
        return MOVE if self.engine == "flower" and self.whole_loops else None

    @property
    def inline(self) -> bool:
        """A plain strategy that never delegates: it is offered no `Agent` tool."""
        return self.engine == "plain" and not self.delegated and not self.defaults

    @property
    def scripts(self) -> str:
        """Where this strategy's recurring script lives (the workbench's scripts/ for flower)."""
        return (
            ".flower/scripts"
            if self.engine == "flower" and self.runtime.get("workbench", True)
            else "scripts"
        )

    @property
    def family(self) -> str:
        """`baseline`, `peer` or `flower`: how the tables group it."""
        if self.engine == "flower":
            return "flower"
        return "peer" if self.peer else "baseline"


HEAD_ONLY, HEAD_TAIL, LONG_HEAD = (400, 0), (300, 100), (2000, 0)
"""The spill previews compared on W1: (head, tail) chars."""


def default_shape() -> tuple[int, int]:
    """flower's current default preview, (head, tail)."""
    policy = SpillPolicy()
    return policy.head, policy.tail


def shape_label(shape: tuple[int, int]) -> str:
    """`300 head + 100 tail`, `400 head`."""
    return f"{shape[0]} head" + (f" + {shape[1]} tail" if shape[1] else "")


def sweep_name(base: str, shape: tuple[int, int]) -> str:
    """The strategy that runs `base` with preview `shape` (plain `base` for the default shape)."""
    return base if shape == default_shape() else f"{base}, preview {shape_label(shape)}"


ABLATIONS: dict[str, dict[str, Any]] = {
    "flower -spill": {"spill_threshold": None},
    "flower -expiry": {"ephemeral": False},
    "flower -denial_prune": {"keep_denials": 1_000_000},
    "flower -handoff": {"handoff": False},
    "flower -workbench": {"workbench": False},
    "flower -report_cap": {"report_limit": None},
    "flower -keep_warm": {"keep_warm": False},
}
"""The layers, one at a time: `Runtime` arguments (`-keep_warm`: the coordinator's cache at 1 hour and no
keep-warm pings, `Runtime(keep_warm=False)`)."""
PLANNING = ("TaskCreate", "TaskUpdate", "TaskList", "TaskGet")
"""The CLI's planning tools, opt-in for a flower coordinator."""
INLINE = "flower +inline"
"""The opt-in inline start's name (`coordinator(inline_until=INLINE_UNTIL)`)."""
INLINE_UNTIL = 30_000
"""`flower +inline`'s threshold (tokens of the main thread's context), chosen over `INLINE_SWEEP` on the
small and the full workloads (realistic seeds 1-2): it keeps every small task inline that 60k and 100k
keep (small W1-W3 and W5 never reach 30k) and, at full scale, delegates sooner, which costs less in W1,
W2, W3 and W5 than 60k or 100k; 20k is cheaper at full scale but gives back half of the small tasks' gain
in W1 and W5."""
DELEGATION_ABLATIONS: dict[str, dict[str, Any]] = {
    "flower -lean": {"claude_code_preset": True},
    "flower -shared_prefix": {"mandate_line": None},
    "flower +planning": {"tools": ("Agent", "Read", *PLANNING)},
    INLINE: {"inline_until": INLINE_UNTIL},
}
"""The delegation levers, one at a time: `coordinator()` arguments (`-lean`: the CLI's `claude_code`
preset under the coordinator's rules; `+inline`: the opt-in mode whose main thread works hands-on itself
until its context reaches `INLINE_UNTIL` tokens, then delegates as the strict wall asks)."""
INLINE_SWEEP = (20_000, 30_000, 60_000, 100_000)
"""The thresholds `flower +inline 30k`... try (named, never in the suite's runs): `INLINE_UNTIL` is the
one that measured cheapest over the small and the full workloads."""


def inline_name(tokens: int) -> str:
    """`flower +inline 60k`: the `+inline` variant at `tokens`."""
    return f"flower +inline {tokens // 1000}k"


PLAY_ABLATIONS: dict[str, dict[str, Any]] = {
    "flower -whole_loops": {"whole_loops": False},
    "flower -fold_checks": {"fold": False},
    "flower -self_glance": {"self_glance": False},
    "flower +own_steps": {"own_steps": 1},
    "flower +batch": {"batch": 4},
}
"""The coordinator's rules, one at a time: `-whole_loops` chunks by the workload's size instead of one
mandate per move; `-fold_checks` runs a look that checks a worker's work itself; `-self_glance`
delegates every look, its own ones too; `+own_steps` loosens the strict wall: the coordinator takes a move
of one small hands-on step itself (`coordinator(own_steps=1)`, opt-in); `+batch` gives up to four
subtasks handed out at once to one worker as one mandate, one report (the wall as strict as flower's)."""
SELF_GLANCE = "flower -self_glance"


def idle_layers(workload: Workload) -> dict[str, str]:
    """Ablations (and peer settings) that cannot change a workload's run, with why: their layer has
    nothing to act on there.

    They are not run (the run would be flower's, or `baseline_raw`'s, request for request) and the
    report says so.
    """
    actions = flatten(workload.actions)
    big = any(o.size >= 4_000 for o in workload.outputs.values()) or any(
        len(t) >= 4_000 for t in workload.files.values()
    )
    resumes = any(isinstance(a, Pause) for a in actions)
    denials = any(isinstance(a, Denied) for a in actions)
    reuse = any(isinstance(a, Reuse) for a in actions)
    pasted = any(isinstance(a, Subtask) and a.pasted for a in workload.actions)
    idle: dict[str, str] = {}
    if not big:
        idle["flower -spill"] = "no output reaches the 4,000-char threshold"
    if not resumes:
        idle["flower -expiry"] = "no resume (expiry acts when a session is resumed)"
    if not (resumes and denials):
        idle["flower -denial_prune"] = "no denial before a resume (pruning acts when a session is resumed)"
    if not workload.pad:
        idle["flower -handoff"] = "the context never nears the window"
    if not (reuse or workload.pad):
        idle["flower -workbench"] = "no recurring script and no new session"
    if not pasted:
        idle["flower -report_cap"] = "no worker report reaches the 4,000-char limit"
    if _mandates(workload, workload.chunk) == _mandates(workload, MOVE):
        idle["flower -whole_loops"] = "every move already fits in the workload's chunk"
    if _mandates(workload, MOVE, own_steps=1) == _mandates(workload, MOVE):
        idle["flower +own_steps"] = "no move of one small hands-on step"
    if _mandates(workload, MOVE, batch=4) == _mandates(workload, MOVE):
        idle["flower +batch"] = "no two subtasks handed out at once"
    if not any(isinstance(a, Run) and a.check for a in actions):
        idle["flower -fold_checks"] = "no look that checks a worker's work"
    if not any(isinstance(a, Run) and a.glance for a in actions):
        idle[SELF_GLANCE] = "no read-only look to run"
    elif workload.pad:
        idle[SELF_GLANCE] = "not run: its 80 page reads would be 80 more worker starts (time budget)"
    if workload.key not in CLEAR_ACTS:
        idle["clear_tool_uses"] = "the context never reaches its 100k trigger"
    return idle


def _mandates(workload: Workload, size: int, own_steps: int = 0, batch: int = 1) -> int:
    """How many mandates the scripted coordinator gives with at most `size` runs a mandate (and, with
    `own_steps`, the one-off steps it takes itself; with `batch`, subtasks handed out together)."""
    from .delegate import Chunk, partition

    items = partition(workload.actions, size, fold=True, own_steps=own_steps, batch=batch)
    return sum(isinstance(item, Chunk) for item in items)


RAW = Strategy("baseline_raw", "plain", compaction=False, note="plain SDK, compaction off")
FLOWER = Strategy("flower", "flower", delegated=True)
SOLO = Strategy("flower -delegation", "flower", note="the main thread does everything itself")


def cc_default(workload: Workload) -> Strategy:
    """The CLI as a user gets it (W3's investigations go to its `general-purpose` agent)."""
    return Strategy(
        "baseline_cc_default",
        "plain",
        delegated=workload.key == "w3",
        defaults=True,
        note="the CLI's own tools, built-in agents, compaction and idle handling",
    )


def peer(name: str) -> Strategy:
    """A peer strategy (`peers.PEERS`) on `baseline_raw`'s options, with the CLI's compaction behind it."""
    return Strategy(name, "plain", peer=name, note=PEERS[name].note)


def sdk_prompt(strategy: Strategy) -> Strategy:
    """`strategy` with the SDK's empty default system prompt instead of the `claude_code` preset."""
    return replace(strategy, name=f"{strategy.name}{SDK}", prompt="sdk")


def one_hour(strategy: Strategy) -> Strategy:
    """`strategy` run with a 1-hour prompt cache on its main thread, for real (`CLAUDE_CODE_PROMPT_CACHE_TTL`;
    the suite prices the same as a replay, `replays.one_hour`, and this checks the replay)."""
    return replace(strategy, name=f"{strategy.name}{AS_RUN}", cache="1h")


SDK = " (SDK prompt)"
"""How the name of a peer with the SDK's default prompt ends."""
ONE_HOUR = " (1h cache)"
"""How the name of a plain strategy priced with a 1-hour cache ends (a replay of its recording)."""
AS_RUN = " (1h cache, as run)"
"""How the name of a plain strategy recorded with a 1-hour cache ends (the replay's check)."""


def base_name(name: str) -> str:
    """A strategy's name without its prompt or cache variant: `mask n5 p1 (SDK prompt) (1h cache)` ->
    `mask n5 p1`."""
    for suffix in (ONE_HOUR, AS_RUN, SDK):
        name = name.removesuffix(suffix)
    return name


def core(workload: Workload) -> list[Strategy]:
    """The strategies every player runs: the baselines, flower and flower without its wall."""
    return [RAW, cc_default(workload), FLOWER, SOLO]


def sweep(workload: Workload | None = None) -> list[Strategy]:
    """Every peer setting (the masking sweep and both `clear_tool_uses` settings) that can act in
    `workload` (all of them when None)."""
    idle = idle_layers(workload) if workload is not None else {}
    return [peer(p.name) for p in (*MASKS, *CLEARS) if p.name not in idle]


def held_out(workload: Workload | None = None) -> list[Strategy]:
    """What the held-out seed runs to choose each peer's best: `sweep` and the `clear_tool_uses` sweep
    (`peers.CLEAR_SWEEP`, whose triggers all sit under the default's 100k)."""
    return [*sweep(workload), *(peer(p.name) for p in CLEAR_SWEEP)]


QUICK_ABLATIONS = ("flower -delegation", "flower -keep_warm", "flower -lean", "flower -whole_loops")
"""The ablations `--quick` runs (the ideal player)."""


def ablations(workload: Workload) -> list[Strategy]:
    """flower without each layer or lever that can act in `workload` (the ideal player)."""
    idle = idle_layers(workload)
    rows = [
        Strategy(name, "flower", delegated=True, runtime=knobs)
        for name, knobs in ABLATIONS.items()
        if name not in idle
    ]
    rows += [
        Strategy(name, "flower", delegated=True, spec=knobs)
        for name, knobs in DELEGATION_ABLATIONS.items()
        if name not in idle
    ]
    rows += [
        Strategy(name, "flower", delegated=True, **knobs)
        for name, knobs in PLAY_ABLATIONS.items()
        if name not in idle
    ]
    return rows


def strategies_for(workload: Workload, *, quick: bool, previews: bool = False) -> list[Strategy]:
    """The strategies a workload runs under with the ideal player: the core, every peer setting that can
    act there and, in the full suite, flower's ablations and W3's parallel variants; with `previews`,
    W1's spill preview sweep.

    `quick` runs flower and the ablations of `QUICK_ABLATIONS`.
    """
    fan_out = workload.key == "w3"
    if quick:
        return [FLOWER, *(s for s in [SOLO, *ablations(workload)] if s.name in QUICK_ABLATIONS)]
    rows = [*core(workload), *sweep(workload), *ablations(workload)]
    if fan_out:
        parallel = Strategy(
            "baseline_cc_default x6 parallel", "plain", delegated=True, parallel=6, defaults=True
        )
        rows.insert(2, parallel)
        rows.append(Strategy("flower x6 parallel", "flower", delegated=True, parallel=6))
    if previews and workload.key == "w1":  # the spill preview sweep: the shapes flower does not default to
        for shape in (HEAD_ONLY, HEAD_TAIL, LONG_HEAD):
            if shape == default_shape():
                continue
            policy = SpillPolicy(head=shape[0], tail=shape[1])
            if (
                shape != LONG_HEAD
            ):  # a coordinator never reads a preview: 2,000 head matters where work is done
                rows.append(
                    Strategy(
                        sweep_name("flower", shape),
                        "flower",
                        delegated=True,
                        runtime={"spill_threshold": policy},
                    )
                )
            rows.append(
                Strategy(
                    sweep_name("flower -delegation", shape), "flower", runtime={"spill_threshold": policy}
                )
            )
    return rows


def named(workload: Workload, name: str) -> Strategy:
    """The strategy called `name` for this workload (any the full suite can run)."""
    known = [*strategies_for(workload, quick=False, previews=True), *held_out(), *ablations(workload)]
    plain = [RAW, *held_out()]
    variants = [*(sdk_prompt(s) for s in plain), *(one_hour(s) for s in [*plain, cc_default(workload)])]
    variants += [one_hour(sdk_prompt(s)) for s in plain]
    variants += [
        Strategy(inline_name(t), "flower", delegated=True, spec={"inline_until": t}) for t in INLINE_SWEEP
    ]
    for strategy in [*known, *variants]:
        if strategy.name == name:
            return strategy
    raise KeyError(f"no strategy {name!r} for {workload.key}")
