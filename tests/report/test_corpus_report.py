"""The report reads every session of a corpus right (`tests/stores/corpus.py`: any directory of transcripts).

Each session's report is checked against what its transcripts hold, read without flower's code
(`tests/stores/oracle.py`): its replies and their usage (one per `message.id`), its compactions, its
refusals, its workers; its cost is those replies priced by flower's one cost model, model by model. Then
the whole corpus in one store: the totals are the sums of the sessions'.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from claude_agent_sdk import InMemorySessionStore

from flower._cost import price
from flower._usage import TokenUsage
from flower.report import EconomyReport, ReportOptions, build_report
from flower.report import _metrics as m
from flower.report._pricing import window_for
from tests.stores import corpus
from tests.stores.oracle import Reply, calls, refusals, replies

PROJECT = "-corpus"
NAMES = corpus.names(subagents=False)
OFFLINE = ReportOptions(ask_cli=False)


async def one_session(session: corpus.Transcript) -> EconomyReport:
    """The report of one session (its subagent transcripts included), the table's windows."""
    store = InMemorySessionStore()
    await corpus.into_store(session, store, PROJECT)
    return await build_report(store, project_key=PROJECT, options=OFFLINE)


def usage(reply: Reply) -> TokenUsage:
    """A reply's usage as the report must count it: a reply with no `stop_reason` recorded its output
    count as its stream started, so it counts at least what its content needs."""
    output = reply.count("output_tokens")
    if not reply.stopped:
        output = max(output, m.output_floor(reply.blocks))
    return TokenUsage(
        input=reply.count("input_tokens"),
        cache_read=reply.count("cache_read_input_tokens"),
        cache_creation=reply.count("cache_creation_input_tokens") - reply.written_1h,
        cache_creation_1h=reply.written_1h,
        output=output,
    )


def total(found: list[Reply]) -> TokenUsage:
    return sum((usage(r) for r in found), TokenUsage())


def compaction(agent: corpus.Transcript) -> bool:
    return (agent.subpath or "").startswith("subagents/agent-acompact")


@pytest.mark.parametrize("name", NAMES)
async def test_a_session_report_is_what_its_transcripts_hold(name: str) -> None:
    session = corpus.load(name)
    report = await one_session(session)

    (summary,) = report.sessions
    main = replies(session.entries)
    workers = [r for a in session.agents if not compaction(a) for r in replies(a.entries)]
    compacting = [r for a in session.agents if compaction(a) for r in replies(a.entries)]
    assert (report.tokens.main, report.tokens.subagents, report.tokens.compaction) == (
        total(main),
        total(workers),
        total(compacting),
    )
    models = Counter(r.model for r in main).most_common(1)
    assert summary.turns == len(main) and summary.model == (models[0][0] if models else "")
    assert summary.compactions == sum(1 for e in session.entries if e.get("subtype") == "compact_boundary")
    known = calls(session.entries)
    assert report.denials.main == len(refusals(session.entries, known)["refused"])
    kept = sum(1 for a in session.agents if not compaction(a))
    assert summary.subagent_runs == kept + summary.subagent_runs_from_calls
    notes = "\n".join(report.notes)
    assert ("counted from their Agent/Task calls" in notes) == (summary.subagent_runs_from_calls > 0)

    mid_stream = [r for r in main + workers + compacting if not r.stopped and r.usage]
    assert report.tokens.mid_stream == len(mid_stream) and report.cost.lower_bound == bool(mid_stream)
    output = [n for n in report.notes if n.startswith("output tokens:")]
    if mid_stream:
        (note,) = output
        assert f"{len(mid_stream)} of {len(main + workers + compacting)} replies have no stop_reason" in note
        assert (
            "lower bound" in note
            and "output ≥ " in report.render_text()
            and "cost          ≥ $" in report.render_text()
        )
    else:
        assert output == []

    by_model: dict[str, TokenUsage] = {}
    for reply in main + workers + compacting:
        by_model[reply.model] = by_model.get(reply.model, TokenUsage()) + usage(reply)
    expected = {model: price([u], model=model).total for model, u in by_model.items()}
    assert dict(report.cost.by_model) == pytest.approx(expected, abs=1e-9)
    assert report.cost.usd == pytest.approx(sum(expected.values()), abs=1e-9)
    every = report.tokens.main + report.tokens.subagents + report.tokens.compaction
    assert ("(1 h: " in report.render_text()) == (every.cache_creation_1h > 0), "1-hour writes shown apart"
    assert summary.window == window_for(summary.model)


async def whole_corpus() -> tuple[InMemorySessionStore, dict[str, str]]:
    """Every session of the corpus in one store (copies of one session under ids of their own)."""
    store = InMemorySessionStore()
    ids = corpus.unique_ids()
    for session in corpus.sessions(subagents=False):
        await corpus.into_store(session, store, PROJECT, ids[session.name])
    return store, ids


async def test_the_report_of_the_whole_corpus_adds_its_sessions_up() -> None:
    store, ids = await whole_corpus()
    report = await build_report(store, project_key=PROJECT, options=OFFLINE)

    assert sorted(s.session_id for s in report.sessions) == sorted(ids.values())
    assert report.compactions == sum(s.compactions for s in report.sessions)
    assert report.subagent_runs == sum(s.subagent_runs for s in report.sessions)
    each: dict[str, Any] = {"main": TokenUsage(), "subagents": TokenUsage(), "compaction": TokenUsage()}
    cost = 0.0
    for session in corpus.sessions(subagents=False):
        alone = await one_session(session)
        for part in each:
            each[part] = each[part] + getattr(alone.tokens, part)
        cost += alone.cost.usd
    assert (report.tokens.main, report.tokens.subagents, report.tokens.compaction) == (
        each["main"],
        each["subagents"],
        each["compaction"],
    )
    assert report.cost.usd == pytest.approx(cost, rel=1e-9)
    assert len(report.resumes) == sum(s.resumes for s in report.sessions)
