"""One run of a spec, from its lease to its `StepResult`: the body behind `Runtime.run` and `stream`.

`Runtime` keeps the settings and what outlives a run (the store, the workbench, the block each session's
system prompt holds, the runs waiting for a store report). An `Execution` is one run: it opens the durable
run (the outbox and the leases, `durable.py`), starts its trace, gives each session of the step its
options (a new session's id chosen and leased before the CLI starts), and turns what happened into a
`StepResult`, failed with the cause when the store spoiled the run.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import anyio
from claude_agent_sdk import ClaudeAgentOptions

from .._agents import AgentSpec
from .._handoff.document import HandoffPolicy
from .._result import StepResult
from .._wall.rules import coordinator_rules
from .._warm import KeepWarm, KeepWarmPolicy
from .._warm.records import RECORDS
from .._workbench._in_run import block_or_warning, preface_or_warning
from .._workbench.bench import Workbench
from ..stores import PruningSessionStore
from ..stores._local import CONFIG_ENV, config_dir
from ..stores._outbox import DeliveryPolicy
from ..tracing._hook import start_run
from ..tracing._tracing_policy import TracingPolicy
from .credentials import require_credentials
from .durable import DurableRun
from .generation import Keeper
from .layer_setup import spill_dir
from .session_holds import attach_workbench
from .settle import DEFAULT_WORKER_TIMEOUT
from .step import Phase, Step
from .stream import EventHandler, Tracker

if TYPE_CHECKING:  # OpenTelemetry is imported only when a run is traced
    from ..tracing._live import LiveRun

__all__ = ["Execution"]

logger = logging.getLogger("flower.runtime")


class OptionsFor(Protocol):
    """`Runtime.options`: the SDK options of one session of `spec`."""

    def __call__(
        self,
        spec: AgentSpec,
        *,
        resume: str | None = None,
        fork: bool = False,
        block: str | None = None,
        inline_session: bool = False,
    ) -> ClaudeAgentOptions: ...


def strict(spec: AgentSpec) -> AgentSpec:
    """A coordinator with `inline_until` as the strict coordinator its inline session hands off to: no
    `inline_until`, and the strict wall's rules in place of the rules `coordinator()` wrote for it (rules
    of the user's own are kept)."""
    if spec.inline_until is None:
        return spec
    written = coordinator_rules(spec.own_steps, spec.inline_until)
    rules = coordinator_rules(spec.own_steps) if spec.rules == written else spec.rules
    return dataclasses.replace(spec, inline_until=None, rules=rules)


