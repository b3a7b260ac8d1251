"""A what-if a user can act on: what the pauses cost, prices and rates assumed and named, ranges bounded
or split into signed scenarios, a short first screen, then what to do next."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from benchmarks.what_if_corpus import lay_out
from flower._cli import main
from flower._cost import DEFAULT_MODEL
from flower.report._what_if import build_what_if
from flower.report._what_if.estimate import DelegationLine
from flower.report._what_if.render import FIRST_SCREEN_WORDS, delegation_words
from tests.report import what_if_history as h
from tests.stores import corpus
from tests.stores.transcripts import Transcript


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status = main(["report", *argv])
    out, _ = capsys.readouterr()
    return status, out


async def test_a_pause_that_let_the_cache_expire_is_priced_and_said(tmp_path: Path) -> None:
    """S2: a prompt two hours after the last request (the 1-hour cache gone) writes the 31,200 tokens the
    cache held again; the prompt half a minute later finds it warm. Sonnet 4.6: a 1-hour write is $6 a
    million tokens, a read $0.30."""
    report = await build_what_if(h.history(tmp_path), sessions=[h.S2])
    (s2,) = report.sessions
    rec = s2.as_recorded
    assert (rec.idle_pauses, rec.idle_tokens) == (1, 31_200)
    assert rec.idle_usd == pytest.approx(31_200 * (6.0 - 0.3) / 1e6, abs=1e-12)
    assert "Pauses that let the prompt cache expire cost $0.18" in report.summary
    assert (
        "across your pauses: coming back within the cache's lifetime avoids this cost" in report.render_text()
    )


async def test_an_unknown_model_is_priced_as_the_default_and_named(tmp_path: Path) -> None:
    projects = h.history(tmp_path)
    path = projects / "-home-me-alpha" / f"{h.S1}.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for entry in lines:
        if entry.get("type") == "assistant":
            entry["message"]["model"] = "claude-fable-5"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    report = await build_what_if(projects)
    by_id = {s.session_id: s for s in report.sessions}
    assert by_id[h.S1].as_recorded.unpriced == ("claude-fable-5",) and by_id[h.S2].as_recorded.unpriced == ()
    assert report.total.as_recorded.unpriced == ("claude-fable-5",)
    assert f"Unknown price for claude-fable-5: priced as {DEFAULT_MODEL}." in report.summary
    text = report.render_text()
    assert f"no price is known for claude-fable-5: priced as {DEFAULT_MODEL}" in text
    assert "claude-fable-5's typical 0.50 used" not in text, "S1 measured its own rate"


def test_a_narrow_estimate_is_one_range_and_a_wide_one_two_signed_scenarios() -> None:
    narrow = DelegationLine(loops=1, recorded_usd=10.0, cost_usd_low=7.0, cost_usd_high=8.0)
    assert narrow.narrow and delegation_words(narrow) == "saves $2.00 to $3.00"
    losing = DelegationLine(loops=1, recorded_usd=10.0, cost_usd_low=11.0, cost_usd_high=11.5)
    assert losing.narrow and delegation_words(losing) == "loses $1.00 to $1.50"
    wide = DelegationLine(loops=1, recorded_usd=10.0, cost_usd_low=7.0, cost_usd_high=11.0)
    assert not wide.narrow
    assert delegation_words(wide) == "saves $3.00 in the lean case, loses $1.00 in the heavy case"
    both_gains = DelegationLine(loops=1, recorded_usd=10.0, cost_usd_low=5.0, cost_usd_high=9.0)
    assert not both_gains.narrow and "saves $5.00 in the lean case, saves $1.00" in delegation_words(
        both_gains
    )


@pytest.fixture
def real_projects(tmp_path: Path) -> Path:
    """The real sessions beside the repository (`--corpus DIR`, else the shared ones), laid out as the CLI
    keeps them (links, not copies)."""
    reason = corpus.missing_reason(corpus.real_dir())
    if reason is not None:
        pytest.skip(reason)
    lay_out(corpus.real_dir(), tmp_path / "projects")
    return tmp_path / "projects"


def _saved(cell: str) -> float:
    return (
        -float(cell[6:].replace(",", "")) if cell.startswith("loss $") else float(cell[1:].replace(",", ""))
    )


def test_on_real_sessions_every_range_is_bounded_and_every_line_signed(
    real_projects: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No spill range above the recorded cost; every delegation line one narrow range or two scenarios
    with their signs, a loss printed as one; a first screen of at most 80 words, then what to do next."""
    status, out = _run(capsys, "--what-if", str(real_projects), "--json")
    assert status == 0
    report = json.loads(out)
    assert len(report["summary"].split()) <= FIRST_SCREEN_WORDS
    for session in [*report["sessions"], {"session_id": "total", **report["total"]}]:
        recorded = session["as_recorded"]["cost_usd"]
        layers = session["layers"]
        for name in ("spill", "spill_and_layer4"):
            line = layers[name]
            assert line["replay_usd"] <= line["cost_usd"] <= line["read_back_usd"] <= recorded + 1e-9, (
                session["session_id"],
                name,
            )
        d = layers["delegation"]
        line = DelegationLine(
            loops=d["loops"],
            recorded_usd=d["recorded_usd"],
            cost_usd_low=d["cost_usd_low"],
            cost_usd_high=d["cost_usd_high"],
        )
        assert d["recorded_usd"] == pytest.approx(recorded)
        assert (d["saved_usd_lean"], d["saved_usd_heavy"]) == pytest.approx(
            (recorded - d["cost_usd_low"], recorded - d["cost_usd_high"]), abs=2e-6
        )  # each of the three is rounded to 6 decimals on its own
        words = delegation_words(line)
        if d["narrow"]:
            low, high = sorted((abs(d["saved_usd_lean"]), abs(d["saved_usd_heavy"])))
            assert high - low <= 0.6 * (low + high) / 2 + 1e-9 and " to " in words
        else:
            assert "in the lean case" in words and "in the heavy case" in words
            for value in (d["saved_usd_lean"], d["saved_usd_heavy"]):
                assert ("loses" if value < 0 else "saves") in words
    status, text = _run(capsys, "--what-if", str(real_projects))
    assert status == 0
    first = text.split("\n" + "-" * 100, 1)[0]
    assert len(first.split()) - 3 <= FIRST_SCREEN_WORDS  # "flower what-if: <source>" first
    rows = [line for line in text.splitlines() if re.match(r"  \S{8}  \d{4}-\d\d-\d\d \d\d:\d\d ", line)]
    by_id = {s["session_id"][:8]: s for s in report["sessions"]}
    assert rows
    for row in rows:
        cells = re.findall(r"loss \$[\d,.]+|\$[\d,.]+|-(?=\s|$)", row[28:])
        session = by_id[row.split()[0]]
        assert _saved(cells[2]) == pytest.approx(
            session["layers"]["spill_and_layer4"]["saved_usd"], abs=0.006
        )
        if session["layers"]["delegation"]["loops"]:
            lean = session["layers"]["delegation"]["saved_usd_lean"]
            assert _saved(cells[3]) == pytest.approx(lean, abs=0.006)
            assert cells[3].startswith("loss") == (round(lean, 2) < 0)
    assert "what to do next" in text and 'flower run "GOAL"' in text and "Claude Agent SDK" in text
    assert "own_steps=0" in text and "strict" in text


