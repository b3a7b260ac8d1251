"""The parts of an `EconomyReport`: what a run did with its context, one frozen dataclass per measure.

docs/report.md says how each is computed. A part's `_derived` names the properties that `to_dict()`
adds to its fields (shares, rates).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal

from .._usage import TokenUsage
from ._delegation import Delegation
from ._metrics import hit_rate

__all__ = [
    "ContextGrowth",
    "Cost",
    "Delegation",
    "Mandates",
    "ResumeSummary",
    "Scripts",
    "SessionSummary",
    "Spills",
    "Split",
    "Tokens",
]


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


@dataclass(frozen=True, kw_only=True)
class Split:
    """One count on the main thread and in subagents."""

    _derived: ClassVar[tuple[str, ...]] = ("total", "subagent_share")

    main: int = 0
    """On the main thread (the coordinator's transcripts)."""
    subagents: int = 0
    """In subagents (their `subagents/agent-*` transcripts)."""

    @property
    def total(self) -> int:
        """Main thread and subagents together."""
        return self.main + self.subagents

    @property
    def subagent_share(self) -> float | None:
        """The subagents' part of the total (None when the total is 0)."""
        return _share(self.subagents, self.total)


@dataclass(frozen=True, kw_only=True)
class SessionSummary:
    """One session of the store, with its place in a handoff chain."""

    session_id: str
    """The session's id (resume it with `Runtime.run(..., resume=...)`)."""
    project_key: str
    """The store's project key (the CLI's sanitised working directory)."""
    role: Literal["start", "successor"]
    """`successor`: started by a handoff ("You are taking over work in progress"); `start` otherwise."""
    generation: int
    """1 for a session that starts a step; n + 1 for the successor of generation n."""
    predecessor: str | None
    """The session that handed off to this one, when it could be told."""
    handed_off: bool
    """The session was asked for its handoff document (it retired)."""
    prompts: int
    """Prompts the session received (its first, its resumes, later prompts of the same process, a
    handoff request)."""
    resumes: int
    """Prompts that started a new process loading the session (`flower.stores._rewrite.resumes`: the
    CLI marks them); a later prompt of the same process is not one."""
    turns: int
    """Main-thread replies of the model."""
    subagent_runs: int
    """Workers run: the subagent transcripts stored under the session (the compaction worker's are not
    counted), and the main-thread Agent/Task calls whose worker's transcript is missing."""
    subagent_runs_from_calls: int = 0
    """Of `subagent_runs`, those counted from their calls alone (`flower.report._gaps`): their turns,
    tokens and cost are not in the report."""
    compactions: int = 0
    """Compactions of the main thread (`compact_boundary` entries)."""
    model: str
    """The model of most of its main-thread replies."""
    window: int = 0
    """That model's context window (tokens), as the CLI reports it or else as `flower.report._pricing`
    knows it."""
    context: tuple[int, ...]
    """The main thread's context (tokens) at each of its replies."""


@dataclass(frozen=True, kw_only=True)
class ResumeSummary:
    """What layer 4 rewrote when a session was resumed (recomputed from the stored history)."""

    _derived: ClassVar[tuple[str, ...]] = ("pruned",)

    session_id: str
    """The session resumed."""
    prompt: int
    """The ordinal (1-based) of the prompt that resumed the session."""
    after_turns: int
    """Main-thread replies in the history the resume loaded."""
    warm: bool = False
    """The resume came within the prompt cache's lifetime: it repeated the last cold resume's rewrites
    and decided none (`CachePolicy`); what it counts is what it repeated."""
    expired: int = 0
    """Results of ephemeral commands replaced by a note."""
    trimmed: int = 0
    """Large results moved to files (only with a `TrimPolicy`)."""
    superseded: int = 0
    """Read results replaced because a later copy of the same file followed (`PrunePolicy`'s
    `supersede_reads`)."""
    denials: int = 0
    """Denied calls dropped (call and result)."""
    api_errors: int = 0
    """Synthetic API-error replies dropped."""
    interrupts: int = 0
    """Results of interrupted calls neutralised."""
    orphans: int = 0
    """Calls left without a result that were given one."""
    chars_saved: int = 0
    """Characters of replayed message content the rewrites saved (only the branch the CLI replayed)."""

    @property
    def pruned(self) -> int:
        """Denied calls and API-error entries dropped, interrupts neutralised, orphans healed."""
        return self.denials + self.api_errors + self.interrupts + self.orphans


@dataclass(frozen=True, kw_only=True)
class Mandates:
    """The prompts the main thread gave its subagents (they stay in its context for good)."""

    _derived: ClassVar[tuple[str, ...]] = ("restated_share",)

    count: int = 0
    """Agent calls on the main thread."""
    chars: int = 0
    """Their prompts' characters, together."""
    longest: int = 0
    """The longest prompt's characters."""
    restated_chars: int = 0
    """Characters copied from the rules the worker already has (runs of `RESTATE_WORDS`+ words)."""

    @property
    def restated_share(self) -> float | None:
        """The share of mandate characters that restate the worker rules."""
        return _share(self.restated_chars, self.chars)


@dataclass(frozen=True, kw_only=True)
class Scripts:
    """Scripts written into the workbench's `scripts/` and how often they were run."""

    written: int = 0
    """Distinct scripts written or edited."""
    writes: int = 0
    """Write and Edit calls into `scripts/`."""
    runs: int = 0
    """Bash commands that ran a script from `scripts/`."""
    scripts_run: int = 0
    """Distinct scripts run."""


@dataclass(frozen=True, kw_only=True)
class Spills:
    """Tool outputs moved to `spill/` on the spot (layer 3), from `spill/INDEX.jsonl`."""

    count: int = 0
    """Outputs spilled (one per string field moved)."""
    main: int = 0
    """Spilled from main-thread calls."""
    subagents: int = 0
    """Spilled from subagent calls."""
    chars: int = 0
    """Characters written to spill files."""
    kept_out: int = 0
    """`chars` minus what stayed resident in their place (the pointer and the preview)."""


@dataclass(frozen=True, kw_only=True)
class Reports:
    """Workers' long reports kept out of the main thread (`report_cut`, `report_guard`)."""

    cut: int = 0
    """Foreground reports over the limit: each was saved under `artifacts/reports/` and the coordinator
    got its head and the path (from the main thread's Agent results)."""
    sent_back: int = 0
    """Background reports over the limit: each was saved there and the worker answered again (from the
    workers' transcripts)."""
    chars: int = 0
    """Characters of those reports kept out of the main thread: a sent-back report's whole length, a cut
    one's past its head."""


@dataclass(frozen=True, kw_only=True)
class ContextGrowth:
    """The main thread's context over its turns, and where that slope leads."""

    window: int
    """The context window the wall is extrapolated to (tokens)."""
    window_from: str
    """Where the window comes from: the model's name, or an option."""
    turns: int
    """Main-thread replies, over every session."""
    start: int
    """The context at the first reply of the first session (tokens)."""
    peak: int
    """The largest context of any main-thread reply."""
    last: int
    """The context of the last reply of the last session."""
    slope: float | None
    """Tokens per turn: least squares within each session (a handoff restarts low), pooled."""
    wall_turns: float | None
    """Turns from `start` until `window` at `slope` (None when the context does not grow)."""


@dataclass(frozen=True, kw_only=True)
class Tokens:
    """Token usage summed over the model's replies."""

    _derived: ClassVar[tuple[str, ...]] = ("hit_rate", "main_hit_rate", "subagent_hit_rate")

    main: TokenUsage = field(default_factory=TokenUsage)
    """Over the main thread's replies."""
    subagents: TokenUsage = field(default_factory=TokenUsage)
    """Over the subagents' replies."""
    compaction: TokenUsage = field(default_factory=TokenUsage)
    """Over the compaction worker's replies (`subagents/agent-acompact-*`)."""
    keep_warm: TokenUsage = field(default_factory=TokenUsage)
    """Over the keep-warm pings (`flower._warm`: they leave no entry in the session; read from the
    workbench's `keep-warm.jsonl`). Not in the hit rates, which are the session's own replies'."""
    pings: int = 0
    """Keep-warm pings recorded for these sessions."""
    mid_stream: int = 0
    """Replies whose output count was recorded mid-stream (no `stop_reason` on any of their entries),
    counted from their content instead (`flower.report._metrics.Message`). When not 0, `output` is a
    lower bound."""

    @property
    def hit_rate(self) -> float | None:
        """Prompt-cache hit rate over every reply: cache read / (input + cache read + cache creation)."""
        return hit_rate(self.main + self.subagents + self.compaction)

    @property
    def main_hit_rate(self) -> float | None:
        """The hit rate of the main thread's replies."""
        return hit_rate(self.main)

    @property
    def subagent_hit_rate(self) -> float | None:
        """The hit rate of the subagents' replies."""
        return hit_rate(self.subagents)


@dataclass(frozen=True, kw_only=True)
class Cost:
    """Dollars, estimated from the usage (the store does not hold the CLI's own cost)."""

    usd: float = 0.0
    """The total, in US dollars."""
    estimated: bool = True
    """Always True: computed from the usage with `flower.report._pricing`, not the CLI's own figure."""
    by_model: tuple[tuple[str, float], ...] = ()
    """`(model, dollars)` per model seen."""
    unpriced: tuple[str, ...] = ()
    """Models the price table does not know (priced like the CLI's default model)."""
    lower_bound: bool = False
    """Some output tokens are a lower bound (`Tokens.mid_stream`), so the cost is one too."""
    keep_warm_usd: float = 0.0
    """Of `usd`, the keep-warm pings' (`Tokens.keep_warm`)."""
