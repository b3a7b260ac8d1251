"""A run's chat and tool spans while it goes: each ends, and leaves for the backend, as soon as the
transcript shows that it ended, so a long run is visible as it happens.

The store tap hands over slim copies of the entries as the SDK mirrors them (a `Runtime` flushes the
transcript eagerly: a line reaches the store within about a second of the CLI writing it). A thread of
the run's own reads them, a `ThreadReader` per transcript, and ends each span a reader completes: a reply
once the next one begins, a tool call once its result is there. An Agent call's span, and the delegation
span of the worker it started, open as soon as they are seen, so that the worker's spans have their
parent from the start; both get their figures and end later (the Agent call at its result, the
delegation with the run). A worker whose Agent call is not known yet waits for it.

At the end of the run the whole tree is built again from every entry (`build_run_spans`, as before):
`settle()` leaves a span already ended as it is, gives one still open its final figures and ends it, and
creates the rest. The span ids and the tree are the same as when everything was built at the end.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Tracer

from .._spill._files import MANIFEST
from . import _names as n
from ._build import ROOT
from ._emit import decorate, emit
from ._entries import Entry, blocks, ns
from ._spans import AGENT_TOOLS, SpanSpec, ThreadReader, Where

logger = logging.getLogger("flower.tracing")

Spills = Callable[[Sequence[str]], list[dict[str, Any]]]


class Ongoing:
    """The live spans of one run under its root span (see the module docstring). Thread-safe to feed."""

    def __init__(
        self, tracer: Tracer, root: Span, agent: str, content: bool, spills: Spills, spill_dir: str | None
    ) -> None:
        self._tracer = tracer
        self._agent = agent
        self._content = content
        self._read_spills = spills
        self._spill_dir = spill_dir
        self._spill_stamp: tuple[int, int] | None = None
        self._spills: dict[str, Mapping[str, Any]] = {}  # updated in place: the readers hold it
        self._sessions: list[str] = []
        self._readers: dict[tuple[str, str], ThreadReader] = {}
        self._tool_of: dict[str, str] = {}  # agent id -> the Agent call's tool_use id
        self._type_of: dict[str, str] = {}  # agent id -> its subagent type
        self._waiting: dict[str, list[tuple[str, list[Entry]]]] = {}  # agent id -> (session, entries)
        self.open: dict[str, Span] = {}
        self.ended: set[str] = set()
        self.contexts: dict[str, Context] = {ROOT: trace.set_span_in_context(root)}
        self._queue: deque[tuple[str, str, list[Entry]]] = deque()
        self._cond = threading.Condition()
        self._closing = False
        self._thread = threading.Thread(target=self._work, name="flower-tracing-live", daemon=True)
        self._thread.start()

    # -- fed from the run (any thread) ---------------------------------------------------------------

    def feed(self, session: str, agent: str, entries: Sequence[Entry]) -> None:
        """New slim entries of a transcript: the main thread's (`agent` "") or a worker's."""
        with self._cond:
            self._queue.append((session, agent, list(entries)))
            self._cond.notify()

    def started(self, agent_id: str, tool_use_id: str | None, subagent_type: str | None) -> None:
        """A worker started (a `SubagentStarted` event): which Agent call it belongs to."""
        with self._cond:
            if tool_use_id:
                self._tool_of.setdefault(agent_id, tool_use_id)
            if subagent_type:
                self._type_of.setdefault(agent_id, subagent_type)
            self._queue.append(("", "", []))  # a worker waiting for this can go now
            self._cond.notify()

    def close(self) -> None:
        """Read what is queued, then stop the thread (blocks: call it from a worker thread)."""
        with self._cond:
            self._closing = True
            self._cond.notify()
        self._thread.join()

    # -- the thread ----------------------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closing:
                    self._cond.wait()
                if not self._queue:
                    return
                session, agent, entries = self._queue.popleft()
            try:
                self._read(session, agent, entries)
            except Exception:  # a bug here costs live spans, never the run: settle() builds them all
                logger.exception("flower.tracing: live spans of %s stopped", session or "the run")
                with self._cond:
                    self._queue.clear()
                    self._closing = True
                return

    def _read(self, session: str, agent: str, entries: list[Entry]) -> None:
        if session and session not in self._sessions:
            self._sessions.append(session)
        if agent:
            for entry in entries:
                if entry.get("type") == "agent_metadata" and isinstance(entry.get("toolUseId"), str):
                    with self._cond:
                        self._tool_of.setdefault(agent, entry["toolUseId"])
                        if isinstance(entry.get("agentType"), str):
                            self._type_of.setdefault(agent, entry["agentType"])
            self._waiting.setdefault(agent, []).append((session, entries))
        elif entries:
            self._thread_of(session, "", ROOT, self._agent).extend(entries)
        self._release()

    def _release(self) -> None:
        """Read the workers whose Agent call is open (or ended) now: their delegation span can start."""
        progress = True
        while progress:
            progress = False
            for agent, held in list(self._waiting.items()):
                with self._cond:
                    tool = self._tool_of.get(agent)
                    name = self._type_of.get(agent) or "subagent"
                if tool is None or f"tool:{tool}" not in self.contexts:
                    continue
                del self._waiting[agent]
                key = f"agent:{agent}"
                for session, entries in held:
                    if key not in self.contexts:
                        attributes = {n.OPERATION: n.INVOKE_AGENT, n.AGENT_NAME: name, n.AGENT_ID: agent}
                        start = _first_ns(entries)
                        self._open(key, f"tool:{tool}", f"{n.INVOKE_AGENT} {name}", start, attributes)
                    self._thread_of(session, agent, key, name).extend(entries)
                progress = True

    def _thread_of(self, session: str, agent: str, parent: str, name: str) -> _Feeder:
        reader = self._readers.get((session, agent))
        if reader is None:
            where = Where(parent, name, session, self._spills, self._content, True)
            reader = self._readers[(session, agent)] = ThreadReader(where)
        return _Feeder(self, reader)

    def _refresh_spills(self) -> None:
        """The spill manifest's rows, read again only when the file changed (a tool span needs its row)."""
        if not self._spill_dir:
            return
        try:
            info = os.stat(os.path.join(self._spill_dir, MANIFEST))
        except OSError:
            return
        stamp = (info.st_size, info.st_mtime_ns)
        if stamp != self._spill_stamp:
            self._spill_stamp = stamp
            rows = self._read_spills(self._sessions)
            self._spills.update({str(r["tool_use_id"]): r for r in rows if r.get("tool_use_id")})

    def _open(
        self, key: str, parent: str, name: str, start: int | None, attributes: Mapping[str, Any]
    ) -> None:
        span = self._tracer.start_span(
            name,
            context=self.contexts.get(parent, self.contexts[ROOT]),
            kind=SpanKind.INTERNAL,
            attributes=dict(attributes),
            start_time=start,
        )
        self.open[key] = span
        self.contexts[key] = trace.set_span_in_context(span)

    def _end(self, spec: SpanSpec) -> None:
        span = self.open.pop(spec.key, None)
        if span is None:
            span = self._tracer.start_span(
                spec.name,
                context=self.contexts.get(spec.parent or ROOT, self.contexts[ROOT]),
                kind=SpanKind.CLIENT if spec.kind == "CLIENT" else SpanKind.INTERNAL,
                attributes=dict(spec.attributes),
                start_time=spec.start_ns,
            )
            self.contexts[spec.key] = trace.set_span_in_context(span)
        _finish(span, spec)
        self.ended.add(spec.key)

    # -- the end -------------------------------------------------------------------------------------

    def settle_now(self) -> None:
        """The run raised: stop reading and end what is open as it stands (blocks)."""
        self.close()
        for span in reversed(list(self.open.values())):
            span.end()
        self.open.clear()

    def settle(self, specs: Sequence[SpanSpec], flush: Callable[[], object] | None) -> None:
        """After `close()`: the final tree (root excluded): end what is open, create what is missing."""
        missing = [s for s in specs if s.key not in self.ended and s.key not in self.open]
        parents: dict[str | None, Context | None] = {None: self.contexts[ROOT]}
        parents.update(self.contexts)
        emit(missing, self._tracer, parents, flush=flush)
        for spec in reversed(specs):  # children end before their parents
            span = self.open.pop(spec.key, None)
            if span is not None:
                _finish(span, spec)
        for span in self.open.values():  # not in the final tree (no entries of its own): end it too
            span.end()
        self.open.clear()


