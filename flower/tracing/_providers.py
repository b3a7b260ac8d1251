"""Where spans and metrics go: the app's own providers, or OTLP/HTTP providers flower builds once per
endpoint and process.

The app's providers are used when the policy names no endpoint and the app set a tracer provider
globally; flower never shuts them down, and flushes them only between batches of a long run's spans.
Otherwise flower builds a `TracerProvider` (a batch processor that sends every half second, so spans
leave as they end) and, when metrics are configured, a `MeterProvider` (a reader flushed at each run's
end, never on a schedule) whose exporters it watches, so that a failed export is known to
the run: logged and reported as a `TracingWarning`, never raised. Their resource is
`service.name=flower` unless `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` say otherwise; the
exporters read the other `OTEL_EXPORTER_OTLP_*` variables (headers, timeout, compression) themselves.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    MetricExporter,
    MetricExportResult,
    MetricsData,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import ProxyTracerProvider, Tracer

from .._version import __version__
from ._metrics import Instruments
from ._tracing_policy import TracingPolicy, signal_url

SCOPE = "flower"
# No periodic export: each run's end flushes its metrics, and nothing is left to send at exit (a
# periodic reader exports once more when the process ends, which waits out the exporter's retries
# when the endpoint is gone).
_METRIC_INTERVAL_MS = math.inf
LIVE_DELAY_MS = 500
"""How long an ended span waits in the batch before it is sent (the SDK's default is 5 s): a span leaves
about half a second after it ends, so a long run shows in the backend as it goes."""


class Watch:
    """Counts what an exporter failed to send (thread-safe): a run compares before and after its flush."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.failures = 0
        self.last = ""

    def failed(self, what: str) -> None:
        with self._lock:
            self.failures += 1
            self.last = what


class WatchedSpans(SpanExporter):
    """A span exporter that records its failures in a `Watch` and never raises."""

    def __init__(self, inner: SpanExporter, watch: Watch) -> None:
        self.inner = inner
        self.watch = watch

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            result = self.inner.export(spans)
        except Exception as exc:
            self.watch.failed(f"{len(spans)} spans not exported: {type(exc).__name__}: {exc}")
            return SpanExportResult.FAILURE
        if result is not SpanExportResult.SUCCESS:
            self.watch.failed(f"{len(spans)} spans not exported (see the OTLP exporter's log)")
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


class WatchedMetrics(MetricExporter):
    """A metric exporter that records its failures in a `Watch` and never raises."""

    def __init__(self, inner: MetricExporter, watch: Watch) -> None:
        super().__init__(
            preferred_temporality=inner._preferred_temporality,
            preferred_aggregation=inner._preferred_aggregation,
        )
        self.inner = inner
        self.watch = watch

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        try:
            result = self.inner.export(metrics_data, timeout_millis=timeout_millis, **kwargs)
        except Exception as exc:
            self.watch.failed(f"metrics not exported: {type(exc).__name__}: {exc}")
            return MetricExportResult.FAILURE
        if result is not MetricExportResult.SUCCESS:
            self.watch.failed("metrics not exported (see the OTLP exporter's log)")
        return result

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return self.inner.force_flush(timeout_millis)

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        self.inner.shutdown(timeout_millis=timeout_millis, **kwargs)


@dataclass
class Telemetry:
    """A tracer and the run's instruments, and, for providers flower built, how to flush them."""

    tracer: Tracer
    instruments: Instruments | None
    tracer_provider: TracerProvider | None = None
    meter_provider: MeterProvider | None = None
    watch: Watch = field(default_factory=Watch)

    @property
    def own(self) -> bool:
        """flower built these providers (it flushes them; it never flushes an app's)."""
        return self.tracer_provider is not None

    def flush(self) -> None:
        """Export what is queued (blocks: call it from a worker thread)."""
        if self.tracer_provider is not None:
            self.tracer_provider.force_flush()
        if self.meter_provider is not None:
            self.meter_provider.force_flush()

    def drain(self) -> None:
        """Between batches of a long run's spans: empty the span queue, so that no span is dropped by a
        full one. The app's provider too, when it can (a flush sends, it never shuts anything down)."""
        provider = self.tracer_provider or trace.get_tracer_provider()
        force_flush = getattr(provider, "force_flush", None)
        if callable(force_flush):
            force_flush()


_lock = threading.Lock()
_built: dict[tuple[str | None, bool], Telemetry] = {}


def resource() -> Resource:
    """`service.name=flower`, under what `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` say."""
    return Resource.create({"service.name": "flower", "service.version": __version__})


def span_exporter(endpoint: str | None, watch: Watch) -> WatchedSpans:
    """OTLP/HTTP spans to `endpoint` (a base URL, or a traces URL as given), or where the `OTEL_*`
    variables say (the SDK's exporter reads them: the traces endpoint as given, the generic one plus
    `/v1/traces`)."""
    url = signal_url(endpoint, "traces") if endpoint else None
    return WatchedSpans(OTLPSpanExporter(endpoint=url), watch)


def _app_meter() -> bool:
    """The app set a meter provider of its own. Unset, the API returns a proxy that records nothing
    until one is set; its class is private, hence the name."""
    provider = metrics.get_meter_provider()
    return (
        not isinstance(provider, metrics.NoOpMeterProvider)
        and type(provider).__name__ != "_ProxyMeterProvider"
    )


def telemetry(policy: TracingPolicy) -> Telemetry:
    """The tracer and instruments `policy` writes to (built once per endpoint and process)."""
    if policy.endpoint is None and not isinstance(trace.get_tracer_provider(), ProxyTracerProvider):
        meter = metrics.get_meter(SCOPE, __version__) if policy.metrics_on(app_meter=_app_meter()) else None
        return Telemetry(trace.get_tracer(SCOPE, __version__), Instruments(meter) if meter else None)
    with_metrics = policy.metrics_on()
    with _lock:
        key = (policy.endpoint, with_metrics)
        found = _built.get(key)
        if found is None:
            found = _built[key] = _build(policy.endpoint, with_metrics)
        return found


def _build(endpoint: str | None, with_metrics: bool) -> Telemetry:
    watch = Watch()
    tracer_provider = TracerProvider(resource=resource())
    tracer_provider.add_span_processor(
        BatchSpanProcessor(
            span_exporter(endpoint, watch), max_queue_size=4096, schedule_delay_millis=LIVE_DELAY_MS
        )
    )
    meter_provider = None
    instruments = None
    if with_metrics:
        url = signal_url(endpoint, "metrics") if endpoint else None
        exporter = WatchedMetrics(OTLPMetricExporter(endpoint=url), watch)
        reader = PeriodicExportingMetricReader(exporter, export_interval_millis=_METRIC_INTERVAL_MS)
        meter_provider = MeterProvider(resource=resource(), metric_readers=[reader])
        instruments = Instruments(meter_provider.get_meter(SCOPE, __version__))
    tracer = tracer_provider.get_tracer(SCOPE, __version__)
    return Telemetry(tracer, instruments, tracer_provider, meter_provider, watch)


def flush_all() -> None:
    """Export what flower's own providers hold (blocks; the app's providers are the app's)."""
    with _lock:
        built = list(_built.values())
    for found in built:
        found.flush()
