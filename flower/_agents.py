"""`AgentSpec` and its two factories: `worker()` and `coordinator()`.

A spec is a plain, immutable description; `build_options()` compiles it into `ClaudeAgentOptions` and
`Runtime.run()` runs it. Example::

    analyst = worker("Analyse files: counts, searches, comparisons.",
                     "You do text analysis. Use the command line; never estimate by hand.",
                     tools=["Read", "Write", "Bash", "Glob", "Grep"])
    lead = coordinator("lead", "Goal: measure the size of data/.", {"analyst": analyst})
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions, HookMatcher
from claude_agent_sdk.types import EffortLevel, HookEvent, SettingSource

from ._errors import SpecError
from ._handoff.compact import CompactPolicy
from ._util.check import check_fields, checked
from ._wall._inline import check_inline_until
from ._wall._tools import COORDINATOR_TOOLS, WORKER_TOOLS, check_tools
from ._wall.mandate import MANDATE_LINE, check_mandate_line
from ._wall.rules import WORKER_RULES, coordinator_rules

__all__ = ["AgentSpec", "coordinator", "worker"]

_OPTION_FIELDS = frozenset(f.name for f in dataclasses.fields(ClaudeAgentOptions))
BUILTIN_AGENTS = frozenset({"claude", "Explore", "general-purpose", "Plan", "statusline-setup"})
"""The CLI's own agent types (CLI 2.1.327); hidden unless a spec sets `builtin_agents=True`."""
_MANAGED = frozenset(
    {
        "system_prompt",
        "tools",
        "allowed_tools",
        "agents",
        "hooks",
        "cwd",
        "session_store",
        "resume",
        "fork_session",
    }
)
"""ClaudeAgentOptions fields flower sets itself: a spec changes them through its own fields."""


