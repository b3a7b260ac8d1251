"""The report reads 18 real sessions right: their windows, their compactions, no resume that was not one."""

from __future__ import annotations

from typing import Any

import pytest
from claude_agent_sdk import InMemorySessionStore

from flower.report import ReportOptions, build_report
from flower.report.pricing import window_for
from tests.stores import corpus

pytestmark = pytest.mark.skipif(corpus.missing_reason() is not None, reason=str(corpus.missing_reason()))

PROJECT = "-corpus"


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
    assert report.compactions == 4 and report.subagent_runs == 2
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
