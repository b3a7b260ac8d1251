"""`KeepWarm`: pings a coordinator's prompt cache while it waits on its workers, beside the run's loop.

Fed every SDK message of one session (`feed`), it follows the coordinator (`Watch`); while it waits on a
worker, a ping goes out `KeepWarmPolicy.interval` after its last request, then after each ping, up to the
wait's limit (`ping_limit`). The moment the wait ends (a report, a new turn) or the block is left (the
run ends or is cancelled), a ping in flight is stopped: its CLI is shut down, its directory removed.
A ping stopped after its request went out is counted all the same (the API bills a request it received):
at what the last ping of the same wait cost (the same request), else the coordinator's last request
read again plus the last ping's written tokens and one output token (`KeepWarmPing.estimated`).
It never pings outside the `async with` block: no ping crosses a user's idle time between runs.

`Runtime` runs one around each session of a run (`Runtime(keep_warm=...)`). An app on the plain SDK can
run its own::

    async with KeepWarm(options, on_ping=print) as warm:
        async for message in query(prompt="Go.", options=options):
            warm.feed(message)
    print(sum(p.cost_usd for p in warm.pings))
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import TracebackType
from typing import Self

import anyio
from anyio.abc import TaskGroup
from claude_agent_sdk import ClaudeAgentOptions

from .._cost import price
from .._cost.prices import TTL_5M
from .._errors import SpecError
from .._usage import TokenUsage
from .._util.check import checked
from .._util.handlers import call_handler
from ..events import KeepWarmPing
from ..stores._local import config_dir, read_jsonl
from ..stores._outbox.reconcile import find_transcript
from .fork import PingProgress, PingReply, send_ping
from .keep_warm_policy import KeepWarmPolicy
from .records import append_record
from .schedule import ForkPoint, fork_point, ping_at, ping_limit
from .watch import Watch

__all__ = ["KeepWarm", "OnPing"]

logger = logging.getLogger("flower.warm")

_LOOKS = 30  # reads of the transcript for the reply a wait follows, before this wait goes unpinged
_LOOK_AGAIN = 1.0  # seconds between them (the CLI writes a reply's entry just after the SDK yields it)

OnPing = Callable[[KeepWarmPing], "Awaitable[None] | None"]
"""Called with each ping once it ended (sent, failed or stopped)."""


class KeepWarm:
    """Keeps one session's coordinator cache warm while the coordinator waits on a worker.

    - `options`: the session's SDK options (what the pings fork it with: same model, tools, system
      prompt, settings and env); their `env` says where the CLI keeps the session's transcript.
    - `policy`: the interval, the limit per wait, the ping's message (`KeepWarmPolicy`).
    - `on_ping`: called with each ping's `KeepWarmPing` (sync or async; an exception is logged).
    - `records`: a JSONL file each ping is appended to (what `flower report` reads:
      `<workspace>/.flower/keep-warm.jsonl`), or None.

    `pings` holds every ping of the block. A ping never raises: a failure is a `KeepWarmPing` with
    `ok=False`, and the rest of that wait goes without pings.
    """

    @checked
    def __init__(
        self,
        options: ClaudeAgentOptions,
        *,
        policy: KeepWarmPolicy | None = None,
        on_ping: OnPing | None = None,
        records: str | Path | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.options = options
        """The session's options."""
        self.policy = policy or KeepWarmPolicy()
        """When and how it pings."""
        self.pings: list[KeepWarmPing] = []
        """Every ping so far, in order."""
        self._on_ping = on_ping
        self._records = Path(records) if records is not None else None
        self._clock = clock
        self._watch = Watch(clock())
        self._changed = anyio.Event()
        self._group: TaskGroup | None = None
        self._inflight: anyio.CancelScope | None = None
        self._scope: anyio.CancelScope | None = None  # the loop's
        self._stopped = False
        self._epoch = -1  # the reply the current ping series belongs to
        self._since = 0.0  # the last request, or the last ping, of this series
        self._count = 0  # pings of this series
        self._limit: int | None = None
        self._lifetime = 0.0
        self._point: ForkPoint | None = None
        self._path: Path | None = None  # the live transcript
        self._retry_at: float | None = None  # the reply is not in the transcript yet: look again then
        self._looks = 0
        self._answered: KeepWarmPing | None = None  # the last ping the API answered, of this session
        self._same: KeepWarmPing | None = None  # the last one of this wait (the same request)

    async def __aenter__(self) -> Self:
        if self._group is not None:
            raise SpecError("KeepWarm: this block is already running")
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(self._loop)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        group, self._group = self._group, None
        assert group is not None
        self.stop()
        # the block's own exception goes on as it was (never wrapped in an exception group): the loop
        # is stopped first, and it never raises
        await group.__aexit__(None, None, None)

    def stop(self) -> None:
        """Stop pinging now (a ping in flight is stopped, its CLI shut down); the block may go on."""
        self._stopped = True
        if self._scope is not None:
            self._scope.cancel()

    def feed(self, message: object) -> None:
        """Take one message of the session's stream (every message, the subagents' included)."""
        watch = self._watch
        before = (watch.waiting, watch.epoch)
        watch.feed(message, self._clock())
        if (watch.waiting, watch.epoch) == before:
            return
        if self._inflight is not None and (not watch.waiting or watch.epoch != before[1]):
            self._inflight.cancel()  # the wait ended: the coordinator's next request reads the cache
        self._changed.set()

    # -- the loop -------------------------------------------------------------------------------------

    async def _loop(self) -> None:
        with anyio.CancelScope() as self._scope:
            if self._stopped:
                return
            try:
                while True:
                    self._changed = anyio.Event()
                    due = self._due()
                    if due is None:
                        await self._changed.wait()
                        continue
                    with anyio.move_on_after(max(0.0, due - self._clock())) as timer:
                        await self._changed.wait()
                    if timer.cancelled_caught:
                        await self._ping()
            except Exception:  # a bug here must not take the run down: the pings stop, the run goes on
                logger.exception("flower.warm: keeping the cache warm failed; no more pings in this session")

    def _due(self) -> float | None:
        watch = self._watch
        if not watch.waiting or watch.session_id is None:
            return None
        if watch.epoch != self._epoch:  # a new wait: a new series, timed from the request it follows
            self._epoch, self._since, self._count = watch.epoch, watch.requested_at, 0
            self._limit, self._lifetime, self._point = None, 0.0, None
            self._retry_at, self._looks, self._same = None, 0, None
        if self._limit is not None and self._count >= self._limit:
            return None
        due = ping_at(self.policy, since=self._since, lifetime=self._lifetime or TTL_5M)
        return max(due, self._retry_at) if self._retry_at is not None else due

    async def _ping(self) -> None:
        watch = self._watch
        session = watch.session_id
        assert session is not None
        if self._point is None:  # the wait's first ping: where to fork, and the marks' real lifetime
            self._point = await anyio.to_thread.run_sync(self._find, session, watch.reply)
            if self._point is None:
                self._looks += 1
                if self._path is not None and self._looks < _LOOKS:
                    self._retry_at = self._clock() + _LOOK_AGAIN  # the CLI has not written the reply yet
                    return
                logger.warning(
                    "flower.warm: no request of %s to send again; this wait goes unpinged", session
                )
                self._limit = 0
                return
            self._retry_at = None
            self._lifetime = self._point.lifetime
            self._limit = ping_limit(self.policy, model=self._point.model, lifetime=self._lifetime)
            due = self._due()
            if due is None or self._clock() < due:
                return  # 1-hour marks: the first ping comes later than the 5-minute guess
        if self._path is None:
            return
        started = self._clock()
        # what the stopped ping's event needs, read now: by then the watch may follow the next request
        waited, context = started - watch.requested_at, watch.context
        reply: PingReply | None = None
        progress = PingProgress()
        try:
            with anyio.CancelScope() as self._inflight:
                reply = await send_ping(
                    self.options,
                    session_id=session,
                    transcript=self._path,
                    point=self._point,
                    prompt=f"{self.policy.prompt} {self._count + 1}",
                    progress=progress,
                )
        finally:  # a ping stopped in flight (the wait ended, the block was left) is told all the same
            self._inflight = None
            self._count += 1
            self._since = started
            with anyio.CancelScope(shield=True):
                event = self._event(session, started, waited, reply)
                await self._ended(
                    self._billed(event, context) if progress.submitted and reply is None else event
                )

    async def _ended(self, event: KeepWarmPing) -> None:
        if event.ok:
            self._answered = self._same = event
        if not event.ok:
            self._limit = self._count  # a failed ping fails again: this wait goes without more
        self.pings.append(event)
        if self._records is not None:
            await anyio.to_thread.run_sync(append_record, self._records, event)
        await self._tell(event)

    def _event(self, session: str, started: float, waited: float, reply: PingReply | None) -> KeepWarmPing:
        stopped = KeepWarmPing(
            session_id=session,
            number=self._count,
            waited_s=waited,
            duration_s=self._clock() - started,
            ok=False,
            error="stopped in flight: the wait ended (or the run did) before its request went out",
            cancelled=True,
        )
        if reply is None:
            return stopped
        return dataclasses.replace(
            stopped,
            ok=reply.ok,
            error=reply.error,
            cancelled=False,
            usage=reply.usage,
            model=reply.model,
            cost_usd=price([reply.usage], model=reply.model).total,
            cli_cost_usd=reply.cli_cost_usd,
            requests=reply.requests,
        )

    def _billed(self, stopped: KeepWarmPing, context: int) -> KeepWarmPing:
        """A ping stopped after its request went out, counted at what the API bills for it: the last ping
        of this wait's usage (the same request), else the coordinator's last request (`context` tokens)
        read again, the last answered ping's written tokens and one output token."""
        model = self._point.model if self._point is not None else ""
        if self._same is not None:
            usage, model = self._same.usage, self._same.model or model
        else:
            written = self._answered.usage.cache_creation if self._answered is not None else 0
            usage = TokenUsage(cache_read=context, cache_creation=written, output=1)
        return dataclasses.replace(
            stopped,
            error="stopped in flight after its request went out: counted at that request's estimated price",
            usage=usage,
            model=model,
            cost_usd=price([usage], model=model).total,
            estimated=True,
        )

    async def _tell(self, event: KeepWarmPing) -> None:
        if self._on_ping is None:
            return
        try:
            await call_handler(self._on_ping, event)
        except Exception:  # a broken callback must not stop the pings or the run
            logger.exception("flower.warm: on_ping raised; the pings go on")

    # -- the live transcript --------------------------------------------------------------------------

    def _transcript(self, session: str) -> Path | None:
        """The live CLI's transcript of `session`: in the SDK's copy for a resume, else the config dir."""
        config = str(config_dir(self.options.env))
        resumed = self.options.resume is not None
        found = find_transcript(session, config, resumed)
        if found is None and resumed:
            found = find_transcript(session, config, False)
        return found

    def _find(self, session: str, reply: str | None) -> ForkPoint | None:
        path = self._path = self._path or self._transcript(session)
        if path is None:
            logger.warning("flower.warm: no transcript of %s found; its cache is not kept warm", session)
            return None
        try:
            point = fork_point(read_jsonl(path), reply)
        except OSError as exc:
            logger.warning("flower.warm: %s could not be read (%s); no ping", path, exc)
            return None
        return point
