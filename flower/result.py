"""`StepResult`: what one `Runtime.run()` produced."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._errors import StoreError
from .usage import StepUsage

__all__ = ["StepResult"]


@dataclass(frozen=True, kw_only=True)
class StepResult:
    """The outcome of one step (one `Runtime.run()`), however many CLI turns and sessions it took."""

    session_id: str | None
    """The live session at the end (resume it to continue)."""
    ok: bool
    """The run ended with a non-error result, and every background worker it started reported."""
    text: str
    """The main thread's final answer (its last result; never an API error message)."""
    error: str | None = None
    """Why it failed, for a human (never shown to the model)."""
    cost_usd: float = 0.0
    """The step's estimated cost in US dollars, subagents included: `usage` priced per model by flower's
    cost model (`flower.cost`), the same one `flower report`, the demo and the benchmarks use. An estimate:
    list prices; the main thread's 1-hour cache writes at the 1-hour rate (2x input), the subagents' at
    the 5-minute rate (1.25x: the CLI reports no split for them); an unknown model priced like the CLI's
    default."""
    cli_cost_usd: float = 0.0
    """The CLI's own figure for the step (`ResultMessage.total_cost_usd`, summed over its sessions): its
    price table, which may lag a new model or price. Equal to `cost_usd` when both tables agree."""
    usage: StepUsage = field(default_factory=StepUsage)
    """Tokens used: input, output, cache read and cache write; main thread and subagents, per model."""
    num_turns: int = 0
    """Model turns the CLI reported, summed over its results."""
    results: int = 0
    """ResultMessages seen: more than one when background subagents finished after the main turn."""
    retired: tuple[str, ...] = ()
    """Session ids retired by handoffs, oldest first."""
    peak_context: int = 0
    """The largest main-thread context seen, in tokens (input + cache read + cache creation)."""
    denials: tuple[str, ...] = ()
    """Names of the tools whose calls were denied during the run (not the calls flower itself refuses at
    the handoff line, telling the coordinator to end its turn while its background workers report)."""
    duration_s: float = 0.0
    """Wall time of the step, in seconds, every generation included."""
    structured_output: Any = None
    """With `output_format` in the spec's options: the main thread's structured result (parsed JSON, as
    the CLI gives it in its last result); None otherwise."""
    pings: int = 0
    """Keep-warm requests sent while the coordinator waited on a worker (`Runtime(keep_warm=...)`); their
    tokens are `usage.keep_warm`, their price part of `cost_usd`."""
    unreported: tuple[str, ...] = ()
    """Task ids (as in `SubagentStarted`/`TaskStarted`) of background workers and commands whose end never
    reached the coordinator: the CLI ended, the run stopped waiting on them (`Runtime(worker_timeout=...)`,
    at the end of a step or before a handoff), or the interrupt at the handoff threshold stopped them.
    Any of them makes the step fail (`ok=False`, `error` names them)."""
    cause: StoreError | None = None
    """The store's exception when a store failure ended or spoiled the run (`error` says it in words): a
    `LeaseError` when another runner holds the session or took it over, else a `StoreError` (the store
    unreachable, read-only, entries left undelivered)."""
