"""OpenTelemetry traces and metrics of flower's runs (the `otel` extra: `flower-context[otel]`).

A run becomes a tree of spans following the OpenTelemetry GenAI conventions: a root `invoke_agent`
span per run, a `chat` span per model reply, an `execute_tool` span per tool call, each delegation an
`invoke_agent` span under its Agent call (background workers included), with `gen_ai.usage.*` and
flower's own `flower.*` attributes (delegations, spills, denials, layer-4 rewrites, handoffs, cost),
and metrics for the same figures. The span current in the app is the parent, and the CLI gets the
run's span as its `TRACEPARENT`, so the CLI's own telemetry, when on, lands in the same trace.

Turn it on with one argument, `Runtime(..., tracing=True)` or `instrument(..., tracing=True)` (a
`TracingPolicy` for options), or with the standard variables (`OTEL_EXPORTER_OTLP_ENDPOINT`...; see
`TracingPolicy`). Off, nothing changes and nothing of OpenTelemetry is imported. Exporting
never blocks the event loop and never fails a run: a failure is logged and a `TracingWarning` event.
No prompt, reply or tool text goes into a span unless `TracingPolicy(content=True)`.

Example::

    from flower import Runtime
    from flower.tracing import TracingPolicy

    rt = Runtime("repo", tracing=TracingPolicy(endpoint="http://127.0.0.1:4318"))
"""

from __future__ import annotations

from ._export import ExportSummary, StoredSession, export_sessions, session_runs
from ._tracing_policy import TracingPolicy

__all__ = ["ExportSummary", "StoredSession", "TracingPolicy", "export_sessions", "flush", "session_runs"]


def flush() -> None:
    """Send what flower's own exporters still hold, now (blocks; call it from a thread in async code).

    A `Runtime` run flushes at its end by itself; `instrument()`'s spans go out in the background, and
    this makes sure they left before, say, a test looks at the backend. The app's own providers are
    the app's to flush.
    """
    import sys

    if "flower.tracing._providers" in sys.modules:
        from ._providers import flush_all

        flush_all()
