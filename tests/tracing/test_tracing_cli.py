"""A run's spans and metrics at a real OTLP/HTTP endpoint, through the real CLI on the scripted model.

The scenario: a coordinator delegates to a worker in the foreground (whose `cat` output is spilled)
and to one in the background, then the session is resumed. Both runs sit under the app's own span,
so they are one trace; what is asserted is what arrived at the receiver.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path

import anyio
import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed (pip install -e '.[dev]')")
pytest.importorskip("opentelemetry.proto", reason="the otel extra is not installed (pip install -e '.[dev]')")

from opentelemetry.sdk.trace import TracerProvider

from flower import Runtime, StepResult, TracingPolicy, coordinator, instrument, worker
from flower._cli import main
from flower.events import Event, SubagentStarted, TracingWarning
from flower.report._sources import load_source
from flower.testing import ScriptedModel, Usage, agent, bash, hang_guard, reply
from flower.testing._otlp import OtlpReceiver, Span
from flower.tracing import export_sessions

pytestmark = pytest.mark.cli

COUNTER = worker("Counts lines of files.", "You count lines with the shell.", tools=["Bash", "Read"])
SEARCHER = worker("Searches files.", "You search files with the shell.", tools=["Bash", "Read"])
LEAD = coordinator("lead", "Goal: measure data/.", {"counter": COUNTER, "searcher": SEARCHER})


def used(output: int, read: int, write: int, fresh: int = 3) -> Usage:
    return Usage(
        input_tokens=fresh,
        output_tokens=output,
        cache_read_input_tokens=read,
        cache_creation_input_tokens=write,
    )


def script(model: ScriptedModel) -> None:
    model.script(
        "main",
        [
            reply(
                agent("counter", "Count the lines of data/a.txt.", background=False),
                usage=used(61, 5000, 700),
            ),
            reply(agent("searcher", "Find the lines with 299.", background=True), usage=used(59, 5600, 400)),
            reply("Waiting for the searcher.", usage=used(13, 6000, 300)),
            reply("Done: 3000 lines, 13 with 299.", usage=used(19, 6300, 350)),
            reply("Nothing left.", usage=used(14, 6600, 30)),  # the resume
        ],
    )
    model.script(
        "counter",
        [
            reply(bash("cat data/a.txt"), usage=used(37, 2600, 20)),
            reply(bash("wc -l data/a.txt"), usage=used(38, 2700, 150)),
            reply("REPORT: 3000 lines.", usage=used(12, 2800, 120)),
        ],
    )
    model.script(
        "searcher",
        [
            reply(bash("grep -c 299 data/a.txt"), usage=used(41, 2600, 19)),
            reply("REPORT: 13 lines contain 299.", usage=used(14, 2700, 40)),
        ],
    )


def children(spans: list[Span], parent: Span) -> list[Span]:
    return sorted((s for s in spans if s.parent_span_id == parent.span_id), key=lambda s: s.start_ns)


def usage_of(span: Span) -> dict[str, int]:
    a = span.attributes
    return {
        "input": a["flower.usage.input_tokens"],
        "output": a["gen_ai.usage.output_tokens"],
        "cache_read": a["gen_ai.usage.cache_read.input_tokens"],
        "cache_creation": a["gen_ai.usage.cache_write.input_tokens"],
    }


def expected(result: StepResult) -> dict[str, int]:
    total = result.usage.total
    return {
        "input": total.input,
        "output": total.output,
        "cache_read": total.cache_read,
        "cache_creation": total.cache_creation,
    }


async def test_a_run_with_two_workers_a_spill_and_a_resume_is_one_trace(
    scripted_model: ScriptedModel, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "data").mkdir()
    (workspace / "data" / "a.txt").write_text("".join(f"line {i}\n" for i in range(3000)))
    script(scripted_model)
    app = TracerProvider()  # the app's own tracing: its span is the parent of flower's runs
    with OtlpReceiver() as rx:
        policy = TracingPolicy(endpoint=rx.endpoint, metrics=True)
        rt = Runtime(workspace, configure=scripted_model.attach, tracing=policy)
        events: list[Event] = []
        with app.get_tracer("app").start_as_current_span("job") as job:
            first = await rt.run(LEAD, "Start.", on_event=events.append)
            second = await rt.run(LEAD, "Anything left?", resume=first.session_id, on_event=events.append)
        assert first.ok and second.ok, (first.error, second.error)
        assert not [e for e in events if isinstance(e, TracingWarning)]
        assert {e.background for e in events if isinstance(e, SubagentStarted)} == {False, True}
        spans = list(rx.spans)
        metrics = list(rx.metrics)

    job_id = format(job.get_span_context().span_id, "016x")
    assert {s.trace_id for s in spans} == {format(job.get_span_context().trace_id, "032x")}
    roots = sorted((s for s in spans if s.name == "invoke_agent lead"), key=lambda s: s.start_ns)
    assert [r.parent_span_id for r in roots] == [job_id, job_id]
    names = Counter(s.name for s in spans)
    assert names["invoke_agent counter"] == names["invoke_agent searcher"] == 1
    assert names["execute_tool Agent"] == 2 and names["execute_tool Bash"] == 3
    assert names["chat claude-opus-5-5"] + names.get("chat", 0) >= 10, names

    # the run's root carries StepResult.usage, and its chat spans add up to the same figures
    for root, result in zip(roots, (first, second), strict=True):
        assert usage_of(root) == expected(result)
        total = result.usage.total
        assert (
            root.attributes["gen_ai.usage.input_tokens"]
            == total.input + total.cache_read + total.cache_creation
        )
        assert root.attributes["flower.cost.usd"] == pytest.approx(result.cost_usd)
        chats = [s for s in spans if s.name.startswith("chat") and root.start_ns <= s.start_ns <= root.end_ns]
        summed = {
            k: sum(usage_of(c)[k] for c in chats) for k in ("input", "output", "cache_read", "cache_creation")
        }
        assert summed == expected(result)

    # delegations nest under their Agent calls, each worker's spans under it
    run = roots[0]
    assert run.attributes["flower.delegations"] == 2
    by_id = {s.span_id: s for s in spans}
    for name, background in (("counter", False), ("searcher", True)):
        (delegation,) = [s for s in spans if s.name == f"invoke_agent {name}"]
        call = by_id[delegation.parent_span_id]
        assert call.name == "execute_tool Agent" and by_id[call.parent_span_id] is run
        assert delegation.attributes["flower.delegation.background"] is background
        assert delegation.attributes["flower.delegation.status"] == "completed"
        assert {c.name for c in children(spans, delegation)} >= {"chat claude-opus-5-5", "execute_tool Bash"}
    # the spill: the worker's cat, with its size and path, and the run's totals
    (spilled,) = [s for s in spans if "flower.spill.chars" in s.attributes and s.name == "execute_tool Bash"]
    assert by_id[spilled.parent_span_id].name == "invoke_agent counter"
    assert spilled.attributes["flower.spill.chars"] == len(
        (workspace / "data" / "a.txt").read_text().rstrip()
    )
    assert run.attributes["flower.spill.count"] == 1
    assert run.attributes["flower.spill.paths"] == [spilled.attributes["flower.spill.path"]]
    assert (workspace / ".flower" / spilled.attributes["flower.spill.path"]).is_file()
    # the resume: one reply, and what layer 4 did to the history it loaded
    assert roots[1].attributes["flower.run.resumed"] is True
    assert [c.name for c in children(spans, roots[1])] == ["chat claude-opus-5-5"]
    # no prompt or output text without content=True
    assert not [
        s for s in spans if any(k.startswith(("gen_ai.input", "gen_ai.output")) for k in s.attributes)
    ]

    # metrics: flower.tokens over both runs equals the two StepResults' usage
    sums: Counter[str] = Counter()
    for point in metrics:
        if point.name == "flower.tokens":
            sums[point.attributes["flower.token.kind"]] = max(
                sums[point.attributes["flower.token.kind"]], int(point.value or 0)
            )
    both = [expected(first), expected(second)]
    assert dict(sums) == {
        "input": sum(u["input"] for u in both),
        "output": sum(u["output"] for u in both),
        "cache_read": sum(u["cache_read"] for u in both),
        "cache_write": sum(u["cache_creation"] for u in both),
    }

    # after the fact: a trace per run of the stored session, the same ids on re-export
    loaded = await load_source(workspace)
    with OtlpReceiver() as rx:
        summary = export_sessions(loaded.sessions, endpoint=rx.endpoint, spills=loaded.spills)
        argv = ["report", str(workspace), "--otlp", rx.endpoint + "/v1/traces", "--agent-name", "lead"]
        status = await anyio.to_thread.run_sync(main, argv)  # the traces URL itself works too
        exported = list(rx.spans)
    assert status == 0
    assert summary.ok and summary.sessions == 1 and summary.runs == 2
    assert len(exported) == 2 * summary.spans
    posthoc = sorted(
        (s for s in exported[: summary.spans] if s.parent_span_id == ""), key=lambda s: s.start_ns
    )
    assert [r.name for r in posthoc] == ["invoke_agent main"] * 2  # agent_name not given
    assert len({r.trace_id for r in posthoc}) == 2 and posthoc[0].trace_id == first.session_id.replace(
        "-", ""
    )
    assert {s.attributes["session.id"] for s in exported} == {first.session_id}
    ids = Counter(s.span_id for s in exported)
    assert set(ids.values()) == {2}, "a re-export sends the same span ids"
    assert [usage_of(r) for r in posthoc] == [expected(first), expected(second)]
    for root, live in zip(posthoc, roots, strict=True):  # a run's span ends with the run, as the live one
        assert root.end_ns <= live.end_ns
    assert {s.name for s in exported[summary.spans :] if s.parent_span_id == ""} == {"invoke_agent lead"}


def refused_endpoint() -> str:
    """A loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


