"""A stored session exported after the fact (`flower report --otlp`): a trace per run, each ending with
its run, every span with the session's id; a re-export sends the same ids."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytest.importorskip("opentelemetry.proto", reason="the otel extra is not installed (pip install -e '.[dev]')")

from flower.testing._otlp import OtlpReceiver
from flower.tracing import TracingPolicy, export_sessions, session_runs
from flower.tracing._entries import ns, slim_all
from flower.tracing._export import run_end
from tests.tracing.runs import MAIN, WORKER, at, reply, usage


def test_a_session_splits_into_runs_at_the_prompts_a_caller_sent() -> None:
    note = {
        "type": "user",
        "promptSource": "system",
        "timestamp": at(11),
        "message": {"content": "<task-notification>"},
    }
    again = {
        "type": "user",
        "uuid": "p2",
        "timestamp": at(12),
        "promptSource": "sdk",
        "message": {"content": "More?"},
    }
    head = {"type": "queue-operation", "timestamp": at(0)}
    entries = slim_all([head, *MAIN, note, again, MAIN[-1]], False)
    assert session_runs(entries) == [(0, 8), (8, 10)]
    assert session_runs([]) == []


def test_an_exported_run_is_a_trace_of_its_own_that_ends_with_its_last_reply() -> None:
    session = "6f1c1a4e-0000-4000-8000-0000000000aa"
    nxt = [  # what the CLI writes when the next prompt comes, an hour later, then the next run
        {"type": "file-history-snapshot", "timestamp": "2026-12-01T16:43:00.000Z"},
        {
            "type": "user",
            "isMeta": True,
            "timestamp": "2026-12-01T16:43:00.000Z",
            "message": {"content": "x"},
        },
        {
            "type": "user",
            "uuid": "p2",
            "timestamp": "2026-12-01T16:43:01.000Z",
            "promptSource": "sdk",
            "message": {"content": "Again."},
        },
        {
            **reply(0, "m4", [{"type": "text", "text": "Again done."}], usage(1, 1), "end_turn"),
            "timestamp": "2026-12-01T16:43:02.000Z",
        },
    ]
    main = [*MAIN, *nxt]
    assert session_runs(slim_all(main, False)) == [(0, 8), (8, 10)]
    assert run_end(slim_all(main[:8], False)) == ns(at(10))  # not the next prompt's snapshot, an hour on
    stored = SimpleNamespace(session_id=session, main=main, subagents={"subagents/agent-a1": WORKER})
    with OtlpReceiver() as rx:
        for _ in range(2):
            summary = export_sessions([stored], endpoint=rx.endpoint, policy=TracingPolicy(agent_name="lead"))
        spans = list(rx.spans)
    assert summary.ok and summary.runs == 2 and summary.endpoint == rx.endpoint + "/v1/traces"
    roots = sorted((s for s in spans[: summary.spans] if s.parent_span_id == ""), key=lambda s: s.start_ns)
    assert [r.name for r in roots] == ["invoke_agent lead", "invoke_agent lead"]  # one root per run
    assert len({r.trace_id for r in roots}) == 2 and roots[0].trace_id == session.replace("-", "")
    assert roots[0].end_ns == ns(at(10)) and roots[1].end_ns == ns("2026-12-01T16:43:02.000Z")
    assert {s.attributes["session.id"] for s in spans} == {session}
    assert sorted(s.span_id for s in spans[: summary.spans]) == sorted(
        s.span_id for s in spans[summary.spans :]
    )