def test_a_rate_outside_the_bounds_is_dropped_for_the_models_and_named() -> None:
    from flower.report._what_if.replay import RATE_BOUNDS, model_rate, session_rate, thread_of

    assert RATE_BOUNDS[0] < 0.45 and RATE_BOUNDS[1] > 0.55, "current models measure 0.45-0.55"
    assert (
        model_rate("claude-fable-5")
        == model_rate("claude-opus-4-8")
        == model_rate("claude-sonnet-4-6")
        == 0.5
    )
    assert model_rate("claude-opus-4-6") == 0.35
    t = Transcript(session_id=h.S1)
    t.prompt("go")
    for number in range(4):  # each 4,000-char output grows the context by 4,000 tokens: 1 a char
        h._use(t.assistant(t.bash("cat big", f"b{number}")), (5, 10_000 + 4_000 * number, 10, 10))
        t.result(f"b{number}", "z" * 4_000)
    h._use(t.assistant({"type": "text", "text": "done"}), (5, 26_000, 10, 10))
    for entry in t.entries:
        if entry.get("type") == "assistant":
            entry["message"]["model"] = "claude-fable-5"
    rate = session_rate([thread_of("main", copy.deepcopy(t.entries))])
    assert rate.value == 0.5 and rate.measured is not None and rate.measured > RATE_BOUNDS[1]
    assert (
        rate.fallback.startswith(f"measured {rate.measured:.2f}, outside")
        and "claude-fable-5" in rate.fallback
    )