async def test_an_endpoint_that_refuses_is_a_warning_and_the_run_is_ok(
    scripted_model: ScriptedModel, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")  # the exporter gives up after 1 s of retries
    scripted_model.script("main", ["Hello."])
    policy = TracingPolicy(endpoint=refused_endpoint(), flush_timeout=min(hang_guard(), 600))
    events: list[Event] = []

    result = await Runtime(workspace, configure=scripted_model.attach, tracing=policy).run(
        LEAD, "Say hello.", on_event=events.append
    )

    assert result.ok and result.text == "Hello."
    (warning,) = [e for e in events if isinstance(e, TracingWarning)]
    assert "not exported" in warning.message


async def test_with_the_cli_tracing_its_spans_nest_under_the_run_and_requests_are_not_counted_twice(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a\nb\nc\n")
    scripted_model.script(
        "main", [agent("counter", "Count the lines of a.txt.", background=False), "3 lines."]
    )
    scripted_model.script("counter", [bash("wc -l a.txt"), "REPORT: 3 lines."])
    with OtlpReceiver() as rx:
        policy = TracingPolicy(endpoint=rx.endpoint, cli=True)
        result = await Runtime(workspace, configure=scripted_model.attach, tracing=policy).run(LEAD, "Start.")
        rx.wait_for(lambda r: any(s.name == "claude_code.interaction" for s in r.spans))
        spans = list(rx.spans)
    assert result.ok, result.error

    (root,) = [s for s in spans if s.name == "invoke_agent lead"]
    interactions = [s for s in spans if s.name == "claude_code.interaction"]
    assert interactions and {s.parent_span_id for s in interactions} == {root.span_id}
    assert {s.trace_id for s in spans} == {root.trace_id}
    # the requests and tools are the CLI's spans; flower keeps the run and the delegation
    assert [s.name for s in spans if s.scope == "flower" and s.span_id != root.span_id] == [
        "invoke_agent counter"
    ]
    assert [s.parent_span_id for s in spans if s.name == "invoke_agent counter"] == [root.span_id]
    assert sum(s.name == "claude_code.llm_request" for s in spans) == len(scripted_model.requests())
    assert usage_of(root) == expected(result)


async def test_instrument_makes_each_run_of_a_session_a_tree_under_the_app_span(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", [bash("echo hi"), "Said hi."])
    app = TracerProvider()
    with OtlpReceiver() as rx:
        options = instrument(
            scripted_model.options(cwd=str(workspace)),
            workspace=workspace,
            tracing=TracingPolicy(endpoint=rx.endpoint, agent_name="app"),
        )
        with app.get_tracer("app").start_as_current_span("job") as job:
            run = await scripted_model.run("Say hi.", options=options)
        assert rx.wait_for(lambda r: any(s.name == "invoke_agent app" for s in r.spans))
        spans = list(rx.spans)
    assert run.text == "Said hi."

    (root,) = [s for s in spans if s.name == "invoke_agent app"]
    assert root.parent_span_id == format(job.get_span_context().span_id, "016x")
    assert sorted(c.name for c in children(spans, root)) == [
        "chat claude-opus-5-5",
        "chat claude-opus-5-5",
        "execute_tool Bash",
    ]
    assert root.attributes["gen_ai.usage.output_tokens"] == sum(
        c.attributes["gen_ai.usage.output_tokens"] for c in children(spans, root) if c.name.startswith("chat")
    )


def test_with_tracing_off_flower_loads_nothing_of_the_opentelemetry_sdk(tmp_path: Path) -> None:
    code = (
        "import sys, flower\n"
        "from claude_agent_sdk import ClaudeAgentOptions\n"
        "rt = flower.Runtime(sys.argv[1])\n"
        "flower.instrument(ClaudeAgentOptions(), workspace=sys.argv[1])\n"
        "heavy = ('opentelemetry.sdk', 'opentelemetry.exporter', 'flower.tracing._live',"
        " 'flower.tracing._emit')\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(heavy))\n"
        "print(rt.tracing, loaded)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.strip() == "None []", done.stdout + done.stderr
