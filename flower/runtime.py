"""`Runtime`: owns a workspace, compiles a spec, runs it through the CLI and reports a `StepResult`.

Example::

    rt = Runtime(workspace="repo")
    result = await rt.run(lead, "Start.", on_event=print)
    if result.ok:
        print(result.text)

It iterates the CLI's stream to its very end: with background subagents one run yields several results,
and the run is finished only when none is pending. Whatever ends the run (success, an error result, an
exception in the caller, a cancellation), the CLI process is shut down before `run()` returns or raises.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Callable, Mapping
from contextlib import aclosing
from pathlib import Path

import anyio
from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ClaudeSDKError,
    CLINotFoundError,
    HookMatcher,
    ResultMessage,
)
from claude_agent_sdk.types import HookEvent

from ._credentials import require_credentials
from ._errors import SpecError
from ._stream import EventHandler, Tracker
from .agents import AgentSpec
from .hooks.index import index_hooks
from .hooks.spill import SpillPolicy, spill_hooks
from .options import build_options, merge_hooks
from .result import StepResult
from .workbench import Workbench

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
    - `env`: extra environment for the CLI.
    - `configure`: a last word on the SDK options of every session, e.g. `ScriptedModel.attach` to run
      offline against flower's scripted model.
    - `check_credentials`: fail fast with `CredentialsError` when the CLI has no key, token or login.

    The constructor does no I/O; problems with the workspace are reported by `run()`.
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        *,
        workbench: bool | Workbench = True,
        spill_threshold: int | SpillPolicy | None = 4000,
        env: Mapping[str, str] | None = None,
        configure: Configure | None = None,
        check_credentials: bool = True,
    ) -> None:
        if not isinstance(workspace, str | os.PathLike) or not str(workspace):
            raise SpecError(f"Runtime: workspace must be a path, got {workspace!r}")
        if env is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
            raise SpecError("Runtime: env must map strings to strings")
        if configure is not None and not callable(configure):
            raise SpecError("Runtime: configure must be a callable(options) -> options")
        self.workspace = Path(workspace).expanduser().absolute()
        if isinstance(workbench, Workbench):
            self.workbench: Workbench | None = workbench
        elif isinstance(workbench, bool):
            self.workbench = Workbench(self.workspace) if workbench else None
        else:
            raise SpecError(f"Runtime: workbench must be True, False or a Workbench, got {workbench!r}")
        if isinstance(spill_threshold, SpillPolicy):
            self.spill = spill_threshold
        elif spill_threshold is None or (
            isinstance(spill_threshold, int) and not isinstance(spill_threshold, bool)
        ):
            self.spill = SpillPolicy(threshold=spill_threshold)
        else:
            raise SpecError(
                f"Runtime: spill_threshold must be an int, None or a SpillPolicy, got {spill_threshold!r}"
            )
        self._blocks: dict[str, str] = {}  # session id -> the workbench block its system prompt holds
        self.env: dict[str, str] = dict(env or {})
        self.configure = configure
        self.check_credentials = check_credentials
        self.results: list[StepResult] = []
        """Every StepResult this runtime returned, in order."""

    def _check_workspace(self) -> Path:
        if not self.workspace.exists():
            raise SpecError(f"Runtime: workspace {self.workspace} does not exist")
        if not self.workspace.is_dir():
            raise SpecError(f"Runtime: workspace {self.workspace} is not a directory")
        return self.workspace.resolve()

    def _layer_hooks(self, workspace: Path) -> dict[HookEvent, list[HookMatcher]]:
        spill_target = self.workbench if self.workbench is not None else workspace / ".flower" / "spill"
        index = index_hooks(self.workbench) if self.workbench is not None else {}
        return merge_hooks(spill_hooks(spill_target, self.spill), index)

    def options(
        self, spec: AgentSpec, *, resume: str | None = None, fork: bool = False, block: str | None = None
    ) -> ClaudeAgentOptions:
        """The SDK options `run()` would use for `spec` (useful to inspect or to run them yourself).

        `block` is the workbench block for the system prompt; by default it is computed now.
        """
        workspace = self._check_workspace()
        wb = self.workbench
        if wb is not None and block is None:
            block = wb.prompt_block()
        options = build_options(
            spec,
            cwd=workspace,
            artifacts=wb.artifacts if wb is not None else None,
            resume=resume,
            fork=fork,
            hooks=self._layer_hooks(workspace),
            env=self.env,
            append=block or "",
        )
        if wb is not None and not wb.inside_workspace:
            options = dataclasses.replace(options, add_dirs=[*options.add_dirs, wb.root])
        if self.configure is not None:
            options = self.configure(options)
            if not isinstance(options, ClaudeAgentOptions):
                raise SpecError(
                    f"Runtime: configure returned {type(options).__name__}, not ClaudeAgentOptions"
                )
        return options

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

        Failures of the run itself (API errors after retries, a crashed CLI) come back as
        `StepResult(ok=False, error=...)`; invalid arguments raise `SpecError`; a missing CLI raises the
        SDK's `CLINotFoundError`; cancellation propagates, after the CLI is shut down.
        """
        if not isinstance(spec, AgentSpec):
            raise SpecError(
                f"Runtime.run takes an AgentSpec (worker() or coordinator()), got {type(spec).__name__}"
            )
        if not isinstance(prompt, str) or not prompt.strip():
            raise SpecError("Runtime.run: prompt must be a non-empty string")
        if on_event is not None and not callable(on_event):
            raise SpecError("Runtime.run: on_event must be callable")
        self._check_workspace()
        block = await anyio.to_thread.run_sync(self._block)
        if resume and self.workbench is not None:
            # a resumed session keeps the system prompt it started with (measured): a changed index goes
            # in front of the prompt instead, only when it changed
            prompt = self.workbench.preface(prompt, since=self._blocks.get(resume))
        options = self.options(spec, resume=resume, fork=fork, block=block)
        if self.check_credentials:
            require_credentials(options.env)
        tracker = Tracker(on_event)
        started = time.monotonic()
        error: str | None = None
        try:
            await self._converse(options, prompt, tracker)
        except CLINotFoundError:
            raise
        except ClaudeSDKError as exc:
            error = f"{type(exc).__name__}: {exc}"
        if tracker.session_id and block is not None:
            # the freshest block this session has seen: in its system prompt, or put before this prompt
            self._blocks[tracker.session_id] = block
        if tracker.pending_tasks:
            logger.warning("the CLI ended with %d subagent(s) not reported finished", tracker.pending_tasks)
        result = self._result(tracker, error, time.monotonic() - started)
        self.results.append(result)
        return result

    def _block(self) -> str | None:
        """The workbench block (refreshing the index first): the refresh before each step."""
        return self.workbench.prompt_block() if self.workbench is not None else None

    @staticmethod
    async def _converse(options: ClaudeAgentOptions, prompt: str, tracker: Tracker) -> None:
        """One prompt, read to the last result with no subagent pending; the client is always closed.

        A `ClaudeSDKClient` rather than `query()`: leaving `query()` early (an exception, a handoff) does
        not close its inner generator, so the CLI would outlive the run (PEP 533); the client's
        `disconnect()` stops it before this returns, on every path.
        """
        async with ClaudeSDKClient(options=options) as client:
            await client.query(prompt)
            async with aclosing(client.receive_messages()) as stream:  # type: ignore[type-var]
                async for message in stream:
                    await tracker.feed(message)
                    if isinstance(message, ResultMessage) and not tracker.pending_tasks:
                        break
            await tracker.flush()

    def run_sync(
        self,
        spec: AgentSpec,
        prompt: str,
        *,
        resume: str | None = None,
        fork: bool = False,
        on_event: EventHandler | None = None,
    ) -> StepResult:
        """Blocking form of `run()` (not from inside a running event loop)."""
        return anyio.run(lambda: self.run(spec, prompt, resume=resume, fork=fork, on_event=on_event))

    @staticmethod
    def _result(tracker: Tracker, error: str | None, duration: float) -> StepResult:
        results = tracker.results
        last = results[-1] if results else None
        answers = [r for r in results if not r.is_error and r.result]
        if last is not None and last.is_error and error is None:
            error = last.result or f"the CLI ended with an error result ({last.subtype})"
        if last is None and error is None:
            error = "the CLI ended without a result"
        return StepResult(
            session_id=tracker.session_id,
            ok=error is None,
            text=(answers[-1].result or "") if answers else "",
            error=error,
            # total_cost_usd is cumulative over a session's results; num_turns is per result (measured)
            cost_usd=max((r.total_cost_usd or 0.0 for r in results), default=0.0),
            num_turns=sum(r.num_turns for r in results),
            results=len(results),
            peak_context=tracker.peak_context,
            denials=tuple(tracker.denials),
            duration_s=duration,
        )
