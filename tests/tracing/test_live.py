"""Live spans: each reply and tool call becomes a span as soon as its transcript shows it ended, and the
run's end completes the tree a build at the end would make."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed (pip install -e '.[dev]')")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from flower.tracing._build import ROOT, build_run_spans
from flower.tracing._emit import emit
from flower.tracing._entries import slim_all
from flower.tracing._ongoing import Ongoing
from flower.tracing._spans import ThreadReader, Where, thread_spans
from tests.tracing.runs import MAIN, WORKER, record


def test_a_reader_gives_each_span_once_the_transcript_shows_it_ended() -> None:
    where = Where(ROOT, "lead", "s1", {}, False)
    reader = ThreadReader(where)
    ended = [[s.key for s in reader.feed(entry)] for entry in slim_all(MAIN, False)]
    # a reply ends when the next begins (its entries may come between its calls' results), a call
    # when its result is written; the last reply at the end
    assert ended == [[], [], ["tool:t1"], ["chat:m1"], ["tool:t2"], ["chat:m2"]]
    assert [s.key for s in reader.close()] == ["chat:m3"]
    whole = thread_spans(slim_all(MAIN, False), where)
    assert sorted(s.key for s in whole.specs) == sorted(s.key for s in reader.out.specs)


def tree(spans: Any) -> list[tuple[str, str]]:
    """(name, parent's name) of each finished span, sorted."""
    names = {s.context.span_id: s.name for s in spans}
    return sorted((s.name, names.get(s.parent.span_id, "-") if s.parent else "-") for s in spans)


@pytest.mark.parametrize("worker_first", [False, True])
def test_live_spans_end_while_the_run_goes_and_the_end_completes_the_same_tree(worker_first: bool) -> None:
    """Fed as the store takes the entries, each reply and call ends once its transcript shows it; the
    end adds the rest. The tree is the one a build at the end makes, whatever order the appends came in."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    root = tracer.start_span("invoke_agent lead")
    ongoing = Ongoing(tracer, root, "lead", False, lambda sessions: [], None)
    main, worker = slim_all(MAIN, False), slim_all(WORKER, False)
    feeds = [("s1", "", main[:4]), ("s1", "a1", worker), ("s1", "", main[4:])]
    for session, agent, entries in feeds if not worker_first else [feeds[1], feeds[0], feeds[2]]:
        ongoing.feed(session, agent, entries)
    ongoing.close()

    live = sorted(
        s.name + ":" + str(s.attributes.get("gen_ai.response.id", s.attributes.get("gen_ai.tool.call.id")))
        for s in exporter.get_finished_spans()
    )
    assert live == [
        "chat claude-opus-5-5:m1",
        "chat claude-opus-5-5:m2",
        "chat claude-opus-5-5:w1",
        "execute_tool Agent:t2",
        "execute_tool Bash:t1",
        "execute_tool Write:t3",
    ]  # the last reply of each thread, and the delegation, end with the run
    ongoing.settle(build_run_spans(record())[1:], flush=None)
    root.end()
    at_the_end = InMemorySpanExporter()
    whole = TracerProvider()
    whole.add_span_processor(SimpleSpanProcessor(at_the_end))
    emit(build_run_spans(record()), whole.get_tracer("test"), {None: None})
    assert tree(exporter.get_finished_spans()) == tree(at_the_end.get_finished_spans())