def _frozen(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True, kw_only=True)
class AgentSpec:
    """One agent: its instructions, tools and limits. Build it with `worker()` or `coordinator()`."""

    name: str = ""
    """How the agent is called: a coordinator's name; a worker's name is its key in the coordinator's
    `workers` mapping. Any Unicode works (`分析员`)."""
    description: str = ""
    """For a worker: when to delegate to it. The coordinator reads it in the agent list."""
    instructions: str
    """What this agent is for; appended to the system prompt (the CLI's `claude_code` preset, or a
    coordinator's own prompt), never replacing it."""
    rules: str = ""
    """Built-in discipline appended before the instructions (`COORDINATOR_RULES`, `WORKER_RULES`)."""
    tools: tuple[str, ...] = ()
    """Its own tools. A coordinator's session also offers its workers' tools (CLI permissions are
    session-wide); the delegation wall, not the tool list, keeps the coordinator's hands off them."""
    model: str | None = None
    """A model name or alias; `"inherit"` (a worker's default) uses the parent's model."""
    effort: EffortLevel | None = None
    """The CLI's reasoning effort (`"low"` ... `"max"`); None leaves the CLI's default."""
    max_turns: int | None = None
    """At most this many model turns per session; None: no limit."""
    delegate_only: bool = False
    """The main thread may not use hands-on tools (always True for a coordinator)."""
    glance: bool = False
    """With `delegate_only`: the main thread may still run read-only Bash commands (`is_ephemeral`)."""
    own_steps: int = 0
    """With `delegate_only`: how many hands-on calls per user turn the main thread may make itself
    (`delegate_guard(own_steps=...)`); 0, the default, is the strict wall."""
    inline_until: int | None = None
    """With `delegate_only`: the main thread does its hands-on work itself while its context is under this
    many tokens, and delegates from then on (`delegate_guard(inline_until=...)`; a `Runtime` runs that
    start as an inline session it hands off to the coordinator); None, the default, is the strict wall
    from the start."""
    mandate_line: str | None = None
    """With `delegate_only`: the fixed line put in front of every mandate (`mandate_guard`), so every
    worker sends the same billing block and reads the tools and system prompt the first one cached."""
    foreground: bool = False
    """With `delegate_only`: an Agent call that does not ask for the background runs its worker in the
    foreground (`mandate_guard(foreground=True)`); `coordinator()` gives True. The CLI's default, the
    background, costs the coordinator a request of its own and a longer frame around every report."""
    workers: Mapping[str, AgentSpec] = field(default_factory=lambda: MappingProxyType({}))
    """Subagents by name."""
    compact: CompactPolicy | None = None
    """The CLI's compaction switch; None lets the Runtime decide (no summary while handoff is active)."""
    builtin_agents: bool = False
    """Offer the CLI's built-in agents (general-purpose, Explore, Plan...) beside the workers."""
    claude_code_preset: bool = True
    """The system prompt starts with the CLI's `claude_code` preset (about 28k characters of guidance for
    hands-on work). False, for a coordinator only: flower's own short coordinator prompt instead
    (`COORDINATOR_PROMPT`); `coordinator()` defaults to False."""
    setting_sources: tuple[SettingSource, ...] | None = ()
    """Which settings files and CLAUDE.md the CLI loads: none by default (isolated, reproducible);
    None is the SDK's default (user and project)."""
    hooks: Mapping[HookEvent, Sequence[HookMatcher]] = field(default_factory=lambda: MappingProxyType({}))
    """Your own hooks; they run beside flower's, never instead of them."""
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """Other `ClaudeAgentOptions` fields (`mcp_servers`, `env`, `max_budget_usd`, `permission_mode`...)."""

    def __post_init__(self) -> None:
        check_fields(self)
        kind = "coordinator" if self.delegate_only else "agent"
        owner = f"{kind} {self.name!r}" if self.name else "worker"
        if not self.instructions.strip():
            raise SpecError(f"{owner}: instructions must be a non-empty string")
        if self.name != self.name.strip():
            raise SpecError(f"{owner}: a name is a string without surrounding spaces")
        object.__setattr__(self, "tools", check_tools(self.tools, owner=owner))
        if self.max_turns is not None and self.max_turns < 1:
            raise SpecError(f"{owner}: max_turns must be a positive int, got {self.max_turns!r}")
        if self.glance and not self.delegate_only:
            raise SpecError(f"{owner}: glance only makes sense with delegate_only (it loosens the wall)")
        if self.own_steps < 0:
            raise SpecError(f"{owner}: own_steps must be 0 or more, got {self.own_steps}")
        if self.own_steps and not self.delegate_only:
            raise SpecError(f"{owner}: own_steps only makes sense with delegate_only (it loosens the wall)")
        check_inline_until(self.inline_until, self.own_steps, owner)
        if self.inline_until is not None and not self.delegate_only:
            raise SpecError(
                f"{owner}: inline_until only makes sense with delegate_only (it loosens the wall)"
            )
        check_mandate_line(self.mandate_line, owner)
        if self.mandate_line is not None and not self.delegate_only:
            raise SpecError(f"{owner}: mandate_line only makes sense with delegate_only (a coordinator)")
        if self.foreground and not self.delegate_only:
            raise SpecError(f"{owner}: foreground only makes sense with delegate_only (a coordinator)")
        if not self.claude_code_preset and not self.delegate_only:
            raise SpecError(
                f"{owner}: only a coordinator (delegate_only) runs without the claude_code preset; "
                "hands-on agents keep it"
            )
        if self.setting_sources is not None:
            object.__setattr__(self, "setting_sources", tuple(self.setting_sources))
        object.__setattr__(self, "workers", self._checked_workers(owner))
        object.__setattr__(self, "hooks", _frozen({k: tuple(v) for k, v in dict(self.hooks).items()}))
        options = dict(self.options)
        unknown = set(options) - _OPTION_FIELDS
        if unknown:
            raise SpecError(
                f"{owner}: options has unknown ClaudeAgentOptions field(s): {', '.join(sorted(unknown))}"
            )
        managed = set(options) & _MANAGED
        if managed:
            raise SpecError(
                f"{owner}: {', '.join(sorted(managed))} are set by flower from the spec "
                "(instructions, tools, workers, hooks) and the Runtime (workspace, store, resume)"
            )
        object.__setattr__(self, "options", _frozen(options))

    def _checked_workers(self, owner: str) -> Mapping[str, AgentSpec]:
        named: dict[str, AgentSpec] = {}
        for name, spec in dict(self.workers).items():
            if not name.strip() or name != name.strip():
                raise SpecError(f"{owner}: worker names must be non-empty strings without surrounding spaces")
            if self.builtin_agents and name in BUILTIN_AGENTS:
                raise SpecError(f"{owner}: worker {name!r} has the name of a built-in agent of the CLI")
            same = [
                other
                for other in named
                if unicodedata.normalize("NFC", other) == unicodedata.normalize("NFC", name)
            ]
            if same:
                raise SpecError(
                    f"{owner}: duplicate worker name {name!r} (the same as {same[0]!r} once normalised)"
                )
            if spec.workers:
                raise SpecError(
                    f"{owner}: worker {name!r} has workers of its own; subagents cannot nest here"
                )
            if not spec.description.strip():
                raise SpecError(f"{owner}: worker {name!r} needs a description (when to delegate to it)")
            named[name] = spec if spec.name == name else dataclasses.replace(spec, name=name)
        return MappingProxyType(named)

    @property
    def prompt(self) -> str:
        """Rules then instructions: the text appended to the system prompt (or a subagent's prompt)."""
        return f"{self.rules}\n\n{self.instructions}" if self.rules else self.instructions


@checked
def worker(
    description: str,
    instructions: str,
    *,
    tools: Iterable[str] = WORKER_TOOLS,
    model: str | None = "inherit",
    effort: EffortLevel | None = None,
    max_turns: int | None = None,
    rules: str = WORKER_RULES,
) -> AgentSpec:
    """A worker: a subagent that does the hands-on work and reports briefly.

    `model="inherit"` by default: flower saves context, not model tier; a worker is never downgraded.
    """
    if not description.strip():
        raise SpecError("worker: description must be a non-empty string (when to delegate to it)")
    return AgentSpec(
        description=description,
        instructions=instructions,
        tools=tuple(tools),
        model=model,
        effort=effort,
        max_turns=max_turns,
        rules=rules,
    )


