"""`OtlpReceiver`: an OTLP/HTTP endpoint on 127.0.0.1 for tests (`/v1/traces`, `/v1/metrics`, `/v1/logs`).

Needs the `otel` extra (`flower-context[otel]`: it decodes with `opentelemetry-proto`); `flower.testing`
imports it on first use of the name, not before.

It decodes what an OTLP/HTTP exporter sends (protobuf, or JSON when the exporter is set to
`http/json`; gzip when it compresses) with the official generated classes of `opentelemetry-proto`,
and keeps flat, easy-to-assert records: spans with their trace, span and parent ids in hex, attributes
as plain Python values, the resource's and the scope's names; metric data points; log records.

    from flower.testing import OtlpReceiver

    with OtlpReceiver() as rx:
        rt = Runtime(ws, tracing=TracingPolicy(endpoint=rx.endpoint))   # http://127.0.0.1:PORT
        result = await rt.run(lead, "Start.")                          # the run flushes at its end
        roots = [s for s in rx.spans if s.parent_span_id == ""]

A threading HTTP server: it works from sync and async tests alike, and answers while the test's event
loop is busy. Nothing leaves the machine: it binds 127.0.0.1 and an ephemeral port.
"""

from __future__ import annotations

import gzip
import threading
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError, Message
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

from ._guard import guard

__all__ = ["LogRecord", "MetricPoint", "OtlpReceiver", "Span"]

_KINDS = {0: "UNSPECIFIED", 1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}


def _value(v: AnyValue) -> Any:
    kind = v.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return _attrs(v.kvlist_value.values)
    if kind == "bytes_value":
        return bytes(v.bytes_value)
    return getattr(v, kind)


def _attrs(kvs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    kv: KeyValue
    for kv in kvs:
        out[kv.key] = _value(kv.value)
    return out


@dataclass(frozen=True)
class Span:
    """One received span, flattened."""

    trace_id: str
    span_id: str
    parent_span_id: str  # "" for a root span
    name: str
    kind: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    status_code: int
    status_message: str
    scope: str
    resource: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    links: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)

    @property
    def duration_s(self) -> float:
        return (self.end_ns - self.start_ns) / 1e9


@dataclass(frozen=True)
class MetricPoint:
    """One data point of a received metric (sum, gauge or histogram)."""

    name: str
    unit: str
    kind: str  # sum | gauge | histogram | exponential_histogram | summary
    attributes: dict[str, Any]
    value: float | int | None  # sum and gauge
    count: int | None  # histogram
    sum: float | None  # histogram
    scope: str
    resource: dict[str, Any]


@dataclass(frozen=True)
class LogRecord:
    """One received log record (the CLI's events arrive as these)."""

    body: Any
    attributes: dict[str, Any]
    time_ns: int
    trace_id: str
    span_id: str
    scope: str
    resource: dict[str, Any]


