"""The report reads 18 real sessions right: their windows, their compactions, no resume that was not one."""

from __future__ import annotations

from typing import Any

import pytest
from claude_agent_sdk import InMemorySessionStore

from flower.cost import price
from flower.report import EconomyReport, ReportOptions, build_report
from flower.report import metrics as m
from flower.report.pricing import window_for
from tests.stores import corpus

pytestmark = pytest.mark.skipif(corpus.missing_reason() is not None, reason=str(corpus.missing_reason()))

PROJECT = "-corpus"


async def one_session(name: str) -> EconomyReport:
    """The report of one corpus session (its subagent transcripts included), the table's windows."""
    store = InMemorySessionStore()
    session = corpus.load(name)
    key: dict[str, Any] = {"project_key": PROJECT, "session_id": session.session_id}
    await store.append(key, session.entries)  # type: ignore[arg-type]
    for path in sorted(corpus.corpus_dir().glob(f"{name}--agent-*.jsonl")):
        sub = {**key, "subpath": "subagents/" + path.stem.split("--", 1)[1]}
        await store.append(sub, corpus.load(path.stem).entries)  # type: ignore[arg-type]
    return await build_report(store, project_key=PROJECT, options=ReportOptions(ask_cli=False))


async def corpus_store() -> InMemorySessionStore:
    store = InMemorySessionStore()
    for session in corpus.sessions():
        _, _, agent = session.name.partition("--")
        key: dict[str, Any] = {"project_key": PROJECT, "session_id": session.session_id}
        if agent:
            key["subpath"] = f"subagents/{agent}"
        await store.append(key, session.entries)  # type: ignore[arg-type]
    return store


async def test_the_report_reads_real_sessions_right() -> None:
    report = await build_report(await corpus_store(), project_key=PROJECT)

    by_id = {s.session_id: s for s in report.sessions}
    assert len(by_id) == 15
    models = {s.model for s in report.sessions}
    assert models <= {"claude-opus-4-5-20251101", "claude-opus-4-6", "claude-sonnet-4-5-20250929"}
    assert {s.window for s in report.sessions} == {200_000}, "the CLI reports 200K for all of them"
    assert report.context.window == 200_000 and "as the CLI reports it" in report.context.window_from

    spotter = by_id[corpus.load("sp-fa812bfe").session_id]
    assert (spotter.subagent_runs, spotter.compactions) == (2, 1), "the compaction worker is no subagent"
    assert spotter.subagent_runs_from_calls == 0, "both workers' transcripts are in the store"
    assert report.compactions == 4 and report.subagent_runs == 11, "11 Task calls ran a worker"
    assert sum(s.subagent_runs_from_calls for s in report.sessions) == 9
    assert "subagent runs: 9 counted from their Agent/Task calls" in "\n".join(report.notes)
    assert report.tokens.compaction.context > 0 and report.tokens.subagents.context > 0

    assert report.resumes == () and all(s.resumes == 0 for s in report.sessions), (
        "single-process sessions: their later prompts are not resumes"
    )
    apierr = by_id[corpus.load("en-b0-apierr-compact").session_id]
    assert apierr.prompts >= 13 and report.api_errors >= 30
    assert report.denials.main == 2, "the two old-format rule denials of en-d8"


async def test_without_the_cli_the_table_knows_the_200k_models() -> None:
    report = await build_report(
        await corpus_store(), project_key=PROJECT, options=ReportOptions(ask_cli=False)
    )
    assert {s.window for s in report.sessions} == {200_000}
    assert report.context.window_from.startswith("model claude-") and "CLI" not in report.context.window_from
    assert [
        window_for(m) for m in ("claude-opus-4-7", "claude-opus-5-5", "fake-x", "claude-opus-4-6[1m]")
    ] == [1_000_000] * 4


async def test_mid_stream_output_counts_are_derived_as_a_lower_bound_and_flagged() -> None:
    """en-37 (CLI 2.1.12): every reply recorded the output count of the start of its stream and no
    `stop_reason`; the report counts them from their content, prints "≥" and says how."""
    session = corpus.load("en-37-rejections")
    replies = m.turns(session.entries)
    recorded = sum(r.recorded_output for r in replies)
    assert all(r.mid_stream for r in replies) and recorded < 200, "a few tokens per reply, as written"

    report = await one_session("en-37-rejections")

    output = report.tokens.main.output
    assert output >= sum(m.output_floor(r.blocks) for r in replies) > 50 * recorded
    assert report.tokens.mid_stream == len(replies) and report.cost.lower_bound
    (note,) = [n for n in report.notes if n.startswith("output tokens:")]
    assert f"{len(replies)} of {len(replies)} replies have no stop_reason" in note and "lower bound" in note
    text = report.render_text()
    assert f"output ≥ {output:,}" in text and "cost          ≥ $" in text


async def test_one_hour_cache_writes_are_priced_at_the_one_hour_rate() -> None:
    """en-e9 wrote only to the 1-hour cache (`ephemeral_1h_input_tokens`): 2x the input price, not 1.25x."""
    report = await one_session("en-e9-interrupts")
    usage = report.tokens.main + report.tokens.subagents + report.tokens.compaction
    assert usage.cache_creation == 0 and usage.cache_creation_1h > 100_000
    (model,) = {model for model, _ in report.cost.by_model}
    assert report.cost.usd == pytest.approx(price([usage], model=model).total)
    assert "(1 h: " in report.render_text()


async def test_a_worker_without_its_transcript_is_counted_from_its_call() -> None:
    """en-d8 ran one Task whose transcript was not kept: one run, counted from the call, and said so."""
    report = await one_session("en-d8-denials")
    (session,) = report.sessions
    assert (report.subagent_runs, session.subagent_runs_from_calls) == (1, 1)
    assert any(n.startswith("subagent runs: 1 counted from their Agent/Task calls") for n in report.notes)
