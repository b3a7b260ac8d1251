"""The span tree a run's transcripts make (pure), and its shape once emitted through the SDK's in-memory
exporter: parents, kinds, times, status; usage added up once; no text unless asked for."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed (pip install -e '.[dev]')")

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from flower import StepResult, StepUsage, TokenUsage
from flower.events import HandoffDone, KeepWarmPing, SubagentFinished
from flower.tracing import session_runs
from flower.tracing._build import ROOT, RunRecord, build_run_spans
from flower.tracing._emit import emit
from flower.tracing._entries import CONTENT_LIMIT, ns, slim_all
from flower.tracing._live import Tap, export_in_background
from flower.tracing._windows import window_complete
from tests.stores import corpus
from tests.tracing.runs import MAIN, SECRET, WORKER, at, by_key, record, reply, result, usage


def test_the_tree_nests_replies_tools_and_the_delegation_under_its_agent_call() -> None:
    specs = build_run_spans(record())
    tree = {s.key: s.parent for s in specs}

    assert specs[0].key == ROOT and specs[0].name == "invoke_agent lead"
    assert tree == {
        ROOT: None,
        "chat:m1": ROOT,
        "chat:m2": ROOT,
        "chat:m3": ROOT,
        "tool:t1": ROOT,
        "tool:t2": ROOT,
        "agent:a1": "tool:t2",
        "chat:w1": "agent:a1",
        "chat:w2": "agent:a1",
        "tool:t3": "agent:a1",
    }
    keyed = by_key(specs)
    assert keyed["chat:m1"].kind == "CLIENT" and keyed["tool:t1"].kind == "INTERNAL"
    # the wall's denial is the wall at work: an attribute and an event, not an error
    denied = keyed["tool:t1"]
    assert denied.attributes["flower.denied"] is True and denied.error is None
    assert "error.type" not in denied.attributes
    assert [(e.name, e.attributes["flower.denied.reason_chars"]) for e in denied.events] == [
        ("flower.denied", len("Permission denied by a hook."))
    ]
    assert keyed["tool:t3"].attributes["error.type"] == "refused" and keyed["tool:t3"].error == "refused"
    assert keyed["tool:t3"].attributes["flower.spill.chars"] == 9000
    worker = keyed["agent:a1"].attributes
    assert worker["gen_ai.agent.name"] == "w" and worker["flower.delegation.mandate_chars"] == len(SECRET)
    assert worker["gen_ai.usage.output_tokens"] == 11
    # a reply runs from the entry before it to its own last entry; a tool call from its call to its result
    assert (keyed["chat:m2"].start_ns, keyed["chat:m2"].end_ns) == (ns(at(3)), ns(at(4)))
    assert (keyed["tool:t2"].start_ns, keyed["tool:t2"].end_ns) == (ns(at(4)), ns(at(9)))


def test_a_keep_warm_ping_is_a_chat_span_under_the_root() -> None:
    used = TokenUsage(cache_read=4_716, cache_creation=27, output=1)
    ping = KeepWarmPing(
        session_id="s1",
        number=1,
        waited_s=270.5,
        duration_s=2.0,
        ok=True,
        usage=used,
        model="m",
        cost_usd=0.5,
    )
    stopped = KeepWarmPing(
        session_id="s1", number=2, waited_s=540.0, duration_s=1.0, ok=False, cancelled=True
    )
    specs = build_run_spans(record(events=[(10**10, ping), (2 * 10**10, stopped)]))
    warm = by_key(specs)["warm:0"]
    assert (warm.parent, warm.name, warm.kind) == (ROOT, "chat m", "CLIENT")
    assert (warm.start_ns, warm.end_ns, warm.error) == (10**10 - 2 * 10**9, 10**10, None)
    assert warm.attributes["flower.keep_warm"] is True and warm.attributes["flower.keep_warm.number"] == 1
    assert warm.attributes["gen_ai.usage.cache_read.input_tokens"] == 4_716
    assert by_key(specs)["warm:1"].attributes["error.type"] == "cancelled"


def test_the_root_without_a_result_adds_up_the_transcripts_and_with_one_carries_it() -> None:
    root = build_run_spans(record())[0].attributes
    assert root["gen_ai.usage.output_tokens"] == 10 + 20 + 30 + 5 + 6
    assert root["gen_ai.usage.cache_read.input_tokens"] == 100 + 200 + 300 + 50 + 60
    assert root["gen_ai.usage.input_tokens"] == root["flower.usage.input_tokens"] + 710 + 50
    assert root["flower.delegations"] == 1 and root["flower.denials"] == 1
    assert root["flower.spill.paths"] == ["spill/abc-write.txt"]

    step = StepResult(
        session_id="s1",
        ok=False,
        text="",
        error="boom",
        cost_usd=1.5,
        usage=StepUsage(main=TokenUsage(input=1, output=2, cache_read=3, cache_creation=4)),
        denials=("Bash",),
    )
    finished = SubagentFinished(agent="w", task_id="a1", tool_use_id="t2", status="failed", summary="no")
    specs = build_run_spans(record(result=step, events=[(5, finished)]))
    attrs = specs[0].attributes
    assert (attrs["gen_ai.usage.output_tokens"], attrs["gen_ai.usage.input_tokens"]) == (2, 1 + 3 + 4)
    assert (
        attrs["gen_ai.usage.cache_write.input_tokens"]
        == attrs["gen_ai.usage.cache_creation.input_tokens"]
        == 4
    )
    assert attrs["flower.cost.usd"] == 1.5 and attrs["flower.run.ok"] is False and specs[0].error == "boom"
    assert by_key(specs)["agent:a1"].error == "failed"


def all_text(specs: list[Any]) -> str:
    return json.dumps([dict(s.attributes) for s in specs], default=str)


def test_no_text_reaches_a_span_unless_content_is_asked_for() -> None:
    assert "sk-secret" not in all_text(build_run_spans(record()))
    assert "rm -rf" not in all_text(build_run_spans(record()))

    specs = build_run_spans(record(content=True))
    keyed = by_key(specs)
    assert "sk-secret" in str(keyed[ROOT].attributes["gen_ai.input.messages"])
    assert "rm -rf" in str(keyed["tool:t1"].attributes["gen_ai.tool.call.arguments"])
    assert "All the api key" in str(keyed["chat:m3"].attributes["gen_ai.output.messages"])
    long = {
        **MAIN[-1],
        "message": {**MAIN[-1]["message"], "content": [{"type": "text", "text": "x" * 50_000}]},
    }
    (slimmed,) = slim_all([long], True)
    assert len(slimmed["message"]["content"][0]["text"]) == CONTENT_LIMIT


def test_every_span_carries_the_session_id_a_worker_its_own_agent_id_too() -> None:
    specs = build_run_spans(record())
    assert {s.attributes["gen_ai.conversation.id"] for s in specs} == {"s1"}
    assert {s.attributes["session.id"] for s in specs} == {"s1"}  # OpenInference's, for Phoenix's Sessions
    delegation = by_key(specs)["agent:a1"].attributes
    assert delegation["gen_ai.agent.id"] == delegation["flower.agent.id"] == "a1"
    kinds = {s.key: s.attributes["openinference.span.kind"] for s in specs}
    assert (kinds[ROOT], kinds["agent:a1"], kinds["chat:m1"], kinds["tool:t1"]) == (
        "AGENT",
        "AGENT",
        "LLM",
        "TOOL",
    )


def test_with_content_a_model_call_shows_what_it_answered_and_what_it_said() -> None:
    keyed = by_key(build_run_spans(record(content=True)))
    first = keyed["chat:m1"].attributes
    (prompt,) = json.loads(first["gen_ai.input.messages"])
    assert prompt == {"role": "user", "parts": [{"type": "text", "content": SECRET}]}
    assert first["llm.input_messages.0.message.role"] == "user"
    assert first["llm.input_messages.0.message.content"] == SECRET
    (said,) = json.loads(first["gen_ai.output.messages"])
    assert said["role"] == "assistant" and said["parts"][0]["name"] == "Bash"
    assert first["llm.output_messages.0.message.tool_calls.0.tool_call.function.name"] == "Bash"
    assert (
        first["input.value"] == first["gen_ai.input.messages"]
        and first["input.mime_type"] == "application/json"
    )
    # the next reply answers the tool result (the denial), not the whole history again
    (answered,) = json.loads(keyed["chat:m2"].attributes["gen_ai.input.messages"])
    assert answered["parts"] == [
        {"type": "tool_call_response", "id": "t1", "response": "Permission denied by a hook."}
    ]
    tool = keyed["tool:t1"].attributes
    assert json.loads(tool["input.value"]) == {"command": "rm -rf /"}
    assert tool["output.value"] == "Permission denied by a hook."
    assert keyed["tool:t1"].events[0].attributes["flower.denied.reason"] == "Permission denied by a hook."
    root = keyed[ROOT].attributes
    assert root["input.value"] == SECRET and root["output.value"] == "All " + SECRET  # the run's answer


def test_when_the_cli_traces_its_requests_flower_keeps_the_run_and_its_delegations() -> None:
    specs = build_run_spans(record(requests=False))
    assert [(s.key, s.parent) for s in specs] == [(ROOT, None), ("agent:a1", ROOT)]
    assert specs[0].attributes["gen_ai.usage.output_tokens"] == 71
    assert specs[0].attributes["flower.spill.count"] == 1


def test_a_call_without_its_result_is_an_unfinished_tool_span() -> None:
    cut = RunRecord(
        agent="lead", start_ns=0, end_ns=1, sessions=[("s1", slim_all(MAIN[:2], False))], workers={}
    )
    tool = by_key(build_run_spans(cut))["tool:t1"]
    assert tool.error == "no result" and tool.attributes["error.type"] == "no_result"


def test_emitted_spans_keep_the_tree_the_times_and_the_status() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    specs = build_run_spans(record())
    with tracer.start_as_current_span("app") as app:
        count = emit(specs, tracer, {None: trace.set_span_in_context(app)})
    spans = {
        s.name
        + ":"
        + str(s.attributes.get("gen_ai.response.id", s.attributes.get("gen_ai.tool.call.id", ""))): s
        for s in exporter.get_finished_spans()
    }

    assert count == len(specs) == len(spans) - 1
    root = spans["invoke_agent lead:"]
    assert root.parent is not None and root.parent.span_id == app.get_span_context().span_id
    delegation = spans["invoke_agent w:t2"]
    assert (
        delegation.parent is not None
        and delegation.parent.span_id == spans["execute_tool Agent:t2"].context.span_id
    )
    assert spans["chat claude-opus-5-5:w1"].parent.span_id == delegation.context.span_id  # type: ignore[union-attr]
    assert spans["execute_tool Bash:t1"].status.status_code.name == "UNSET"  # a denial is no error
    assert [e.name for e in spans["execute_tool Bash:t1"].events] == ["flower.denied"]
    assert spans["execute_tool Write:t3"].status.status_code.name == "ERROR"  # the CLI refused it
    assert spans["chat claude-opus-5-5:m1"].kind.name == "CLIENT"
    chat = spans["chat claude-opus-5-5:m1"]
    assert (chat.start_time, chat.end_time) == (ns(at(1)), ns(at(2)))


def test_a_window_ends_at_a_final_reply_once_every_background_worker_reported() -> None:
    launched = result(3, "t2", "launched", toolUseResult={"agentId": "bg1", "isAsync": True})
    waiting = reply(4, "m9", [{"type": "text", "text": "Waiting."}], usage(1, 1), "end_turn")
    note = {
        "type": "user",
        "promptSource": "system",
        "timestamp": at(6),
        "message": {"content": "<task-notification>\n<task-id>bg1</task-id>\n<status>completed</status>"},
    }
    last = reply(7, "m10", [{"type": "text", "text": "Done."}], usage(1, 1), "end_turn")
    window = slim_all([MAIN[0], MAIN[3], launched, waiting], False)
    assert not window_complete(slim_all(MAIN[:2], False))
    assert not window_complete(window)
    assert not window_complete(window + slim_all([note], False))
    assert window_complete(window + slim_all([note, last], False))


def test_the_tap_keeps_an_append_the_sdk_retried_once() -> None:
    tap = Tap(content=False)
    tap({"session_id": "s1"}, MAIN)
    tap({"session_id": "s1"}, MAIN[-2:])
    tap({"session_id": "s1", "subpath": "subagents/agent-a1"}, WORKER)
    assert len(tap.session("s1")) == len(MAIN)
    assert list(tap.workers_of(["s1"])) == ["a1"] and tap.workers_of(["other"]) == {}


async def test_an_export_past_its_time_is_left_to_the_background() -> None:
    note = await export_in_background(lambda: time.sleep(1.0) or None, 0.05)
    assert note is not None and "within 0.05 s" in note
    assert await export_in_background(lambda: "refused", 5) == "refused"
    assert (
        await export_in_background(lambda: 1 / 0 and None, 5)
        == "the export failed: ZeroDivisionError: division by zero"
    )


def real_sessions() -> Iterator[corpus.Transcript]:
    """The main transcripts of the corpus (`tests/stores/corpus.py`), one at a time."""
    return corpus.sessions(subagents=False)


def test_every_real_transcript_makes_a_tree_with_every_parent_present() -> None:
    for session in real_sessions():
        entries = slim_all(session.entries, False)
        for start, stop in session_runs(entries):
            specs = build_run_spans(
                RunRecord(
                    agent="main",
                    start_ns=0,
                    end_ns=0,
                    sessions=[(session.session_id, entries[start:stop])],
                    workers={},
                )
            )
            keys = {s.key for s in specs}
            assert all(s.parent is None or s.parent in keys for s in specs), session.name
            assert all(s.end_ns >= s.start_ns for s in specs), session.name
            out = sum(
                int(s.attributes["gen_ai.usage.output_tokens"]) for s in specs if s.name.startswith("chat")
            )
            assert specs[0].attributes["gen_ai.usage.output_tokens"] == out


def test_a_handoff_keeps_one_root_over_both_sessions() -> None:
    successor = [
        {
            "type": "user",
            "uuid": "q1",
            "timestamp": at(20),
            "promptSource": "sdk",
            "message": {"content": "Go on."},
        },
        reply(21, "n1", [{"type": "text", "text": "Done."}], usage(4, 40), "end_turn"),
    ]
    step = StepResult(session_id="s2", ok=True, text="Done.", retired=("s1",))
    done = HandoffDone(
        generation=2,
        retired="s1",
        reason="threshold",
        degraded=False,
        context=150_000,
        path=None,
        document="#",
    )
    specs = build_run_spans(
        RunRecord(
            agent="lead",
            start_ns=0,
            end_ns=ns(at(22)) or 0,
            sessions=[("s1", slim_all(MAIN, False)), ("s2", slim_all(successor, False))],
            workers={"a1": slim_all(WORKER, False)},
            result=step,
            events=[(ns(at(19)) or 0, done)],
        )
    )
    root = specs[0]
    conversations = {str(s.attributes["gen_ai.conversation.id"]) for s in specs if s.parent == ROOT}
    assert conversations == {"s1", "s2"} and root.attributes["gen_ai.conversation.id"] == "s2"
    assert root.attributes["flower.handoffs"] == 1 and root.attributes["flower.run.retired_sessions"] == [
        "s1"
    ]
    assert [(e.name, e.attributes["flower.handoff.generation"]) for e in root.events] == [
        ("flower.handoff", 2)
    ]


def test_a_long_run_is_emitted_in_batches_and_no_span_is_dropped() -> None:
    entries: list[dict[str, Any]] = [MAIN[0]]
    for n in range(2_500):  # 5,001 spans: more than twice the batch processor's default queue
        call = {"type": "tool_use", "id": f"c{n}", "name": "Read", "input": {}}
        entries += [reply(2, f"x{n}", [call], usage(1, 1), "tool_use"), result(3, f"c{n}", "ok")]
    specs = build_run_spans(
        RunRecord(agent="lead", start_ns=0, end_ns=1, sessions=[("s1", slim_all(entries, False))], workers={})
    )
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter))

    emit(specs, provider.get_tracer("test"), {None: None}, flush=provider.force_flush)
    provider.force_flush()

    assert len(specs) == 5_001 and len(exporter.get_finished_spans()) == len(specs)
    provider.shutdown()
