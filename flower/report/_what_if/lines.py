"""The lines of a what-if report: the session as recorded, then one line per layer (frozen dataclasses).

Dollars are floats (`*_usd`), tokens ints. Every layer line carries the session's whole cost with that
layer alone (`cost_usd`) and the main thread's peak context with it, so a user sees which layer pays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from .delegation import DelegationLine
from .handoff import GlanceLine, HandoffLine

__all__ = [
    "AsRecorded",
    "Layer4Line",
    "Layers",
    "ReplayLine",
    "SessionWhatIf",
    "SpillLine",
    "TokensByKind",
    "WhatIfTotal",
]


@dataclass(frozen=True, kw_only=True)
class TokensByKind:
    """Tokens of each kind the API bills."""

    input: int = 0
    """Uncached input."""
    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    output: int = 0

    def __add__(self, other: TokensByKind) -> TokensByKind:
        return TokensByKind(
            input=self.input + other.input,
            cache_read=self.cache_read + other.cache_read,
            cache_write_5m=self.cache_write_5m + other.cache_write_5m,
            cache_write_1h=self.cache_write_1h + other.cache_write_1h,
            output=self.output + other.output,
        )


@dataclass(frozen=True, kw_only=True)
class AsRecorded:
    """A session as its transcripts recorded it."""

    requests: int = 0
    """Model replies: main thread, subagents, compactions."""
    tokens: TokensByKind = field(default_factory=TokensByKind)
    cost_usd: float = 0.0
    """Each request at its own model's prices (`flower._cost`)."""
    cost_lower_bound: bool = False
    """Some output counts were recorded mid-stream (CLI 2.1.42 and earlier): the cost is a lower bound."""
    main_peak: int = 0
    """The main thread's largest context (tokens)."""
    compactions: int = 0
    compactions_estimated: int = 0
    """Compactions whose own request the CLI kept no transcript of: counted in `requests`, `tokens` and
    `cost_usd` as estimated (the context before the boundary read from the cache, the summary as output)."""
    resumes: int = 0
    """Prompts the CLI marked as starting a new process."""
    subagents: int = 0
    """Worker runs (transcripts, and Agent/Task calls whose transcript is missing)."""
    stopped: str = ""
    """Why the session stopped before finishing (`stopped.how_it_stopped`): `window` (the context was full:
    "Prompt is too long"), `api error` (an API error was its last word), `cut` (its last calls never got
    their results: the process ended under them); "" when it finished. A session that stopped has every
    line of its what-if a lower bound on what the finished run would have cost."""
    unfinished: int = 0
    """1 when the session stopped before finishing (in a total: how many did)."""
    idle_pauses: int = 0
    """Prompts that came after the prompt cache had gone cold (the user paused longer than its lifetime;
    `idle.idle_pauses`)."""
    idle_tokens: int = 0
    """Context tokens those prompts' first requests wrote again that a warm cache would have read."""
    idle_usd: float = 0.0
    """What writing them again cost more than reading them: part of `cost_usd`, which no layer saves."""
    unpriced: tuple[str, ...] = ()
    """Models flower's price table does not know, priced like the CLI's default model
    (`flower._cost.DEFAULT_MODEL`): every dollar of their requests is that assumption's."""


@dataclass(frozen=True, kw_only=True)
class ReplayLine:
    """A replay's result: the session's cost and main-thread peak with it, and what it saved."""

    _derived: ClassVar[tuple[str, ...]] = ("saved_usd",)

    cost_usd: float = 0.0
    """The session's cost with the layer. A line with spill: expected, with the read-backs a model shown
    only the previews would have made (`readback`, calibrated on real transcripts)."""
    recorded_usd: float = 0.0
    """The recorded cost it is compared with."""
    main_peak: int = 0
    """The main thread's largest context (with spill: the peak a run typically shows, `typical_peak`)."""
    tokens_saved: int = 0
    """Context tokens not sent, summed over every request replayed."""
    replay_usd: float = 0.0
    """A line with spill: its cost with nothing read back (the replay alone, the optimistic end). Equal to
    `cost_usd` for a line without spill."""
    replay_peak: int = 0
    """The main thread's peak then."""
    read_back_usd: float = 0.0
    """A line with spill: its pessimistic end, every output a later reply quotes read back whole where
    first quoted and every other at the upper end of the real share (`readback.PESSIMISTIC`). Equal to
    `cost_usd` for a line without spill."""
    read_back_peak: int = 0
    """The main thread's peak then."""

    @property
    def saved_usd(self) -> float:
        """Recorded minus replayed (negative: the layer would have cost more)."""
        return self.recorded_usd - self.cost_usd


