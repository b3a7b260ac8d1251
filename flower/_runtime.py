"""`Runtime`: owns a workspace, compiles a spec, runs it through the CLI and reports a `StepResult`.

Example::

    rt = Runtime(workspace="repo")
    result = await rt.run(lead, "Start.", on_event=print)
    if result.ok:
        print(result.text)

It iterates the CLI's stream to its very end: with background subagents one run yields several results,
and the run is finished only when none is pending and the coordinator has read every report (a worker
that ends during the coordinator's turn is reported to it in a turn of its own, after that turn's
result). Whatever ends the run (success, an error result, an exception in the caller, a cancellation),
the CLI process is shut down before `run()` returns or raises.

The store's connections are closed when the last run in progress ends (they reopen at the next one), and
by `aclose()` or the end of an `async with Runtime(...) as rt:` block; a SQLite connection left open
anyway is closed with its store or at exit.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Self

import anyio
from claude_agent_sdk import (
    ClaudeAgentOptions,
)
from claude_agent_sdk.types import SessionStore

from ._agents import AgentSpec
from ._errors import SpecError
from ._handoff.compact import CompactPolicy
from ._handoff.document import HandoffPolicy
from ._options import build_options
from ._result import StepResult
from ._run.execute import Execution
from ._run.layer_setup import (
    check_inner_store,
    check_keep_denials,
    check_report_limit,
    check_spill,
    check_store,
    check_workbench,
    layer_hooks,
    layer_store,
)
from ._run.session_holds import release_loop
from ._run.settle import DEFAULT_WORKER_TIMEOUT, STATE_ENV, check_worker_timeout
from ._run.stream import EventHandler, Tracker
from ._run.sync import run_blocking
from ._run_stream import RunStream
from ._spill._chain import chain_spill
from ._spill.spill_policy import SpillPolicy
from ._util.check import checked
from ._warm.keep_warm_policy import KeepWarmPolicy, resolve_keep_warm
from ._workbench.bench import Workbench
from .events import StoreReport
from .stores import EphemeralPolicy, LoadReport, TrimPolicy
from .stores._outbox import DeliveryPolicy
from .tracing._tracing_policy import TracingPolicy, cli_env, resolve_tracing

__all__ = ["Runtime"]

logger = logging.getLogger("flower.runtime")

Configure = Callable[[ClaudeAgentOptions], ClaudeAgentOptions]


class Runtime:
    """Runs agent specs in one workspace.

    - `workspace`: the directory the agents work in (the CLI's `cwd`); it must exist.
    - `workbench`: `True` for `<workspace>/.flower` (layer 2), a `Workbench` of your own, or `False`.
      Its index is refreshed before each step and given to the main thread in its system prompt.
    - `spill_threshold`: tool outputs with a string field this long go to the workbench's `spill/`
      (layer 3); `None` or `0` installs nothing; a `SpillPolicy` sets the preview and the rest.
    - `report_limit`: a worker's report this long or longer is saved under the workbench's
      `artifacts/reports/` and the coordinator gets its head and the path (`report_cut`; a background
      worker is asked once for a short one instead: `report_guard`); `None` or `0`: reports reach the
      main thread whole.
    - `handoff`: before the main thread's context reaches the CLI's limits, the session writes a handoff
      document and a fresh session continues from it (`HandoffPolicy`); the CLI's auto-compaction is then
      off unless the spec sets `compact`. `False` leaves compaction to the CLI.
    - `trim`, `ephemeral`, `keep_denials`: what layer 4 rewrites when a session is resumed (large results
      to files: off; stale command results: expired, 6 kept; denied calls: 1 kept). The store is always a
      `PruningSessionStore` (`self.store`); `store` is what it wraps: any `SessionStore` but a flower
      layer (`SpecError`: pass its `.inner`), a SQLite path (default `<workspace>/.flower/sessions.db`)
      or a `postgresql://` DSN (a fleet's shared store, with the workbench's files). Nothing stored is
      ever modified; a session that predates the store is imported at its first resume.
    - `lease_timeout`: every session a run resumes or starts is leased in the store for the run (see
      `lease_session`); a session another runner holds is waited for this many seconds (default: not at
      all), then the run fails (`ok=False`) with the `LeaseError` naming the holder as its `cause`. A
      Postgres store also carries the workbench's files, restored before a resume on another machine.
    - `delivery`: every transcript line goes to the workspace's outbox as the CLI writes it, and on to
      the store within about a second, in order and exactly once; while the store is unreachable the
      run goes on and `StoreWarning` events say so (`DeliveryPolicy`: backoff, and how long the end of a
      run waits for the store). See docs/fleet.md, Durability.
    - `env`: extra environment for the CLI.
    - `configure`: a last word on the SDK options of every session, e.g. `ScriptedModel.attach` to run
      offline against flower's scripted model.
    - `check_credentials`: fail fast with `CredentialsError` when the CLI has no key, token or login.
    - `tracing`: OpenTelemetry spans and metrics of each run (`flower.tracing`): `True`, a
      `TracingPolicy`, `False`, or None (the default) to follow the standard `OTEL_*` variables.
    - `keep_warm`: a coordinator's prompt cache gets 5-minute marks, and while it waits on a worker a
      keep-warm request about every 270 s reads its prefix for one output token (`KeepWarmPolicy`; a
      `KeepWarmPolicy` sets the interval and the limit); priced in `StepResult.cost_usd`. `False`: 1-hour
      marks and no pings. A prompt-cache variable the user set (`env`, the spec's env, the process env)
      wins over both lifetimes; the pings then follow the lifetime the CLI's marks ask for.
    - `worker_timeout`: a run waits for the background workers (and commands) it started, and for the
      coordinator to read their reports, however long they work; once the coordinator's turn has ended,
      a CLI that sends nothing for this many seconds (default 1800; None: no limit) is given up on:
      the CLI is ended, and the step fails naming the workers that never reported (`unreported`).

    The constructor checks that the workspace is a directory (`SpecError` naming it) and creates nothing;
    the workbench and the store are created by the first run.
    """

    @checked
    def __init__(
        self,
        workspace: str | os.PathLike[str],
        *,
        workbench: bool | Workbench = True,
        spill_threshold: int | SpillPolicy | None = 4000,
        report_limit: int | None = 4000,
        handoff: bool | HandoffPolicy = True,
        trim: bool | TrimPolicy = False,
        ephemeral: bool | EphemeralPolicy = True,
        keep_denials: int = 1,
        store: SessionStore | str | os.PathLike[str] | None = None,
        lease_timeout: float = 0.0,
        delivery: DeliveryPolicy | None = None,
        env: Mapping[str, str] | None = None,
        configure: Configure | None = None,
        check_credentials: bool = True,
        tracing: bool | TracingPolicy | None = None,
        keep_warm: bool | KeepWarmPolicy = True,
        worker_timeout: float | None = DEFAULT_WORKER_TIMEOUT,
    ) -> None:
        if not os.fspath(workspace):
            raise SpecError("Runtime: workspace must be a path, got ''")
        self.workspace = Path(workspace).expanduser().absolute()
        """The directory the agents work in (absolute; the CLI's `cwd`)."""
        self._check_workspace()  # a cheap stat: a wrong path is refused here, not when the run starts
        self.workbench: Workbench | None = check_workbench(workbench, self.workspace)
        """Layer 2: the workbench (`<workspace>/.flower` by default), or None when off."""
        self.spill: SpillPolicy = check_spill(spill_threshold, "Runtime")
        """Layer 3: what `spill_guard` spills (`spill.enabled` is False when it is off)."""
        self.report_limit: int | None = check_report_limit(report_limit, "Runtime")
        """The length at which a worker's report is sent back for a short one, or None."""
        policy = handoff if isinstance(handoff, HandoffPolicy) else HandoffPolicy() if handoff else None
        self.handoff: HandoffPolicy | None = policy if policy is not None and policy.enabled else None
        """When the main thread hands off, or None when handoff is off (the CLI then compacts)."""
        check_keep_denials(keep_denials, "Runtime")
        check_store(store, "Runtime")
        check_inner_store(store, "Runtime", "store")
        self.store = layer_store(
            store,
            self.workspace,
            self.workbench,
            keep_denials=keep_denials,
            ephemeral=ephemeral,
            trim=trim,
            on_report=self._on_report,
        )
        """Layer 4: every session's transcript, rewritten on resume."""
        if lease_timeout < 0:  # its type is `@checked`'s (`check_timeout` serves the unchecked lease calls)
            raise SpecError(f"Runtime: lease_timeout must be a number of seconds >= 0, got {lease_timeout!r}")
        self.lease_timeout = float(lease_timeout)
        """Seconds a run waits for a session another runner holds (0: it does not wait)."""
        self.delivery: DeliveryPolicy = delivery or DeliveryPolicy()
        """How the runs' transcript entries reach the store through the outbox."""
        self._listening: dict[str, Tracker] = {}  # resumed session id -> the run that resumes it
        self._blocks: dict[str, str] = {}  # session id -> the workbench block its system prompt holds
        self._inline: set[str] = set()  # the inline sessions this runtime started (`inline_until`)
        self.env: dict[str, str] = dict(env or {})
        """Extra environment for the CLI."""
        self.configure = configure
        """The last word on each session's SDK options (e.g. `ScriptedModel.attach`), or None."""
        self.check_credentials = check_credentials
        """Whether `run()` fails fast with `CredentialsError` when the CLI has no credentials."""
        self.results: list[StepResult] = []
        """Every StepResult this runtime returned, in order."""
        self.tracing: TracingPolicy | None = resolve_tracing(tracing, "Runtime")
        """What each run sends to OpenTelemetry, or None when tracing is off."""
        self.keep_warm: KeepWarmPolicy | None = resolve_keep_warm(keep_warm)
        """How a waiting coordinator's cache is kept warm, or None (1-hour marks, no pings)."""
        self.worker_timeout: float = check_worker_timeout(worker_timeout, "Runtime")
        """Seconds of silence from the CLI a run waits through for its background workers (`math.inf`
        when `worker_timeout=None`)."""
        self._active = 0  # runs in progress: the last one to end closes the store's connections

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the store's connections (a SQLite file's, a PostgreSQL pool); a later run reopens them.

        A run already does this when it ends and no other run of this runtime is in progress; call it (or
        use `async with Runtime(...) as rt:`) after using `rt.store` yourself. Never raises: a store that
        fails to close is logged.
        """
        with anyio.CancelScope(shield=True):
            try:
                await release_loop(self.store)
            except Exception as exc:  # closing must not turn a finished run into a failure
                logger.warning("flower: closing the store %r failed: %s", self.store.inner, exc)

    def _check_workspace(self) -> Path:
        if not self.workspace.exists():
            raise SpecError(
                f"Runtime: workspace {self.workspace} does not exist: create it, or give the directory the "
                "agents should work in"
            )
        if not self.workspace.is_dir():
            raise SpecError(f"Runtime: workspace {self.workspace} is not a directory")
        return self.workspace.resolve()

    @checked
    def options(
        self,
        spec: AgentSpec,
        *,
        resume: str | None = None,
        fork: bool = False,
        block: str | None = None,
        inline_session: bool = False,
    ) -> ClaudeAgentOptions:
        """The SDK options `run()` would use for `spec` (useful to inspect or to run them yourself).

        `block` is the workbench block for the system prompt; by default it is computed now (which raises
        `WorkbenchError` when the workbench cannot be written; `run()` goes on without the block instead).
        `inline_session`: the options of the inline session a coordinator with `inline_until` starts a new
        run with, while this runtime hands off (`build_options(inline_session=True)`).
        """
        workspace = self._check_workspace()
        wb = self.workbench
        if wb is not None and block is None:
            block = wb.prompt_block()
        # an app hook that rewrites outputs runs before the spill, never racing it (see _spill_chain)
        layers = layer_hooks(wb, workspace, self.spill, self.report_limit)
        layers, own_hooks = chain_spill(layers, spec.hooks, self.spill)
        options = build_options(
            dataclasses.replace(spec, hooks=own_hooks),
            cwd=workspace,
            artifacts=wb.artifacts if wb is not None else None,
            resume=resume,
            fork=fork,
            hooks=layers,
            compact=CompactPolicy(mode="no_summary") if self.handoff is not None else None,
            session_store=self.store,
            env={**cli_env(self.tracing), **self.env},
            append=block or "",
            cache_ttl="5m" if self.keep_warm is not None else "1h",
            inline_session=inline_session,
        )
        # every transcript line is handed to the store as the CLI writes it, not at the end of the turn
        options = dataclasses.replace(options, session_store_flush="eager")
        if STATE_ENV not in options.env:  # the CLI says when no turn is owed any more (`_run.settle`)
            options = dataclasses.replace(options, env={**options.env, STATE_ENV: "1"})
        if wb is not None and not wb.inside_workspace:
            options = dataclasses.replace(options, add_dirs=[*options.add_dirs, wb.root])
        if self.configure is not None:
            options = self.configure(options)
            if not isinstance(options, ClaudeAgentOptions):
                raise SpecError(
                    f"Runtime: configure returned {type(options).__name__}, not ClaudeAgentOptions"
                )
        return options

    @checked
    async def run(
        self,
        spec: AgentSpec,
        prompt: str,
        *,
        resume: str | None = None,
        fork: bool = False,
        on_event: EventHandler | None = None,
    ) -> StepResult:
        """Run `spec` on `prompt` (or continue session `resume`) until the CLI is done.

        Failures of the run itself (API errors after retries, a crashed CLI, an API it cannot reach) come
        back as `StepResult(ok=False, error=..., reason=...)` (`reason`, a `FailureReason`, for code to
        branch on), and so does every failure of the store, with the exception as `cause`: a session
        another runner holds past `lease_timeout` or takes over mid-run (`LeaseError`), a store that
        cannot be reached or written at the start, at a resume or at the end (entries left in the
        outbox, with their count); a workbench that cannot be written is a `WorkbenchWarning` event,
        and the run goes on without its index; invalid arguments raise `SpecError`; a missing CLI
        raises the SDK's `CLINotFoundError`; cancellation propagates, after the CLI is shut down. The
        session's id comes first, as a `SessionStarted` event.
        """
        self._check_run(prompt, resume, "run")
        return await self._counted(spec, prompt, resume, fork, on_event)

    @checked
    def stream(
        self, spec: AgentSpec, prompt: str, *, resume: str | None = None, fork: bool = False
    ) -> RunStream:
        """Run `spec` on `prompt` as `run()` does, as an async iterator of its events.

        Returns at once; the run starts when the iteration does. `stream.result` holds the
        `StepResult` once the iteration has ended. Leaving the loop early ends the run and shuts the
        CLI down. Example::

            stream = rt.stream(lead, "Start.")
            async for event in stream:
                print(event)
            print(stream.result.text)
        """
        self._check_run(prompt, resume, "stream")
        return RunStream(lambda emit: self._counted(spec, prompt, resume, fork, emit))

    def _check_run(self, prompt: str, resume: str | None, method: str) -> None:
        """What the types of `run()` and `stream()` cannot say (`@checked` refuses a wrong type)."""
        if not prompt.strip():
            raise SpecError(f"Runtime.{method}: prompt must be a non-empty string")
        if resume is not None and not resume.strip():
            raise SpecError(f"Runtime.{method}: resume must be a session id (a str), got {resume!r}")

    async def _counted(
        self, spec: AgentSpec, prompt: str, resume: str | None, fork: bool, on_event: EventHandler | None
    ) -> StepResult:
        """`_execute`, counted: when the last run in progress ends, the store's connections close."""
        self._active += 1
        try:
            return await self._execute(spec, prompt, resume, fork, on_event)
        finally:
            self._active -= 1
            if not self._active:
                await self.aclose()

    async def _execute(
        self, spec: AgentSpec, prompt: str, resume: str | None, fork: bool, on_event: EventHandler | None
    ) -> StepResult:
        """The one run behind `run()` and `stream()` (`flower._run.execute`), its result kept."""
        execution = Execution(
            spec=spec,
            workspace=self._check_workspace(),
            store=self.store,
            workbench=self.workbench,
            handoff=self.handoff,
            lease_timeout=self.lease_timeout,
            delivery=self.delivery,
            tracing=self.tracing,
            env=self.env,
            check_credentials=self.check_credentials,
            options=self.options,
            blocks=self._blocks,
            inline_sessions=self._inline,
            listening=self._listening,
            keep_warm=self.keep_warm,
            worker_timeout=self.worker_timeout,
        )
        result = await execution(prompt, resume, fork, on_event)
        self.results.append(result)
        return result

    def _on_report(self, report: LoadReport) -> None:
        """The store rewrote a history for a resume: tell the run that resumes it."""
        tracker = self._listening.get(report.session_id)
        if tracker is not None:
            tracker.later(StoreReport(report=report))

    @checked
    def run_sync(
        self,
        spec: AgentSpec,
        prompt: str,
        *,
        resume: str | None = None,
        fork: bool = False,
        on_event: EventHandler | None = None,
    ) -> StepResult:
        """Blocking form of `run()`, for code with no event loop.

        Inside a running event loop (a Jupyter notebook, an async app) it raises `SpecError`: there,
        `await rt.run(...)`.
        """

        async def run() -> StepResult:  # the run closes the store's connections: its event loop ends here
            return await self.run(spec, prompt, resume=resume, fork=fork, on_event=on_event)

        return run_blocking(run, "Runtime.run_sync", "await rt.run(...)")
