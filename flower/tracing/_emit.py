"""Turn `SpanSpec`s into OpenTelemetry spans, with their recorded times and parents.

Imported only when tracing is on (it imports OpenTelemetry's API). Spans are created parents first and
ended with their own end times; every `CHUNK` spans, `flush` (when given) drains the exporter's queue,
so that a long run's thousands of spans are not dropped by a full batch queue (a burst of 5,000 into
the SDK's default processor lost some, measured with opentelemetry-sdk 1.45).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from ._spans import SpanSpec

CHUNK: Final = 1000
_KINDS: Final = {"INTERNAL": SpanKind.INTERNAL, "CLIENT": SpanKind.CLIENT}


def stable_id(text: str, bits: int) -> int:
    """A deterministic non-zero id from `text` (an export after the fact: a re-export gives the same)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[: bits // 8], "big") or 1


def decorate(span: Span, spec: SpanSpec) -> None:
    """Give a live span (the run's root, started earlier) what its spec says."""
    span.set_attributes(dict(spec.attributes))
    for event in spec.events:
        span.add_event(event.name, dict(event.attributes), timestamp=event.time_ns)
    if spec.error:
        span.set_status(Status(StatusCode.ERROR, spec.error))


def emit(
    specs: Sequence[SpanSpec],
    tracer: Tracer,
    parents: Mapping[str | None, Context | None],
    *,
    flush: Callable[[], object] | None = None,
    ids: Any = None,
    scope: str = "",
) -> int:
    """Create and end a span per spec; return how many.

    `parents` gives the context of a parent that is not among `specs` (the root's parent under None;
    a live root span under its key). With `ids` (an id generator with a settable `next_span`, as
    `flower.tracing._export` uses), each span's id is derived from `scope` and its key.
    """
    spans: dict[str, Span] = {}
    count = 0
    for spec in specs:
        if spec.parent in spans:
            context: Context | None = trace.set_span_in_context(spans[spec.parent])
        else:
            context = parents.get(spec.parent, parents.get(None))
        if ids is not None:
            ids.next_span = stable_id(f"{scope}/{spec.key}", 64)
        span = tracer.start_span(
            spec.name,
            context=context,
            kind=_KINDS[spec.kind],
            attributes=dict(spec.attributes),
            start_time=spec.start_ns,
        )
        for event in spec.events:
            span.add_event(event.name, dict(event.attributes), timestamp=event.time_ns)
        if spec.error:
            span.set_status(Status(StatusCode.ERROR, spec.error))
        spans[spec.key] = span
    for spec in reversed(specs):  # children end before their parents
        spans[spec.key].end(end_time=spec.end_ns)
        count += 1
        if flush is not None and count % CHUNK == 0:
            flush()
    return count


def context_of(span: Any) -> Context:
    """A context whose current span is `span`."""
    return trace.set_span_in_context(span)