@dataclass(frozen=True, kw_only=True)
class SpillLine(ReplayLine):
    """Layer 3: outputs spilled on the spot."""

    _derived: ClassVar[tuple[str, ...]] = ("saved_usd",)

    outputs: int = 0
    """Tool outputs `spill_guard` would have spilled."""
    main_outputs: int = 0
    """Of those, on the main thread."""
    chars_kept_out: int = 0
    """Characters of those outputs not resident (their text minus the pointer and preview)."""
    quoted_later: int = 0
    """Of the outputs, those a later reply of their thread quotes a value from, found in the part the
    preview hides (the loose test: the pessimistic end reads them back whole)."""
    copied_later: int = 0
    """Of the outputs, those a later reply copies a token from that it could have found only in the part
    the preview hides (the strict test): a model shown the preview alone looks them up, for certain."""
    read_backs: float = 0.0
    """Read-backs expected (look-ups of what is copied later, and reads to look at the rest)."""
    read_back_chars: int = 0
    """Characters they are expected to bring back."""


@dataclass(frozen=True, kw_only=True)
class Layer4Line(ReplayLine):
    """Layer 4: what `PruningSessionStore.load` would have rewritten at each resume."""

    _derived: ClassVar[tuple[str, ...]] = ("saved_usd",)

    resumes: int = 0
    cold_resumes: int = 0
    """Resumes after the prompt cache's lifetime: the load decided anew."""
    expired: int = 0
    """Results of ephemeral commands expired (counted at each resume that returned them)."""
    denials_pruned: int = 0
    residue: int = 0
    """Synthetic API errors dropped, interrupted results and orphan calls neutralised."""
    chars_saved: int = 0
    """Characters left out of the history, summed over the resumes."""


@dataclass(frozen=True, kw_only=True)
class Layers:
    """What each layer would have changed, each its own line."""

    spill: SpillLine = field(default_factory=SpillLine)
    layer4: Layer4Line = field(default_factory=Layer4Line)
    spill_and_layer4: ReplayLine = field(default_factory=ReplayLine)
    """Both together (layer 4 rewriting what spill left): flower without delegation."""
    handoff: HandoffLine = field(default_factory=HandoffLine)
    glance: GlanceLine = field(default_factory=GlanceLine)
    delegation: DelegationLine = field(default_factory=DelegationLine)
    """An estimate, on top of spill and layer 4: all of flower."""


@dataclass(frozen=True, kw_only=True)
class SessionWhatIf:
    """One session: where it was read, as recorded, and each layer's line."""

    session_id: str
    project_key: str
    path: str
    started: str
    """Its first timestamp (ISO), '' when none."""
    ended: str
    tokens_per_char: float
    """The rate characters became tokens at (`replay.session_rate`)."""
    as_recorded: AsRecorded
    layers: Layers
    main_context: tuple[int, ...] = ()
    """The main thread's context per request, as recorded (for the plots)."""
    main_context_after: tuple[int, ...] = ()
    """The same with spill and layer 4."""
    title: str = ""
    """The first prompt's first line, cut to 60 characters: only when asked for (`show_prompts`)."""
    model: str = ""
    """The model most of its requests ran on."""
    rate_fallback: str = ""
    """'' when `tokens_per_char` was measured on the session; else why its model's typical rate was used
    (`replay.Rate.fallback`)."""
    cwd: str = ""
    """The directory the session ran in (its transcript's `cwd`), '' when not recorded: where `flower run`
    would run the same work."""


@dataclass(frozen=True, kw_only=True)
class WhatIfTotal:
    """Every session added up (peaks: the largest)."""

    sessions: int = 0
    as_recorded: AsRecorded = field(default_factory=AsRecorded)
    layers: Layers = field(default_factory=Layers)