class OtlpReceiver:
    """An OTLP/HTTP endpoint on 127.0.0.1 that records what it receives. A context manager."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.spans: list[Span] = []
        self.metrics: list[MetricPoint] = []
        self.logs: list[LogRecord] = []
        self.requests: list[tuple[str, str, int]] = []  # (path, content type, body bytes)
        self.errors: list[str] = []
        self._cond = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                encoding = (self.headers.get("Content-Encoding") or "").lower()
                ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
                try:
                    if encoding == "gzip":
                        body = gzip.decompress(body)
                    elif encoding == "deflate":
                        body = zlib.decompress(body)
                    answer = receiver._ingest(self.path, ctype, body)
                except (DecodeError, json_format.ParseError, ValueError, OSError) as exc:
                    with receiver._cond:
                        receiver.errors.append(f"{self.path}: {exc!r}")
                    self.send_response(400)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if answer is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if ctype == "application/json":
                    payload = json_format.MessageToJson(answer).encode()
                else:
                    payload = answer.SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", ctype or "application/x-protobuf")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="otlp-receiver", daemon=True)

    # -- lifecycle ---------------------------------------------------------------------------------

    @property
    def endpoint(self) -> str:
        """The base URL to give `OTEL_EXPORTER_OTLP_ENDPOINT` (exporters append `/v1/traces`...)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> OtlpReceiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- decoding ----------------------------------------------------------------------------------

    def _parse(self, msg: Message, ctype: str, body: bytes) -> None:
        if ctype == "application/json":
            json_format.Parse(body.decode(), msg, ignore_unknown_fields=True)
        else:
            msg.ParseFromString(body)

    def _ingest(self, path: str, ctype: str, body: bytes) -> Message | None:
        path = path.split("?")[0].rstrip("/")
        json = ctype == "application/json"
        signals: list[tuple[str, Any, Any, Callable[[Any], Iterator[Any]], list[Any]]] = [
            (
                "/v1/traces",
                ExportTraceServiceRequest,
                ExportTraceServiceResponse,
                lambda r: self._spans(r, json),
                self.spans,
            ),
            (
                "/v1/metrics",
                ExportMetricsServiceRequest,
                ExportMetricsServiceResponse,
                self._points,
                self.metrics,
            ),
            ("/v1/logs", ExportLogsServiceRequest, ExportLogsServiceResponse, self._records, self.logs),
        ]
        for suffix, request_type, response_type, decode, into in signals:
            if path.endswith(suffix):
                request = request_type()
                self._parse(request, ctype, body)
                found = list(decode(request))
                with self._cond:
                    self.requests.append((path, ctype, len(body)))
                    into.extend(found)
                    self._cond.notify_all()
                return response_type()
        return None

    def _spans(self, req: ExportTraceServiceRequest, json: bool) -> Iterator[Span]:
        for rs in req.resource_spans:
            resource = _attrs(rs.resource.attributes)
            for ss in rs.scope_spans:
                for s in ss.spans:
                    yield Span(
                        trace_id=_id(s.trace_id, json),
                        span_id=_id(s.span_id, json),
                        parent_span_id=_id(s.parent_span_id, json),
                        name=s.name,
                        kind=_KINDS.get(s.kind, str(s.kind)),
                        start_ns=s.start_time_unix_nano,
                        end_ns=s.end_time_unix_nano,
                        attributes=_attrs(s.attributes),
                        status_code=s.status.code,
                        status_message=s.status.message,
                        scope=ss.scope.name,
                        resource=resource,
                        events=[(e.name, _attrs(e.attributes)) for e in s.events],
                        links=[
                            (_id(x.trace_id, json), _id(x.span_id, json), _attrs(x.attributes))
                            for x in s.links
                        ],
                    )

    def _points(self, req: ExportMetricsServiceRequest) -> Iterator[MetricPoint]:
        for rm in req.resource_metrics:
            resource = _attrs(rm.resource.attributes)
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    kind = m.WhichOneof("data") or ""
                    data = getattr(m, kind) if kind else None
                    for p in getattr(data, "data_points", []):
                        value: float | int | None = None
                        count: int | None = None
                        total: float | None = None
                        if kind in ("sum", "gauge"):
                            which = p.WhichOneof("value")
                            value = getattr(p, which) if which else None
                        elif kind in ("histogram", "exponential_histogram", "summary"):
                            count, total = p.count, p.sum
                        yield MetricPoint(
                            name=m.name,
                            unit=m.unit,
                            kind=kind,
                            attributes=_attrs(p.attributes),
                            value=value,
                            count=count,
                            sum=total,
                            scope=sm.scope.name,
                            resource=resource,
                        )

    def _records(self, req: ExportLogsServiceRequest) -> Iterator[LogRecord]:
        for rl in req.resource_logs:
            resource = _attrs(rl.resource.attributes)
            for sl in rl.scope_logs:
                for r in sl.log_records:
                    yield LogRecord(
                        body=_value(r.body),
                        attributes=_attrs(r.attributes),
                        time_ns=r.time_unix_nano,
                        trace_id=r.trace_id.hex(),
                        span_id=r.span_id.hex(),
                        scope=sl.scope.name,
                        resource=resource,
                    )

    # -- waiting -----------------------------------------------------------------------------------

    def wait_for(self, predicate: Callable[[OtlpReceiver], bool], timeout: float | None = None) -> bool:
        """Block until `predicate(self)` holds (checked on each arrival): True, or False once `timeout`
        seconds passed without it.

        The default is the harness's hang guard (`flower.testing.hang_guard()`, `FLOWER_TEST_HANG_GUARD`):
        wait for what the run will send, never for how fast it sends it.
        """
        limit = guard(timeout)
        with self._cond:
            return self._cond.wait_for(lambda: predicate(self), timeout=limit)

    def wait_for_spans(
        self, predicate: Callable[[list[Span]], bool], timeout: float | None = None
    ) -> list[Span]:
        """The spans received once `predicate(spans)` holds, or once `timeout` passed (see `wait_for`)."""
        self.wait_for(lambda rx: predicate(rx.spans), timeout)
        with self._cond:
            return list(self.spans)


def _id(raw: bytes, json: bool) -> str:
    """A trace or span id as lowercase hex.

    OTLP/JSON writes ids as hex strings, but protobuf's JSON parser reads `bytes` fields as base64:
    the hex text was decoded as base64. Re-encode to recover the text, which is the hex id.
    """
    if not raw:
        return ""
    if json:
        import base64

        return base64.b64encode(raw).decode().lower()
    return raw.hex()
