"""`StepResult`: what one `Runtime.run()` produced."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ._errors import StoreError
from ._usage import StepUsage

__all__ = ["FailureReason", "StepResult"]


class FailureReason(StrEnum):
    """Why a run failed (`StepResult.reason`): one member for each way, so an app branches on it instead
    of on `StepResult.error`'s words. When several things went wrong, the first one decides, except a
    store failure, which always does (`cause` holds its exception)."""

    API_ERROR = "api_error"
    """The API kept answering with an error (HTTP 429, 500, 529...) past the CLI's retries. Retry the run
    later, or resume `session_id`: the history up to the error is kept."""
    CREDENTIALS_REFUSED = "credentials_refused"
    """The API refused the credentials (HTTP 401 or 403) before answering once. Fix the key or the
    login; retrying as is will not help. (No credentials at all raise `CredentialsError` before the CLI
    starts.)"""
    UNREACHABLE = "unreachable"
    """The API could not be reached before it answered once (DNS, connection refused, TLS); `error`
    quotes the CLI's cause. Check `ANTHROPIC_BASE_URL`, the network or the proxy."""
    CONTEXT_OVERFLOW = "context_overflow"
    """The CLI refused a prompt too long for the model's window, with no handoff to go on with. Give the
    runtime a `HandoffPolicy`, or keep large outputs out of the main thread."""
    TURN_LIMIT = "turn_limit"
    """The CLI stopped at the spec's `max_turns`. Raise it, or resume `session_id` to go on."""
    BUDGET_LIMIT = "budget_limit"
    """The CLI stopped at the spec's `max_budget_usd`. Raise it, or resume `session_id` to go on."""
    INTERRUPTED = "interrupted"
    """The CLI's turn was stopped before it ended (an interrupt, a signal; its `error_during_execution`
    result). Resume `session_id`: the turn's work so far is stored. (A cancelled `run()` raises the
    cancellation instead of returning a result.)"""
    CLI_FAILED = "cli_failed"
    """The CLI process failed: it exited, was killed or crashed, or ended without a result. Look at
    `error` and the logs; resuming `session_id` goes on from what was stored."""
    STALLED = "stalled"
    """The run stopped waiting on background workers after `Runtime(worker_timeout=...)` of silence,
    and ended the CLI with them (`unreported` names them). Raise `worker_timeout` if they were only slow."""
    UNREPORTED = "unreported"
    """Background workers or commands never reported to the coordinator (`unreported` names them): the
    CLI ended first, or a handoff or its interrupt stopped them. Their work may be missing from `text`."""
    HANDOFF_FAILED = "handoff_failed"
    """A brake: two handoffs in a row could not be written by the session (too little room left at the
    threshold). Raise `HandoffPolicy.reserve`, or delegate and spill more."""
    GENERATION_LIMIT = "generation_limit"
    """A brake: one more handoff would pass `HandoffPolicy.max_generations`. Resume `session_id` to go
    on, split the task into steps, or give each session more room (`window`, `reserve`)."""
    NO_STRUCTURED_OUTPUT = "no_structured_output"
    """The spec's `output_format` asked for a structured result and the main thread gave none that
    passed the schema. Retry, or make the prompt ask for it."""
    STORE = "store"
    """The session store failed: unreachable, read-only, a session it cannot load or find, entries left
    undelivered in the outbox (delivered at the next run in the workspace). `cause` holds the
    `StoreError` when there is one."""
    LEASE = "lease"
    """Another runner holds the session past `lease_timeout`, or took it over mid-run (`cause` is the
    `LeaseError`, naming the holder). Wait for it, or resume elsewhere."""


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
    reason: FailureReason | None = None
    """Why it failed, for code: set whenever `error` is, None when `ok`."""
    cost_usd: float = 0.0
    """The step's estimated cost in US dollars, subagents included: `usage` priced per model by flower's
    cost model (`flower._cost`), the same one `flower report`, the demo and the benchmarks use. An estimate:
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