class _Feeder:
    """Feeds a reader: opens the Agent calls it sees, ends the spans it completes."""

    def __init__(self, ongoing: Ongoing, reader: ThreadReader) -> None:
        self.ongoing = ongoing
        self.reader = reader

    def extend(self, entries: Sequence[Entry]) -> None:
        ongoing, where = self.ongoing, self.reader.where
        for entry in entries:
            if any(b.get("type") == "tool_result" for b in blocks(entry)):
                ongoing._refresh_spills()
            for block in blocks(entry):
                if block.get("type") == "tool_use" and block.get("name") in AGENT_TOOLS and block.get("id"):
                    key = f"tool:{block['id']}"
                    if key not in ongoing.contexts:
                        name = str(block["name"])
                        attributes = {n.OPERATION: n.EXECUTE_TOOL, n.TOOL_NAME: name, n.TOOL_CALL_ID: key[5:]}
                        ongoing._open(
                            key, where.parent, f"{n.EXECUTE_TOOL} {name}", _stamp(entry), attributes
                        )
            for spec in self.reader.feed(entry):
                ongoing._end(spec)
        ongoing._release()


def _finish(span: Span, spec: SpanSpec) -> None:
    decorate(span, spec)
    span.end(end_time=spec.end_ns)


def _stamp(entry: Entry) -> int | None:
    return ns(entry.get("timestamp"))


def _first_ns(entries: Sequence[Entry]) -> int | None:
    return next((t for t in map(_stamp, entries) if t is not None), None)
