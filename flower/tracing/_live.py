"""A `Runtime` run as spans, live: its root span current while the CLI runs, each reply and tool call a
span as soon as it ended, the root and the delegations at the run's end.

The root `invoke_agent` span starts with the run, as a child of the span current in the app, and is
the current span while the step runs: the SDK passes it to every CLI process of the step (`TRACEPARENT`),
so the CLI's own spans, when its telemetry is on, land under it. The run's transcripts reach flower
as the SDK mirrors them into the store (a tap on the store layer keeps slim copies); while the run goes,
each chat and execute_tool span is made and ended as soon as its transcript shows it ended
(`_ongoing.Ongoing`), so the exporter sends it within a second. At the end the tree is completed (the
delegations, what was still open) and the root gets `StepResult`'s figures. The end's building,
emitting and flushing happen in a worker thread the run waits for at most `TracingPolicy.flush_timeout`;
whatever goes wrong is logged and reported as a `TracingWarning` event, never raised.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import anyio
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from .._result import StepResult
from .._spill._files import MANIFEST, manifest_row
from .._util.safe_open import read_regular
from ..events import Event, SubagentStarted, TracingWarning
from . import _names as n
from ._build import ROOT, RunRecord, build_run_spans
from ._emit import context_of, decorate, emit
from ._entries import slim
from ._ongoing import Ongoing
from ._providers import Telemetry, telemetry
from ._tracing_policy import TracingPolicy

logger = logging.getLogger("flower.tracing")

Handler = Callable[[Event], "Awaitable[None] | None"]
Emit = Callable[[Event], Awaitable[None]]


class Tap:
    """Slim copies of what the SDK appends to the store, by session and transcript (a store tap)."""

    def __init__(self, content: bool) -> None:
        self.content = content
        self.main: dict[str, list[dict[str, Any]]] = {}
        self.workers: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.ongoing: Ongoing | None = None
        """Also hands each new entry to the run's live spans."""
        self._seen: set[tuple[str, str, str]] = set()
        self._lock = threading.Lock()

    def __call__(self, key: Mapping[str, Any], entries: Sequence[Any]) -> None:
        session = str(key.get("session_id") or "")
        subpath = key.get("subpath")
        agent = str(subpath).rsplit("/", 1)[-1].removeprefix("agent-") if subpath else ""
        fresh: list[dict[str, Any]] = []
        with self._lock:
            if agent:
                target = self.workers.setdefault((session, agent), [])
            else:
                target = self.main.setdefault(session, [])
            for entry in entries:
                if not isinstance(entry, Mapping):
                    continue
                ident = entry.get("uuid")
                if isinstance(ident, str):  # an append the SDK retried brings the same entries again
                    seen = (session, str(subpath or ""), ident)
                    if seen in self._seen:
                        continue
                    self._seen.add(seen)
                fresh.append(slim(entry, self.content))
            target.extend(fresh)
            if self.ongoing is not None and fresh:
                self.ongoing.feed(session, agent, fresh)

    def session(self, session_id: str) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.main.get(session_id, ()))

    def workers_of(self, sessions: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
        with self._lock:
            return {
                agent: list(found) for (session, agent), found in self.workers.items() if session in sessions
            }


def read_spills(spill_dir: str | None, sessions: Sequence[str]) -> list[dict[str, Any]]:
    """The spill manifest's rows of these sessions (none when there is no readable manifest)."""
    if not spill_dir:
        return []
    try:  # a regular file only: a FIFO there would hold the run
        text = read_regular(Path(spill_dir) / MANIFEST).decode("utf-8", errors="replace")
    except OSError:
        return []
    rows = [row for row in map(manifest_row, text.splitlines()) if row is not None]
    return [row for row in rows if not row.get("session_id") or row.get("session_id") in sessions]


class LiveRun:
    """One run's trace, from `start()` to `finish()` (or `abandon()` when the run raised)."""

    def __init__(self, policy: TracingPolicy, agent: str, store: Any, requests: bool) -> None:
        self.policy = policy
        self.agent = agent
        self.requests = requests
        self._store = store
        self._telemetry: Telemetry = telemetry(policy)
        self._start = time.time_ns()
        self._events: list[tuple[int, Event]] = []
        self._tap = Tap(policy.content)
        self._root: Span | None = None

    def listen(self, on_event: Handler | None) -> Handler:
        """`on_event`, with each event also kept (with its time) for the spans."""

        def handler(event: Event) -> Awaitable[None] | None:
            self._events.append((time.time_ns(), event))
            ongoing = self._tap.ongoing
            if ongoing is not None and isinstance(event, SubagentStarted):
                ongoing.started(event.task_id, event.tool_use_id, event.agent)
            return on_event(event) if on_event is not None else None

        return handler

    @contextmanager
    def current(self) -> Iterator[None]:
        """The run's root span starts, and is the current span inside (the SDK hands it to the CLI);
        the store's appends are read from now on."""
        self._start = time.time_ns()
        attributes = {n.OPERATION: n.INVOKE_AGENT, n.PROVIDER_NAME: n.PROVIDER, n.AGENT_NAME: self.agent}
        self._root = root = self._telemetry.tracer.start_span(
            f"{n.INVOKE_AGENT} {self.agent}",
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            start_time=self._start,
        )
        if self.requests:  # else the CLI traces its requests and tools itself
            spill_dir = getattr(self._store, "spill_dir", None)
            self._tap.ongoing = Ongoing(
                self._telemetry.tracer,
                root,
                self.agent,
                self.policy.content,
                lambda sessions: read_spills(spill_dir, sessions),
                spill_dir,
            )
        self._store.taps.append(self._tap)
        with trace.use_span(root, end_on_exit=False, record_exception=False, set_status_on_exception=False):
            yield

    def _detach(self) -> None:
        with suppress(ValueError):
            self._store.taps.remove(self._tap)

    def abandon(self, why: str) -> None:
        """The run raised: end the root span as failed (the spans already ended stay; nothing more is
        built)."""
        self._detach()
        if self._root is None:
            return
        try:
            ongoing = self._tap.ongoing
            if ongoing is not None:
                threading.Thread(target=ongoing.settle_now, name="flower-tracing-end", daemon=True).start()
            self._root.set_status(Status(StatusCode.ERROR, why[:500]))
            self._root.set_attribute(n.ERROR_TYPE, "run_raised")
            self._root.end()
        except Exception:
            logger.exception("flower.tracing: the run's span could not be ended")

    async def finish(self, result: StepResult, send: Emit) -> None:
        """Build and export the run's spans and metrics; a failure is a warning, never an exception."""
        self._detach()
        end = time.time_ns()
        if self._root is None:
            return
        try:
            sessions = list(dict.fromkeys(s for s in (*result.retired, result.session_id) if s))
            spill_dir = getattr(self._store, "spill_dir", None)
            spills = await anyio.to_thread.run_sync(read_spills, spill_dir, sessions)
            record = RunRecord(
                agent=self.agent,
                start_ns=self._start,
                end_ns=end,
                sessions=[(s, self._tap.session(s)) for s in sessions],
                workers=self._tap.workers_of(sessions),
                spills=spills,
                result=result,
                events=list(self._events),
                content=self.policy.content,
                requests=self.requests,
            )
            problem = await export_in_background(lambda: self._export(record), self.policy.flush_timeout)
        except Exception as exc:  # a bug here must not fail the run
            logger.exception("flower.tracing: the run's spans could not be built")
            problem = f"the run's spans could not be built: {type(exc).__name__}: {exc}"
        if problem:
            logger.warning("flower.tracing: %s", problem)
            await send(TracingWarning(message=problem))

    def _export(self, record: RunRecord) -> str | None:
        assert self._root is not None
        specs = build_run_spans(record)
        found = self._telemetry
        before = found.watch.failures
        decorate(self._root, specs[0])
        ongoing = self._tap.ongoing
        if ongoing is not None:
            ongoing.close()  # what the run's last appends ended, then the rest of the tree
            ongoing.settle(specs[1:], flush=found.drain)
        else:
            emit(specs[1:], found.tracer, {ROOT: context_of(self._root)}, flush=found.drain)
        self._root.end(end_time=record.end_ns)
        if found.instruments is not None:
            found.instruments.record(specs)
        if found.own:
            found.flush()
        if found.watch.failures > before:
            return f"some spans or metrics were not exported: {found.watch.last}"
        return None


async def export_in_background(work: Callable[[], str | None], timeout: float) -> str | None:
    """Run `work` in a daemon thread; wait for it at most `timeout` seconds without blocking the loop.

    Returns its problem (or the exception it raised) when it ended in time, a note when it did not.
    """
    done = threading.Event()
    outcome: list[str | None] = []

    def run() -> None:
        try:
            outcome.append(work())
        except Exception as exc:
            logger.exception("flower.tracing: the export failed")
            outcome.append(f"the export failed: {type(exc).__name__}: {exc}")
        finally:
            done.set()

    threading.Thread(target=run, name="flower-tracing-export", daemon=True).start()
    if timeout <= 0:
        return None
    finished = await anyio.to_thread.run_sync(done.wait, timeout, abandon_on_cancel=True)
    if not finished:
        return f"the export did not finish within {timeout:g} s (flush_timeout); it goes on in the background"
    return outcome[0] if outcome else None
