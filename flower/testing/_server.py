"""`ScriptedModel`: an Anthropic Messages API server on 127.0.0.1 that answers from scripts.

It drives the real bundled Claude Code CLI offline: real hooks, subagents, transcripts and resume, no
network and no API key. It runs in a thread of its own (its own event loop), so a test that blocks its own
loop, or a synchronous test, cannot stall it.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from types import TracebackType
from typing import Any

import anyio
from anyio.from_thread import BlockingPortal, start_blocking_portal
from claude_agent_sdk import ClaudeAgentOptions

from .._cost.cache import PromptCache
from .._errors import SpecError, UnconsumedSteps, UnexpectedRequest
from .._run.sync import run_blocking
from . import _wire
from ._callers import COMPACT, MAIN, SUBAGENT, check_agent_name, classify, tool_set
from ._cli_env import cli_env, pointed
from ._editing import Edit, apply_context_management
from ._http import HttpRequest, Responder, serve
from ._log import RequestLog
from ._reply import answer, with_cache_usage
from ._requests import RecordedRequest
from ._run import ScriptedRun, run_query
from ._scripts import Script, ScriptLike, resolve
from ._steps import describe

__all__ = ["UNSCRIPTED_STATUS", "ScriptedModel"]

logger = logging.getLogger("flower.testing")

UNSCRIPTED_STATUS = 403
"""HTTP status of the reply to an unscripted request: a `permission_error`, which the CLI does not retry."""


class ScriptedModel:
    """A scripted Anthropic Messages API for the Claude Code CLI.

    Give it one script per caller: `main` (the main thread), each subagent by name, `compact` (compaction
    requests) and `subagent` (any subagent no marker identified). Then point the CLI at it with
    `options()` / `attach()` / `env()`, or let `run()` do everything.

    Example::

        async with ScriptedModel(main=[bash("echo hi"), "done"]) as model:
            run = await model.run("Say hi", cwd=workspace)
            assert "hi" in model.request("main", 1).tool_results[0].text

    On exit it raises `UnexpectedRequest` if a request found no step, and (when `strict`) `UnconsumedSteps`
    if steps were left over.

    Like the API, it applies the context edits a request asks for (`context_management`); `edit` adds one
    of your own (e.g. `ClearToolUses(...)`); `cache` (a `flower.report.PromptCache`) fills unscripted usage
    with what the API's prompt cache would report. See docs/testing.md.
    """

    def __init__(
        self,
        main: ScriptLike | None = None,
        *,
        agents: Mapping[str, ScriptLike] | None = None,
        compact: ScriptLike | None = None,
        subagent: ScriptLike | None = None,
        strict: bool = True,
        edit: Edit | None = None,
        cache: PromptCache | None = None,
    ) -> None:
        self.strict = strict
        """Fail when script steps are left over at the end (`UnconsumedSteps`)."""
        self.edit = edit
        """A server-side rewrite applied to every request before it is logged and scripted."""
        self.cache = cache
        """The prompt cache whose usage replies report when their script gives none."""
        self._log = RequestLog()
        self._lock = self._log.lock  # the scripts share the log's (reentrant) lock
        self._scripts: dict[str, Script] = {}
        self._tool_sets: dict[str, frozenset[str]] = {}
        self._portal: BlockingPortal | None = None
        self._portal_cm: Any = None
        self._server: Future[Any] | None = None
        self._port: int | None = None
        self._root: str | None = None
        if main is not None:
            self.script(MAIN, main)
        if compact is not None:
            self.script(COMPACT, compact)
        if subagent is not None:
            self.script(SUBAGENT, subagent)
        for name, steps in (agents or {}).items():
            self.script(name, steps)

    # -- scripts -------------------------------------------------------------------------------------

    def script(self, caller: str, steps: ScriptLike, *, tools: Iterable[str] | None = None) -> None:
        """Set (replace) the script of a caller: `"main"`, `"compact"`, `"subagent"` or an agent name.

        `tools` identifies a subagent by the exact set of tools its requests offer, for agents whose
        prompt carries no marker.
        """
        if caller not in (MAIN, COMPACT, SUBAGENT):
            check_agent_name(caller)
        if tools is not None:
            if caller in (MAIN, COMPACT, SUBAGENT):
                raise SpecError(f"tools= identifies a named subagent, not {caller!r}")
            self._tool_sets[caller] = tool_set(tools)
        with self._lock:
            self._scripts[caller] = Script.of(steps)

    def extend(self, caller: str, steps: Iterable[Any]) -> None:
        """Append steps to a caller's list script (creating it if needed)."""
        with self._lock:
            if caller not in self._scripts:
                self._scripts[caller] = Script([])
            self._scripts[caller].extend(steps)

    def remaining(self) -> dict[str, int]:
        """Steps left per caller (list scripts only; callers with nothing left are omitted)."""
        with self._lock:
            return {caller: s.remaining for caller, s in self._scripts.items() if s.remaining}

    # -- lifecycle -----------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """The server is serving (between `start()` and `stop()`, or inside `with`)."""
        return self._port is not None

    @property
    def port(self) -> int:
        """The loopback port it listens on; `RuntimeError` when it is not running."""
        if self._port is None:
            raise RuntimeError(
                "the scripted model is not running: use it as a context manager or call start()"
            )
        return self._port

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>`: what `ANTHROPIC_BASE_URL` is set to."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ScriptedModel:
        """Start serving (a thread with its own event loop). Prefer `with` / `async with`."""
        if self._port is not None:
            raise RuntimeError("the scripted model is already running")
        self._root = tempfile.mkdtemp(prefix="flower-scripted-")
        for sub in ("config", "tmp"):
            os.makedirs(os.path.join(self._root, sub), mode=0o700)
        self._portal_cm = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        try:
            self._server, self._port = self._portal.start_task(serve, self._handle)
        except BaseException:
            self._portal_cm.__exit__(None, None, None)
            raise
        return self

    def stop(self) -> None:
        """Stop serving and remove the temp config directories. Idempotent."""
        if self._server is not None:
            self._server.cancel()
            self._server = None
        if self._portal_cm is not None:
            self._portal_cm.__exit__(None, None, None)
            self._portal_cm = self._portal = None
        self._port = None
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None

    def check(self) -> None:
        """Raise `UnexpectedRequest` for unscripted requests, then (if `strict`) `UnconsumedSteps`."""
        unexpected = self._log.unexpected()
        if unexpected:
            raise UnexpectedRequest(unexpected)
        left = self.remaining()
        if self.strict and left:
            raise UnconsumedSteps(left, self.describe_log())

    def __enter__(self) -> ScriptedModel:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
        if exc_type is None:
            self.check()

    async def __aenter__(self) -> ScriptedModel:
        return await anyio.to_thread.run_sync(self.start)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(self.stop)
        if exc_type is None:
            self.check()

    # -- pointing the CLI at it ----------------------------------------------------------------------

    def env(self) -> dict[str, str]:
        """Environment for the CLI: base URL, fake key, its own temp config and scratch dirs, no telemetry.

        `IS_SANDBOX=1` is added when running as root, where the CLI refuses `bypassPermissions` without it.
        """
        root = self._root
        if root is None or self._port is None:
            raise RuntimeError(
                "the scripted model is not running: use it as a context manager or call start()"
            )
        return cli_env(self.base_url, root)

    @property
    def config_dir(self) -> str:
        """The CLI's `CLAUDE_CONFIG_DIR` (transcripts land under `projects/`)."""
        return self.env()["CLAUDE_CONFIG_DIR"]

    def attach(self, options: ClaudeAgentOptions, *, mark_agents: bool = True) -> ClaudeAgentOptions:
        """A copy of `options` pointed at this server, with a marker appended to each agent's prompt.

        The options' own `env` entries win over ours, so a test can still set, say,
        `CLAUDE_CODE_MAX_RETRIES`. With `mark_agents=False` agents are left as they are (identify them
        by tool set, see `script(..., tools=...)`).
        """
        if not isinstance(options, ClaudeAgentOptions):
            raise SpecError(f"attach() takes ClaudeAgentOptions, got {type(options).__name__}")
        return pointed(options, self.env(), mark_agents=mark_agents)

    def options(self, *, mark_agents: bool = True, **fields: Any) -> ClaudeAgentOptions:
        """`ClaudeAgentOptions(**fields)` with test defaults, then `attach()`ed.

        Defaults (each overridable): `permission_mode="bypassPermissions"` (headless tools run),
        `setting_sources=[]` (no settings or CLAUDE.md from the machine).
        """
        fields.setdefault("permission_mode", "bypassPermissions")
        fields.setdefault("setting_sources", [])
        try:
            options = ClaudeAgentOptions(**fields)
        except TypeError as exc:
            raise SpecError(f"invalid ClaudeAgentOptions field: {exc}") from exc
        return self.attach(options, mark_agents=mark_agents)

    # -- the request log -----------------------------------------------------------------------------

    def requests(self, caller: str | None = None) -> list[RecordedRequest]:
        """Every request received (of one caller if given), in arrival order."""
        return self._log.requests(caller)

    def request(self, caller: str, index: int) -> RecordedRequest:
        """The `index`-th request of a caller (0-based; negative counts from the end).

        `model.request("main", 6)` is "what did the main thread's 7th request contain".
        """
        return self._log.request(caller, index)

    def callers(self) -> list[str]:
        """Caller names in order of first appearance."""
        return self._log.callers()

    def describe_log(self, last: int = 12) -> str:
        """The last requests, one summary each (for failure messages)."""
        return self._log.describe(last)

    def wait_for_sync(
        self, count: int = 1, *, caller: str | None = None, timeout: float | None = None
    ) -> list[RecordedRequest]:
        """Block until `count` requests (of `caller`) arrived; `ScriptTimeout` after `timeout` seconds.

        The default is the hang guard (`hang_guard()`, `FLOWER_TEST_HANG_GUARD`): a wait for something
        the run will do bounds a hang and never checks speed.
        """
        return self._log.wait_for_sync(count, caller=caller, timeout=timeout)

    async def wait_for(
        self, count: int = 1, *, caller: str | None = None, timeout: float | None = None
    ) -> list[RecordedRequest]:
        """Async form of `wait_for_sync`."""
        return await anyio.to_thread.run_sync(
            lambda: self.wait_for_sync(count, caller=caller, timeout=timeout)
        )

    # -- running the CLI -----------------------------------------------------------------------------

    async def run(
        self,
        prompt: str,
        *,
        options: ClaudeAgentOptions | None = None,
        timeout: float | None = None,
        mark_agents: bool = True,
        **fields: Any,
    ) -> ScriptedRun:
        """Run the real CLI once (`query()`) against this model and collect what it yields.

        Pass `options` (attached for you) or option fields (through `options()`). A `ResultError` is kept
        in `ScriptedRun.error` rather than raised; an unscripted request raises `UnexpectedRequest`.
        A run still going after `timeout` seconds is stopped with `ScriptTimeout`; the default is the hang
        guard (`hang_guard()`: 10 minutes, or `FLOWER_TEST_HANG_GUARD`), so a busy machine is never a
        failure, only a run that hangs.
        """
        if options is not None and fields:
            raise SpecError("pass either options= or option fields, not both")
        if not isinstance(prompt, str) or not prompt:
            raise SpecError("run() needs a non-empty prompt")
        if options is None:
            opts = self.options(mark_agents=mark_agents, **fields)
        else:
            opts = self.attach(options, mark_agents=mark_agents)
        result = await run_query(prompt, opts, timeout=timeout, describe=self.describe_log)
        unexpected = self._log.unexpected()
        if unexpected:
            raise UnexpectedRequest(unexpected)
        return result

    def run_sync(
        self,
        prompt: str,
        *,
        options: ClaudeAgentOptions | None = None,
        timeout: float | None = None,
        mark_agents: bool = True,
        **fields: Any,
    ) -> ScriptedRun:
        """Blocking form of `run()`, for synchronous code; in a running event loop: `SpecError`."""
        return run_blocking(
            lambda: self.run(prompt, options=options, timeout=timeout, mark_agents=mark_agents, **fields),
            "ScriptedModel.run_sync",
            "await model.run(...)",
        )

    # -- serving -------------------------------------------------------------------------------------

    async def _handle(self, request: HttpRequest, responder: Responder) -> None:
        try:
            await self._dispatch(request, responder)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError):
            raise
        except Exception as exc:  # a broken script must fail the test, never the server
            logger.exception("scripted model: error while answering %s", request.target)
            self._log.add_unexpected(f"error while answering {request.target}: {exc!r}")
            if not responder.started:
                await responder.send_json(
                    500, {"type": "error", "error": {"type": "api_error", "message": repr(exc)}}
                )

    async def _dispatch(self, request: HttpRequest, responder: Responder) -> None:
        if request.method != "POST" or not request.path.startswith("/v1/messages"):
            await responder.send_json(
                404, {"type": "error", "error": {"type": "not_found_error", "message": request.target}}
            )
            return
        body = json.loads(request.body or b"{}")
        if request.path == "/v1/messages/count_tokens":
            await responder.send_json(200, {"input_tokens": _wire.estimate_tokens(len(request.body))})
            return
        body = apply_context_management(body)
        if self.edit is not None:
            body = self.edit(body)
        recorded = self._log.record(classify(body, self._tool_sets), body, request)
        with self._lock:
            script = self._scripts.get(recorded.caller)
            raw = script.take() if script is not None else None
        step = await resolve(raw, recorded)
        if step is None:
            why = (
                "no script for this caller" if script is None else "its script has no step left (or declined)"
            )
            self._log.annotate(
                recorded, f"unscripted ({why})", unexpected=f"{recorded.summary()}\n  why: {why}"
            )
            message = f"scripted model: no step for caller {recorded.caller!r} ({why})"
            await responder.send_json(
                UNSCRIPTED_STATUS,
                {"type": "error", "error": {"type": "permission_error", "message": message}},
            )
            return
        if self.cache is not None:
            step = with_cache_usage(step, recorded, self.cache)
        self._log.annotate(recorded, describe(step))
        sent = await answer(step, recorded, len(request.body), responder)
        if sent is not None:
            self._log.set_usage(recorded, sent)