@dataclass(kw_only=True)
class Execution:
    """One run of `spec` in `workspace` with a runtime's settings; `await execution(...)` runs it."""

    spec: AgentSpec
    workspace: Path
    store: PruningSessionStore
    workbench: Workbench | None
    handoff: HandoffPolicy | None
    lease_timeout: float
    delivery: DeliveryPolicy
    tracing: TracingPolicy | None
    env: Mapping[str, str]
    check_credentials: bool
    options: OptionsFor
    blocks: dict[str, str]
    """session id -> the workbench block its system prompt holds (the runtime's, kept across runs)."""
    listening: dict[str, Tracker]
    """resumed session id -> the run that resumes it (the runtime's: store reports find their run)."""
    inline_sessions: set[str]
    """The inline sessions the runtime started (`inline_until`): a resumed one is an inline session again
    (the CLI keeps the system prompt a session started with), any other is the coordinator's."""
    keep_warm: KeepWarmPolicy | None = None
    """How a waiting coordinator's cache is kept warm (`flower._warm`), or None."""
    worker_timeout: float = DEFAULT_WORKER_TIMEOUT
    """Seconds of silence from the CLI a wait on background workers goes through (`flower._run.settle`)."""

    async def __call__(
        self, prompt: str, resume: str | None, fork: bool, on_event: EventHandler | None
    ) -> StepResult:
        """The run: its sessions leased and made durable around it, its result logged."""
        attach_workbench(self.store, self.workspace, spill_dir(self.workbench, self.workspace).parent)
        live = await start_run(self.tracing, self.spec.name, self.store, self.env)
        tracker = Tracker(live.listen(on_event) if live is not None else on_event)
        step = Step(
            task=prompt,
            tracker=tracker,
            policy=self.handoff,
            workbench=self.workbench,
            worker_timeout=self.worker_timeout,
            inline_until=self.spec.inline_until,
            resumes_inline=resume in self.inline_sessions if resume else False,
        )
        if self.keep_warm is not None:
            step.keeper = self._keeper(self.keep_warm, tracker)
        durable = DurableRun(
            self.store, self.workspace, tracker, lease_timeout=self.lease_timeout, policy=self.delivery
        )
        started = time.monotonic()
        try:
            await durable.open()  # what earlier runs here left is delivered first
            # leased (unless forked) and its files restored before the preface reads the index
            if not resume or await durable.hold(resume, lease=not fork):
                await durable.run(lambda: self._loop(prompt, resume, fork, step, durable, live))
        except BaseException as exc:
            if live is not None:
                live.abandon(f"{type(exc).__name__}: {exc}")
            raise
        finally:
            await durable.close()  # after the drain: the records end, the leases go
        result = durable.outcome(step.result(time.monotonic() - started), resume)
        logger.info(
            "run of %s ended: ok=%s session=%s turns=%d cost=$%.4f in %.1f s%s",
            self.spec.name,
            result.ok,
            result.session_id,
            result.num_turns,
            result.cost_usd,
            result.duration_s,
            f" ({result.error})" if result.error else "",
        )
        if live is not None:
            await live.finish(result, tracker.emit)
        return result

    def _keeper(self, policy: KeepWarmPolicy, tracker: Tracker) -> Keeper:
        """Each session's `KeepWarm`: its pings go to the tracker (events, usage) and to the records
        `flower report` reads beside the store."""
        records = spill_dir(self.workbench, self.workspace).parent / RECORDS
        return lambda options: KeepWarm(options, policy=policy, on_ping=tracker.ping, records=records)

    async def _loop(
        self,
        prompt: str,
        resume: str | None,
        fork: bool,
        step: Step,
        durable: DurableRun,
        live: LiveRun | None,
    ) -> None:
        """The run loop: events go to the step's tracker."""
        tracker = step.tracker
        if resume and self.workbench is not None:
            # a resumed session keeps the system prompt it started with (measured): a changed index goes
            # in front of the prompt instead, only when it changed
            since = self.blocks.get(resume)
            prompt, warning = await anyio.to_thread.run_sync(
                preface_or_warning, self.workbench, prompt, since
            )
            if warning is not None:
                await tracker.emit(warning)
            step.task = prompt
        blocks: list[str] = []

        async def options_for(resume_now: str | None, fork_now: bool, phase: Phase) -> ClaudeAgentOptions:
            # the refresh before each session: a new session gets the current index in its system prompt;
            # a workbench that cannot be used is a warning, and this session goes without the index
            block, warning = await anyio.to_thread.run_sync(block_or_warning, self.workbench)
            if warning is not None:
                await tracker.emit(warning)
            spec = strict(self.spec) if phase == "coordinator" else self.spec
            options = self.options(
                spec, resume=resume_now, fork=fork_now, block=block or "", inline_session=phase == "inline"
            )
            # a session that predates the store is imported from where this CLI keeps its transcripts
            self.store.config_dir = options.env.get(CONFIG_ENV) or None
            if self.check_credentials:
                require_credentials(options.env)
            cli_config = str(config_dir(options.env))
            if not resume_now or fork_now:
                # a new session: its id is chosen and leased here, before anyone could resume it
                session_id = await durable.new_session(options.session_id)
                options = dataclasses.replace(options, session_id=session_id)
                if phase == "inline":
                    self.inline_sessions.add(session_id)
                fork_of = resume_now if fork_now else None
                await durable.started(session_id, resumed=False, fork_of=fork_of, config_dir=cli_config)
            else:
                await durable.started(resume_now, resumed=True, fork_of=None, config_dir=cli_config)
            if block is not None:
                blocks.append(block)
            return options

        if resume:
            self.listening[resume] = tracker
        try:
            with live.current() if live is not None else nullcontext():
                await step.run(prompt, options_for, resume, fork)
        finally:
            if resume:
                self.listening.pop(resume, None)
        if tracker.session_id and blocks:
            # the freshest block this session has seen: in its system prompt, or put before its prompt
            self.blocks[tracker.session_id] = blocks[-1]
