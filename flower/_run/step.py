"""One step of a Runtime: generations of sessions linked by handoffs, with two brakes."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

import anyio
from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKError, CLINotFoundError, ResultMessage

from .._cost import DEFAULT_MODEL, price
from .._errors import FlowerError, WorkbenchError
from .._handoff.document import Handoff, HandoffPolicy, degraded_handoff, parse_handoff, save_handoff
from .._result import FailureReason, StepResult
from .._usage import StepUsage
from .._workbench._in_run import warning_of
from .._workbench.bench import Workbench
from ..events import ApiError, HandoffDone, WorkbenchWarning
from .course import OVERFLOW_REASONS, Outcome
from .generation import Keeper, run_generation
from .reach import unreachable_cause
from .settle import DEFAULT_WORKER_TIMEOUT
from .stream import Tracker

logger = logging.getLogger("flower.runtime")

_ABANDONED: dict[str, str] = {
    "done": "flower: the CLI ended before this task reported",
    "handoff": "flower: the session handed off before this task reported",
    "overflow": "flower: the session overflowed before this task reported",
    "unreachable": "flower: the API could not be reached before this task reported",
    "stalled": "flower: never reported; the run stopped waiting ({why}) and ended the CLI with it",
}
"""What a task still open at the end of a session became, by how the session ended (its event's summary)."""

Phase = Literal["as_spec", "inline", "coordinator"]
"""Which session of the spec comes next: as the spec says; a coordinator's inline session (the first session
of a new run of `coordinator(inline_until=...)`, `build_options(inline_session=True)`); or that coordinator
with the strict wall (the session an inline session hands off to)."""

OptionsFor = Callable[[str | None, bool, Phase], Awaitable[ClaudeAgentOptions]]
"""(resume, fork, phase) -> the options of the next session (the Runtime refreshes the workbench block)."""


@dataclass
class Step:
    """Runs a prompt to its end across as many generations as handoffs need, then makes the StepResult."""

    task: str
    tracker: Tracker
    policy: HandoffPolicy | None
    workbench: Workbench | None
    retired: list[str] = field(default_factory=list)
    degraded_in_a_row: int = 0
    error: str | None = None
    reason: FailureReason | None = None  # set with `error`
    structured: bool = False  # the options ask for a structured result (`output_format`)
    keeper: Keeper | None = (
        None  # keeps each session's coordinator cache warm while it waits (`flower._warm`)
    )
    worker_timeout: float = DEFAULT_WORKER_TIMEOUT  # the hang guard of a wait on background workers
    lost: list[str] = field(default_factory=list)  # why a handoff went ahead with workers still out
    inline_until: int | None = None
    """A coordinator's `inline_until` when the step can hand off: a new run starts in the inline session,
    which hands off to the coordinator, strict, at that size; the successor of a coordinator's own handoff
    is the spec's session (hands-on while small, as its wall judges)."""
    resumes_inline: bool = False
    """The session resumed is an inline session (`inline_until`): it goes on as one, and hands off at that
    size; any other resumed session is the spec's, its wall judging the size (`flower._wall._inline`)."""

    async def run(self, prompt: str, options_for: OptionsFor, resume: str | None, fork: bool) -> None:
        generation = 1
        inline = self.inline_until is not None and self._active
        phase: Phase = "inline" if inline and (not resume or self.resumes_inline) else "as_spec"
        while True:
            options = await options_for(resume, fork, phase)
            self.structured = options.output_format is not None
            until = self.inline_until if phase == "inline" else None
            try:
                outcome = await run_generation(
                    options, prompt, self.tracker, self.policy, self.keeper, self.worker_timeout, until
                )
            except CLINotFoundError:
                raise
            except ClaudeSDKError as exc:
                self.error = f"{type(exc).__name__}: {exc}"
                self.reason = FailureReason.CLI_FAILED
                return
            except RuntimeError as exc:  # the SDK wraps a store's failure to load a resumed session
                failure = _store_failure(exc)
                if failure is None:
                    raise
                self.error = f"the session could not be loaded from the session store: {failure}"
                self.reason = FailureReason.STORE
                return
            await self.tracker.flush()
            why = _ABANDONED[outcome.kind].format(why=outcome.why)
            if outcome.lost:  # the wait before the handoff ran past its guard
                why = f"{why}; the run stopped waiting for it: {outcome.lost}"
                self.lost.append(outcome.lost)
            await self.tracker.abandon(why)
            if outcome.kind == "stalled":
                self.error = f"the run stopped waiting: {outcome.why}"
                self.reason = FailureReason.STALLED
                logger.warning("%s", self.error)
                return
            if outcome.kind == "unreachable":
                await self._unreachable(options)
                return
            if outcome.kind == "done" or (outcome.kind == "overflow" and not self._active):
                return
            handoff = await self._document(outcome)
            generation += 1
            path, warning = await anyio.to_thread.run_sync(self._save, handoff, generation)
            if warning is not None:
                await self.tracker.emit(warning)
            if outcome.session_id:
                self.retired.append(outcome.session_id)
            document = handoff.render()
            await self.tracker.emit(
                HandoffDone(
                    generation=generation,
                    retired=outcome.session_id or "",
                    reason=handoff.reason,
                    degraded=handoff.degraded,
                    context=outcome.context,
                    path=str(path) if path else None,
                    document=document,
                )
            )
            if self._braked(outcome, handoff, path, generation):
                return
            assert self.policy is not None
            shown = f"`{path}`" if path else "(not saved: this runtime has no workbench)"
            prompt = self.policy.takeover.format(generation=generation - 1, path=shown, document=document)
            resume, fork = None, False
            # the inline session's successor is the coordinator, strict; a coordinator's is the spec's
            # own session, which works hands-on while it is small, as the wall judges (`_wall._inline`)
            phase = "coordinator" if phase == "inline" else "as_spec"
            self.tracker.texts.clear()
            self.tracker.calls.clear()
            self.tracker.reports.clear()

    async def _unreachable(self, options: ClaudeAgentOptions) -> None:
        tracker = self.tracker
        status = tracker.unreachable_status
        self.error = await unreachable_cause(options, tracker.session_id, status)
        refused = status in (401, 403)
        self.reason = FailureReason.CREDENTIALS_REFUSED if refused else FailureReason.UNREACHABLE
        logger.warning("%s", self.error)
        await tracker.emit(ApiError(agent=None, message=self.error, status=status, retrying=False))

    @property
    def _active(self) -> bool:
        return self.policy is not None and self.policy.enabled

    async def _document(self, outcome: Outcome) -> Handoff:
        parsed = parse_handoff(outcome.document) if outcome.kind == "handoff" else None
        if parsed is not None:
            self.degraded_in_a_row = 0
            return parsed
        self.degraded_in_a_row += 1
        why = outcome.why or "its reply had no 'Doing now' or 'Next step' section"
        reason: Literal["threshold", "overflow"] = "overflow" if outcome.kind == "overflow" else "threshold"
        return degraded_handoff(
            why=why,
            task=self.task,
            texts=self.tracker.texts,
            calls=self.tracker.calls,
            reason=reason,
            reports=self.tracker.reports,
        )

    def _save(self, handoff: Handoff, generation: int) -> tuple[str | None, WorkbenchWarning | None]:
        if self.workbench is None:
            return None, None
        try:
            self.workbench.ensure()
            return str(save_handoff(self.workbench.notes, handoff.render(), generation=generation)), None
        except WorkbenchError as exc:  # the document still reaches the next generation, in its prompt
            return None, warning_of(exc, "the handoff document goes to the next session unsaved")

    def _braked(self, outcome: Outcome, handoff: Handoff, path: str | None, generation: int) -> bool:
        assert self.policy is not None
        where = f" The last handoff document is at {path}." if path else ""
        if self.degraded_in_a_row >= 2:
            self.error = (
                f"stopped: two handoffs in a row could not be written by the session ({outcome.why}). The "
                f"threshold ({outcome.threshold:,} of a {outcome.window:,}-token window) leaves too little "
                "room for the handoff turn: raise HandoffPolicy.reserve, or keep large outputs out of the "
                f"main thread (delegate, spill).{where}"
            )
            self.reason = FailureReason.HANDOFF_FAILED
            return True
        if generation > self.policy.max_generations:
            self.error = (
                f"stopped: generation {generation} would exceed HandoffPolicy.max_generations="
                f"{self.policy.max_generations} in one step. A fresh session starts at about "
                f"{outcome.floor:,} tokens and hands off at {outcome.threshold:,}: if that gap is small, "
                "raise HandoffPolicy.window or lower reserve; if the task is simply long, split it into "
                f"steps or resume the last session to go on.{where}"
            )
            self.reason = FailureReason.GENERATION_LIMIT
            return True
        return False

    def result(self, duration: float) -> StepResult:
        tracker = self.tracker
        last = tracker.results[-1] if tracker.results else None
        answers = [r for r in tracker.answers if not r.is_error and r.result]
        error, reason = self.error, self.reason
        if error is None and last is not None and last.is_error:
            error = last.result or f"the CLI ended with an error result ({last.subtype})"
            reason = _result_reason(last)
        if error is None and last is None:
            error, reason = "the CLI ended without a result", FailureReason.CLI_FAILED
        if tracker.unreported:
            which = "; ".join(tracker.unreported.values())
            lost = f"{len(tracker.unreported)} worker(s) or command(s) never reported to the coordinator: "
            lost += which
            if self.lost:
                lost += f" (a handoff stopped waiting for them: {'; '.join(self.lost)})"
            error = lost if error is None else f"{error}; {lost}"
            reason = reason or FailureReason.UNREPORTED
        structured = next(
            (r.structured_output for r in reversed(tracker.answers) if r.structured_output is not None), None
        )
        if error is None and self.structured and structured is None:
            # measured (CLI 2.1.332): a model that never calls StructuredOutput gets one reminder, then
            # the CLI ends with subtype "success" and no structured output
            error = (
                "the main thread ended without the structured result its output_format asks for (the "
                "StructuredOutput tool was not called, or no call passed the schema)"
            )
            reason = FailureReason.NO_STRUCTURED_OUTPUT
        usage = tracker.usage.usage()
        return StepResult(
            session_id=tracker.session_id,
            ok=error is None,
            text=(answers[-1].result or "") if answers else "",
            error=error,
            reason=reason if error is not None else None,
            cost_usd=_cost(usage),
            cli_cost_usd=_cli_cost(tracker.results) + sum(p.cli_cost_usd for p in tracker.pings),
            usage=usage,
            num_turns=sum(r.num_turns for r in tracker.results),
            results=len(tracker.answers),
            retired=tuple(self.retired),
            peak_context=tracker.peak_context,
            denials=tuple(tracker.denials),
            duration_s=duration,
            structured_output=structured,
            pings=len(tracker.pings),
            unreported=tuple(tracker.unreported),
        )


_SUBTYPES = {
    "error_max_turns": FailureReason.TURN_LIMIT,
    "error_max_budget_usd": FailureReason.BUDGET_LIMIT,
    "error_during_execution": FailureReason.INTERRUPTED,
    "error_max_structured_output_retries": FailureReason.NO_STRUCTURED_OUTPUT,
}
"""The reason of an error result, by its subtype (an API error's subtype is "success")."""


def _result_reason(last: ResultMessage) -> FailureReason:
    """Why the CLI's last result is an error: a prompt too long, a limit, an interrupt, else the API."""
    if last.terminal_reason in OVERFLOW_REASONS:
        return FailureReason.CONTEXT_OVERFLOW
    return _SUBTYPES.get(last.subtype, FailureReason.API_ERROR)


def _store_failure(exc: BaseException) -> BaseException | None:
    """The store's own error (a `FlowerError`) or timeout behind an exception the SDK raised, if any."""
    seen: BaseException | None = exc.__cause__
    while seen is not None:
        if isinstance(seen, FlowerError | TimeoutError):
            return seen
        seen = seen.__cause__
    return None


def _cost(usage: StepUsage) -> float:
    """The step's cost: the one place `StepResult.cost_usd` is computed, with flower's cost model.

    Each model's tokens (`StepUsage.by_model`, subagents included) are priced at that model's row of
    `flower._cost.PRICES`; the main thread's 1-hour cache writes at the 1-hour rate (its usage splits
    them), every other write at the 5-minute rate. A CLI that reports no per-model usage leaves the main
    thread's tokens (and the keep-warm pings'), priced like the CLI's default model.
    """
    if usage.by_model:
        return sum(price([used], model=name).total for name, used in usage.by_model.items())
    return price([usage.main, usage.keep_warm], model=DEFAULT_MODEL).total


def _cli_cost(results: list[ResultMessage]) -> float:
    """The CLI's own figure: `total_cost_usd` is cumulative within a session (measured), so the last of
    each session, summed."""
    per_session: dict[str, float] = {}
    for result in results:
        per_session[result.session_id] = max(
            per_session.get(result.session_id, 0.0), result.total_cost_usd or 0.0
        )
    return sum(per_session.values())
