"""A run whose background worker ends during the coordinator's last reply, traced through the real CLI.

The CLI then starts one more turn after the turn's result, for the worker's report (a second `init` and
`ResultMessage` in the same stream). That turn belongs to the run: whether the app drives the SDK itself
(`instrument()`, whose runs are read off the store) or a `Runtime` runs it, the run is one `invoke_agent`
tree whose root ends with the run and holds the extra turn's chat span.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed (pip install -e '.[dev]')")
pytest.importorskip("opentelemetry.proto", reason="the otel extra is not installed (pip install -e '.[dev]')")

from claude_agent_sdk import AgentDefinition, ResultMessage, TaskNotificationMessage, query

from flower import Runtime, TracingPolicy, instrument
from flower.events import Event, SubagentFinished
from flower.testing import ScriptedModel, agent, hang_guard
from flower.testing._otlp import OtlpReceiver, Span
from flower.tracing._windows import WindowTap
from tests.e2e.background import lead, once, reports_late

pytestmark = pytest.mark.cli

ANALYST = AgentDefinition(description="Analyse files.", prompt="You analyse files.", tools=["Read", "Bash"])
FIRST, LAST = "The analyst is on it; I will read its report.", "42 files; the largest is data/big.csv."


def script(model: ScriptedModel, finished: threading.Event) -> None:
    model.script(
        "main",
        [
            agent("analyst", "Count the files of data/.", background=True),
            once(finished, FIRST),  # the worker ends while this reply is in flight
            LAST,  # the CLI's turn for the report
        ],
    )
    model.script("analyst", [reports_late(model)])


def one_tree(spans: list[Span], name: str, chats: int) -> None:
    """One root `name`; every main-thread chat span (`chats` of them) under it, ending before it does."""
    (root,) = [s for s in spans if s.name == name]
    main = [s for s in spans if s.name.startswith("chat") and s.parent_span_id == root.span_id]
    assert len(main) == chats, sorted(s.name for s in spans)
    assert all(root.start_ns <= s.start_ns and s.end_ns <= root.end_ns for s in main)


async def test_instrument_reads_the_extra_turn_as_part_of_the_run(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    finished = threading.Event()
    script(scripted_model, finished)
    results: list[str] = []
    with OtlpReceiver() as rx:
        options = instrument(
            scripted_model.options(cwd=str(workspace), agents={"analyst": ANALYST}),
            workspace=workspace,
            tracing=TracingPolicy(endpoint=rx.endpoint, agent_name="app"),
        )
        async for message in query(prompt="Go.", options=scripted_model.attach(options)):
            if isinstance(message, TaskNotificationMessage):
                finished.set()
            elif isinstance(message, ResultMessage):
                results.append(message.result or "")
        for tap in options.session_store.taps:  # type: ignore[union-attr]
            if isinstance(tap, WindowTap):
                tap.join(hang_guard())  # every window the store saw is exported
        spans = list(rx.spans)
    assert results == [
        "The analyst is on it; I will read its report.",
        "42 files; the largest is data/big.csv.",
    ]
    one_tree(spans, "invoke_agent app", chats=3)


async def test_a_traced_runtime_run_holds_the_extra_turn(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    finished = threading.Event()
    script(scripted_model, finished)

    def on_event(event: Event) -> None:
        if isinstance(event, SubagentFinished):
            finished.set()

    with OtlpReceiver() as rx:
        rt = Runtime(workspace, configure=scripted_model.attach, tracing=TracingPolicy(endpoint=rx.endpoint))
        result = await rt.run(lead(), "Go.", on_event=on_event)  # type: ignore[arg-type]
        assert result.ok and result.results == 2, result.error
        assert rx.wait_for(lambda r: any(s.name == "invoke_agent lead" for s in r.spans))
        spans = list(rx.spans)
    one_tree(spans, "invoke_agent lead", chats=3)
