"""Export stored sessions as spans after the fact: a past run into the backend that shows today's.

Each run of a session (from a prompt the caller sent to the next one; a background worker's
notification is not a prompt) is one trace: an `invoke_agent` tree built as a live run's, with the
transcripts' own times and the figures of the transcripts (a live run's root carries `StepResult`'s;
the two agree, measured with CLI 2.1.332). The run's span ends with its last reply, tool result or
notification, not with what the CLI writes when the next prompt comes. Every span carries the session
id (`gen_ai.conversation.id`, `session.id`), which is how a backend groups a session's runs. The trace
id is derived from the session and the run's place in it, every span id from the message or tool call
it stands for, so exporting the same session again sends the same ids: a backend sees the same spans
twice, not two copies of the run. Metrics are not exported after the fact (their points would carry
today's time).

`flower report SOURCE --otlp ENDPOINT` calls `export_sessions` for every session of a store.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..stores._rewrite import is_prompt
from ._entries import Entry, ns, slim_all
from ._tracing_policy import TracingPolicy, signal_url

__all__ = ["ExportSummary", "StoredSession", "export_sessions", "session_runs"]

logger = logging.getLogger("flower.tracing")


class StoredSession(Protocol):
    """A session as `flower.report` loads it (`SessionData`): its id, main and subagent transcripts."""

    @property
    def session_id(self) -> str: ...
    @property
    def main(self) -> Sequence[Mapping[str, Any]]: ...
    @property
    def subagents(self) -> Mapping[str, Sequence[Mapping[str, Any]]]: ...


@dataclass(frozen=True, kw_only=True)
class ExportSummary:
    """What `export_sessions` sent."""

    endpoint: str
    """Where the spans went (the traces URL)."""
    sessions: int
    """Sessions exported."""
    runs: int
    """Runs found in them (one trace, an `invoke_agent` tree, each)."""
    spans: int
    """Spans sent."""
    failed: str | None = None
    """Why some spans did not reach the endpoint, or None when all did."""

    @property
    def ok(self) -> bool:
        """Every span reached the endpoint."""
        return self.failed is None


def session_runs(main: Sequence[Entry]) -> list[tuple[int, int]]:
    """`(start, stop)` index ranges of a main transcript's runs: each starts at a prompt the caller sent.

    Entries before the first prompt belong to the first run; a session without a prompt is one run.
    """
    starts = [index for index, entry in enumerate(main) if is_prompt(dict(entry))]
    if not starts:
        return [(0, len(main))] if main else []
    starts[0] = 0
    return [(start, starts[i + 1] if i + 1 < len(starts) else len(main)) for i, start in enumerate(starts)]


def _queued_ids(trace_id: int) -> Any:
    """An id generator whose trace id is set per session and whose next span id `emit` sets."""
    from opentelemetry.sdk.trace.id_generator import IdGenerator

    from ._emit import stable_id

    class QueuedIds(IdGenerator):
        def __init__(self) -> None:
            self.trace_id = trace_id
            self.next_span = 0

        def generate_trace_id(self) -> int:
            return self.trace_id

        def generate_span_id(self) -> int:
            value, self.next_span = self.next_span, 0
            return value or stable_id(f"{self.trace_id}:unnamed", 64)

        def is_trace_id_random(self) -> bool:
            return False

    return QueuedIds()


def trace_id_of(session_id: str, run: int = 0) -> int:
    """The trace id of a session's `run`-th run (0: the first, whose id is the session's UUID)."""
    from ._emit import stable_id

    if run:
        return stable_id(f"{session_id}/run/{run}", 128)
    try:
        return uuid.UUID(session_id).int or stable_id(session_id, 128)
    except ValueError:
        return stable_id(session_id, 128)


_ACTIVITY = frozenset({"assistant", "user"})


def run_end(window: Sequence[Entry]) -> int | None:
    """When a run ended: its last reply, tool result or notification (not the snapshot, queue or
    caveat entries the CLI writes when the next prompt comes, which a window ends with)."""
    times = [
        t
        for t in (
            ns(e.get("timestamp")) for e in window if e.get("type") in _ACTIVITY and not e.get("isMeta")
        )
        if t is not None
    ]
    return max(times) if times else None


def export_sessions(
    sessions: Iterable[StoredSession],
    *,
    endpoint: str,
    spills: Sequence[Mapping[str, Any]] = (),
    policy: TracingPolicy | None = None,
) -> ExportSummary:
    """Send `sessions` to the OTLP/HTTP `endpoint` as spans; blocks until they are sent.

    `endpoint` is a base URL (`/v1/traces` appended) or a traces URL ending in `/v1/traces` (used as
    given), as `TracingPolicy.endpoint`.

    `spills` are the workbench's spill manifest rows (`flower.report.load_source` reads them);
    `policy.content` and `policy.agent_name` apply (the endpoint is this function's). Never raises for
    an endpoint that fails: `ExportSummary.failed` says why.
    """
    policy = policy or TracingPolicy()
    TracingPolicy(endpoint=endpoint)  # checks the URL (SpecError)
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from ._providers import Watch, resource, span_exporter

    watch = Watch()
    ids = _queued_ids(0)
    provider = TracerProvider(resource=resource(), id_generator=ids, shutdown_on_exit=False)
    exporter = span_exporter(endpoint, watch)
    provider.add_span_processor(BatchSpanProcessor(exporter, max_queue_size=4096))
    tracer = provider.get_tracer("flower.report")
    counted = [0, 0, 0]
    try:
        for session in sessions:
            runs, spans = _export_one(session, tracer, ids, spills, policy, provider.force_flush)
            counted[0] += 1
            counted[1] += runs
            counted[2] += spans
        provider.force_flush()
    finally:
        provider.shutdown()
    failed = watch.last if watch.failures else None
    url = signal_url(endpoint, "traces")
    return ExportSummary(endpoint=url, sessions=counted[0], runs=counted[1], spans=counted[2], failed=failed)


def _export_one(
    session: StoredSession,
    tracer: Any,
    ids: Any,
    spills: Sequence[Mapping[str, Any]],
    policy: TracingPolicy,
    flush: Any,
) -> tuple[int, int]:
    from opentelemetry.context import Context

    from ._build import RunRecord, build_run_spans
    from ._emit import emit

    main = slim_all(session.main, policy.content)
    workers = {
        subpath.rsplit("/", 1)[-1].removeprefix("agent-"): slim_all(entries, policy.content)
        for subpath, entries in session.subagents.items()
    }
    stamps = [t for t in (ns(e.get("timestamp")) for e in main) if t is not None]
    if not stamps:
        return 0, 0
    rows = [r for r in spills if not r.get("session_id") or r.get("session_id") == session.session_id]
    runs = session_runs(main)
    count = 0
    for number, (start, stop) in enumerate(runs):
        window = main[start:stop]
        times = [t for t in (ns(e.get("timestamp")) for e in window) if t is not None]
        end = run_end(window)
        if not times or end is None:
            continue
        record = RunRecord(
            agent=policy.name,
            start_ns=min(times),
            end_ns=end,
            sessions=[(session.session_id, window)],
            workers=workers,
            spills=rows,
            content=policy.content,
        )
        specs = build_run_spans(record)
        ids.trace_id = trace_id_of(session.session_id, number)  # a trace per run
        count += emit(
            specs, tracer, {None: Context()}, flush=flush, ids=ids, scope=f"{session.session_id}/{number}"
        )
    return len(runs), count