@checked(advice={"workers": ": name each worker, as in {'analyst': worker(...)}"})
def coordinator(
    name: str,
    instructions: str,
    workers: Mapping[str, AgentSpec] | Iterable[tuple[str, AgentSpec]],
    *,
    glance: bool = True,
    own_steps: int = 0,
    inline_until: int | None = None,
    tools: Iterable[str] = COORDINATOR_TOOLS,
    mandate_line: str | None = MANDATE_LINE,
    foreground: bool = True,
    model: str | None = None,
    effort: EffortLevel | None = None,
    max_turns: int | None = None,
    compact: CompactPolicy | None = None,
    rules: str | None = None,
    builtin_agents: bool = False,
    claude_code_preset: bool = False,
    setting_sources: Iterable[SettingSource] | None = (),
    hooks: Mapping[HookEvent, Sequence[HookMatcher]] | None = None,
    options: Mapping[str, Any] | None = None,
) -> AgentSpec:
    """A coordinator: decomposes, delegates to `workers`, reads reports, decides.

    Always `delegate_only=True` (not overridable): `delegate_guard` refuses every hands-on call of its
    main thread at once, with the way to delegate (the strict wall). With `glance=True` it may run
    read-only Bash commands itself (a subagent costs ~4.3k tokens; an `ls` is not worth that).
    `own_steps > 0` is an opt-in loosening: that many hands-on calls per user turn (one command, one
    small edit) it may take itself, a Bash one with a scrubbed environment and a cut output, never one
    that would read credentials; what it gives up is in `delegate_guard`. `inline_until` (tokens, opt-in,
    not with `own_steps`) is the other loosening, for tasks that may be small: the main thread does its
    hands-on work itself while its context is under that size (a Bash command scrubbed, never one that
    reads credentials). A `Runtime` starts such a run in an inline session, without the Agent tool and
    with a short prompt of its own, and hands it off at that size to this coordinator, strict from then
    on; in one session (a resume, no handoff, `instrument`) the strict wall holds from the reply that
    reached it on. `rules` None:
    `coordinator_rules(own_steps, inline_until)`, which says just that. `mandate_line` starts every
    mandate (None: mandates go out as written); the planning tools (`TaskCreate`...) are opt-in through
    `tools`. `foreground`: a worker the coordinator does not send to the background in so many words runs
    in the foreground (False: the CLI's default, the background). `workers` may be empty only with
    `builtin_agents=True` (the coordinator then delegates to the CLI's own agents).

    Its system prompt is flower's own short coordinator prompt (`COORDINATOR_PROMPT`), then `rules` and
    `instructions`: a coordinator does little hands-on work, and the CLI gives its subagents, who do, no
    preset either. `claude_code_preset=True` puts the CLI's full `claude_code` preset (about 28k
    characters, sent again with every request of the coordinator) in its place, as flower did before.
    """
    if not name.strip():
        raise SpecError("coordinator: name must be a non-empty string")
    named = _named_workers(name, workers)
    if not named and not builtin_agents:
        raise SpecError(
            f"coordinator {name!r}: workers is empty, and a coordinator only delegates: give it at least "
            "one worker(), or builtin_agents=True to delegate to the CLI's own agents (general-purpose...)"
        )
    spec = AgentSpec(
        name=name,
        instructions=instructions,
        rules=rules or "",
        tools=(*tools, "Bash") if glance else tuple(tools),
        model=model,
        effort=effort,
        max_turns=max_turns,
        delegate_only=True,
        glance=glance,
        own_steps=own_steps,
        inline_until=inline_until,
        mandate_line=mandate_line,
        foreground=foreground,
        workers=named,
        compact=compact,
        builtin_agents=builtin_agents,
        claude_code_preset=claude_code_preset,
        setting_sources=None if setting_sources is None else tuple(setting_sources),
        hooks=hooks or {},
        options=options or {},
    )
    if "Agent" not in spec.tools and named:
        raise SpecError(f"coordinator {name!r}: it has workers but no Agent tool to delegate with")
    # the spec checks own_steps before the rules that say it are written
    if rules is not None:
        return spec
    return dataclasses.replace(spec, rules=coordinator_rules(own_steps, inline_until))


def _named_workers(
    owner: str, workers: Mapping[str, AgentSpec] | Iterable[tuple[str, AgentSpec]]
) -> dict[str, AgentSpec]:
    """Workers as a dict; a name given twice (in a list of pairs) is an error, not a silent overwrite."""
    if isinstance(workers, Mapping):
        return dict(workers)
    named: dict[str, AgentSpec] = {}
    for pair in workers:  # `@checked` leaves a one-shot iterator's items to this loop
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise SpecError(
                f"coordinator {owner!r}: workers must be (name, worker()) pairs, got {pair!r:.60}"
            )
        name, spec = pair
        if name in named:
            raise SpecError(f"coordinator {owner!r}: duplicate worker name {name!r}")
        named[name] = spec
    return named
