"""Through the real CLI, a run's spans reach a receiver while it goes, as a tracing UI shows them.

Ordered, never timed: the scripted model holds the run's last reply until the receiver has the spans of
what came before it (the wait is the harness's hang guard), and checks that the run's root is not there
yet. The endpoint is given as Phoenix prints its own (the traces URL itself), and nothing else asked
for metrics, so the receiver must see traces only.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed (pip install -e '.[dev]')")
pytest.importorskip("opentelemetry.proto", reason="the otel extra is not installed (pip install -e '.[dev]')")

from flower import Runtime, TracingPolicy, coordinator, worker
from flower.testing import RecordedRequest, ScriptedModel, bash, tool_use
from flower.testing._otlp import OtlpReceiver, Span

pytestmark = pytest.mark.cli

LEAD = coordinator(
    "lead", "Goal: look, then note.", {"scribe": worker("Writes notes.", "You write notes.")}, own_steps=0
)


def arrived(spans: list[Span]) -> bool:
    """The spans of the first two replies' calls, and of the first reply, are in."""
    names = [s.name for s in spans]
    return (
        "execute_tool Bash" in names
        and "execute_tool Write" in names
        and any(n.startswith("chat") for n in names)
    )


async def test_spans_arrive_while_the_run_goes_and_a_denial_is_no_error(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("one\n")
    seen_before_the_end: list[list[Span]] = []

    with OtlpReceiver() as rx:

        async def once_the_receiver_has_them(request: RecordedRequest) -> str:
            await anyio.to_thread.run_sync(rx.wait_for_spans, arrived)  # bounded by the hang guard
            seen_before_the_end.append(list(rx.spans))
            return "Looked; the note is the scribe's to write."

        scripted_model.script(
            "main",
            [
                bash("wc -l notes.txt"),  # a glance: the coordinator runs it
                tool_use("Write", file_path=str(workspace / "x.txt"), content="x"),  # the wall denies it
                once_the_receiver_has_them,
            ],
        )
        policy = TracingPolicy(endpoint=f"{rx.endpoint}/v1/traces", content=True)  # Phoenix's form
        rt = Runtime(workspace, configure=scripted_model.attach, tracing=policy)
        result = await rt.run(LEAD, "Look around.")
        spans = list(rx.spans)
        paths = {path for path, _, _ in rx.requests}

    assert result.ok, result.error
    (before,) = seen_before_the_end
    assert arrived(before), [s.name for s in before]
    assert not [s for s in before if s.name.startswith("invoke_agent")], "the root came only with the end"
    assert paths == {"/v1/traces"}, "the traces URL as given, and no metrics nobody configured"

    (root,) = [s for s in spans if s.name == "invoke_agent lead"]
    assert {s.trace_id for s in spans} == {root.trace_id}
    assert {s.attributes["gen_ai.conversation.id"] for s in spans} == {result.session_id}
    assert {s.attributes["session.id"] for s in spans} == {result.session_id}
    (write,) = [s for s in spans if s.name == "execute_tool Write"]
    assert write.status_code == 0 and "error.type" not in write.attributes, "a denial is no error"
    assert write.attributes["flower.denied"] is True and [e[0] for e in write.events] == ["flower.denied"]
    assert "the coordinator does not use Write" in write.events[0][1]["flower.denied.reason"]
    # with content, each model call shows what it answered (here: the denial) and what it said
    last = max((s for s in spans if s.name.startswith("chat")), key=lambda s: s.start_ns)
    (answered,) = json.loads(last.attributes["gen_ai.input.messages"])
    assert answered["parts"][0]["type"] == "tool_call_response"
    assert "does not use Write" in last.attributes["llm.input_messages.0.message.content"]
    assert "the note is the scribe's" in last.attributes["output.value"]
    assert root.attributes["input.value"] == "Look around."
