"""`flower report --what-if` on a CLI projects directory written as the CLI writes it, and on real ones."""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from benchmarks.what_if_corpus import lay_out
from flower._cli import main
from flower._cost import price
from flower._spill import SPILL_OMISSION, SPILL_POINTER
from flower._usage import TokenUsage
from flower.report import build_report
from flower.report._measured import PREVIEW_READ_BACK_SHARE, WHOLE_READ_CHARS_PER_CHAR
from flower.report._what_if import build_what_if
from flower.report._what_if.readback import REPLY_CHARS
from tests.report import what_if_history as h
from tests.stores import corpus


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["report", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def _sessions(out: str) -> dict[str, dict[str, Any]]:
    return {s["session_id"]: s for s in json.loads(out)["sessions"]}


def _counts(session: dict[str, Any]) -> dict[str, int]:
    """What `--json` says a session spilled, cold-resumed and compacted."""
    layers = session["layers"]
    return {
        "spilled": layers["spill"]["outputs"],
        "cold_resumes": layers["layer4"]["cold_resumes"],
        "compactions": layers["handoff"]["compactions"],
    }


def test_json_counts_equal_an_independent_count_of_the_transcripts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    projects = h.history(tmp_path)
    status, out, _ = _run(capsys, "--what-if", str(projects), "--json")
    assert status == 0
    found = _sessions(out)
    assert set(found) == {h.S1, h.S2, h.S3}
    for session in found.values():
        counted = h.independent_counts(Path(session["path"]))
        assert _counts(session) == counted, session["session_id"]
        assert session["as_recorded"]["compactions"] == counted["compactions"]
    assert [found[s]["layers"]["spill"]["outputs"] for s in (h.S1, h.S2, h.S3)] == [1, 0, 2]
    s1, s3 = found[h.S1]["layers"]["spill"], found[h.S3]["layers"]["spill"]
    assert (s1["quoted_later"], s1["copied_later"]) == (0, 0)
    assert s1["read_backs"] == round(PREVIEW_READ_BACK_SHARE, 3), "read back to look at it, 5 times in 29"
    assert (s3["quoted_later"], s3["copied_later"]) == (1, 1), "the worker copies ERR-4711=disk"
    assert s3["read_backs"] == round(1 + PREVIEW_READ_BACK_SHARE, 3), "its look-up, and the big Read's"
    assert [found[s]["as_recorded"]["stopped"] for s in (h.S1, h.S2, h.S3)] == ["", "", ""]
    assert found[h.S2]["layers"]["layer4"]["resumes"] == 2 and found[h.S2]["as_recorded"]["resumes"] == 2
    total = json.loads(out)["total"]
    assert total["sessions"] == 3 and total["layers"]["spill"]["outputs"] == 3
    delegated = total["layers"]["delegation"]
    assert delegated["estimate"] is True and 0 < delegated["cost_usd_low"] <= delegated["cost_usd_high"]
    assumptions = json.loads(out)["assumptions"]
    assert (assumptions["report_chars"], assumptions["worker_prefix_tokens"]) == ([1_027, 3_480], 5_350)
    assert (assumptions["own_steps"], round(assumptions["worker_prose_chars"], 3)) == (0, 71.05)


def _preview_chars() -> int:
    """S1's 8,000-char output as the hook leaves it: pointer, 300-char head, omission line, 100-char tail."""
    digest = hashlib.sha256(h.S1_BIG.encode()).hexdigest()
    path = f"`{h.CWD}/.flower/spill/{digest[:16]}-bash.txt`"
    pointer = SPILL_POINTER.format(tool="Bash", field="stdout", chars="8,000", path=path)
    omission = SPILL_OMISSION.format(omitted="7,600")
    return len("\n".join([pointer, h.S1_BIG[:300], omission, h.S1_BIG[-100:]]))


def _dollars(*usages: tuple[int, int, int, int], hour: bool = False) -> float:
    """Sonnet 4.6: $3 in, $15 out, $0.30 cache read, $3.75 5-minute and $6 1-hour cache writes per MTok."""
    write = 6.0 if hour else 3.75
    return sum(i * 3 + r * 0.3 + w * write + o * 15 for i, r, w, o in usages) / 1e6


async def test_costs_as_recorded_and_replayed_are_exact(tmp_path: Path) -> None:
    report = await build_what_if(h.history(tmp_path), project_key="-home-me-alpha")
    s1, s2 = report.sessions
    assert s1.as_recorded.cost_usd == pytest.approx(_dollars(*h.S1_USAGE), abs=1e-12)
    assert s1.as_recorded.tokens.cache_write_5m == 22_110 and s1.as_recorded.tokens.cache_write_1h == 0
    assert s2.as_recorded.tokens.cache_write_1h > 0 and s2.as_recorded.tokens.cache_write_5m == 0
    assert s2.as_recorded.cost_usd == pytest.approx(
        price([TokenUsage(**_usage(u)) for u in _s2_usages(tmp_path)], model=h.MODEL).total, abs=1e-12
    )
    # one spilled output, at the rate the one request that carried it measures (2,100 tokens written for
    # its 8,000 chars and the call before it; the report says it is measured on one request only): the
    # request that first carries it writes that many tokens fewer, the next reads that many fewer
    rate = s1.tokens_per_char
    saved = (8_000 - _preview_chars()) * rate
    assert 0.25 < rate < 0.27 and s1.layers.spill.chars_kept_out == 8_000 - _preview_chars()
    assert s1.rate_fallback == f"measured {rate:.2f} on 1 request(s) only"
    (i0, r0, w0, o0), (i1, r1, w1, o1), (i2, r2, w2, o2) = h.S1_USAGE
    replayed = _dollars((i0, r0, w0, o0), (i1, r1, round(w1 - saved), o1), (i2, round(r2 - saved), w2, o2))
    assert s1.layers.spill.replay_usd == pytest.approx(replayed, abs=1e-12)
    assert s1.layers.spill.replay_peak == r2 + w2 + i2 - round(saved)
    # expected: nothing copies from it, so it is read back to look at it 5 times in 29, whole (1.09
    # characters a character: the Read numbers its lines) by the request after it (a request more: it
    # reads what that request wrote, and writes the text), and carried by the last request: 40 of its
    # tokens where that request read its recorded prefix (from 22,160 to 22,200), the rest written
    back = PREVIEW_READ_BACK_SHARE * 8_000 * WHOLE_READ_CHARS_PER_CHAR * rate
    context = i1 + r1 + round(w1 - saved)
    # its reply writes a main thread's expected prose (REPLY_CHARS) as output
    prose = round(PREVIEW_READ_BACK_SHARE * REPLY_CHARS * rate)
    again = PREVIEW_READ_BACK_SHARE * _dollars((0, context, 0, 0)) + _dollars((0, 0, round(back), prose))
    last = (i2, round(r2 - saved + 40), round(w2 + back - 40), o2)
    expected = _dollars((i0, r0, w0, o0), (i1, r1, round(w1 - saved), o1), last) + again
    assert s1.layers.spill.cost_usd == pytest.approx(expected, abs=1e-12)
    assert s1.layers.spill.saved_usd == pytest.approx(_dollars(*h.S1_USAGE) - expected, abs=1e-12)
    # a run reads it back whole or not at all, 5 times in 29: the typical run (the median of the draws)
    # does not, so its peak is the replay's, not the expected context's
    assert s1.layers.spill.main_peak == s1.layers.spill.replay_peak == sum(last[:3]) - round(back)
    assert s1.layers.spill.read_back_chars == round(PREVIEW_READ_BACK_SHARE * 8_720)
    assert s1.layers.glance.bash_calls == 2 and s1.layers.glance.accepted == 1  # `ls`, not the generator


def _usage(raw: dict[str, Any]) -> dict[str, int]:
    hour = raw["cache_creation"]["ephemeral_1h_input_tokens"]
    return {
        "input": raw["input_tokens"],
        "cache_read": raw["cache_read_input_tokens"],
        "cache_creation": raw["cache_creation_input_tokens"] - hour,
        "cache_creation_1h": hour,
        "output": raw["output_tokens"],
    }


def _s2_usages(root: Path) -> list[dict[str, Any]]:
    lines = (root / "projects" / "-home-me-alpha" / f"{h.S2}.jsonl").read_text().splitlines()
    entries = [json.loads(line) for line in lines if line.startswith('{"parentUuid"')]
    replies = {e["message"]["id"]: e["message"]["usage"] for e in entries if e["type"] == "assistant"}
    return list(replies.values())


async def test_layer4_replays_the_store_at_each_resume(tmp_path: Path) -> None:
    report = await build_what_if(h.history(tmp_path), sessions=[h.S2])
    (s2,) = report.sessions
    line = s2.layers.layer4
    assert (line.resumes, line.cold_resumes) == (2, 1)
    # both results of ephemeral commands expire after the idle hours, at the cold load and again (the
    # same decisions, repeated) at the warm one; one of the two denials is pruned each time
    assert (line.expired, line.denials_pruned) == (4, 2)
    assert line.chars_saved > 0 and line.saved_usd > 0 and line.cost_usd < s2.as_recorded.cost_usd


def test_a_damaged_line_is_skipped_with_a_warning_naming_the_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    projects = h.history(tmp_path)
    with caplog.at_level(logging.WARNING):
        status, out, _ = _run(capsys, "--what-if", str(projects), "--json", "--session", h.S2)
    assert status == 0
    damaged = projects / "-home-me-alpha" / f"{h.S2}.jsonl"
    assert any(f"{damaged} line 3" in record.getMessage() for record in caplog.records)
    (s2,) = _sessions(out).values()
    assert s2["as_recorded"]["requests"] == 7, "the rest of the session is read"


def test_filters_by_project_and_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    projects = h.history(tmp_path)
    _, out, _ = _run(capsys, "--what-if", str(projects), "--json", "--project", "-home-me-beta")
    assert set(_sessions(out)) == {h.S3}
    _, out, _ = _run(capsys, "--what-if", str(projects), "--json", "--project", "*alpha")
    assert set(_sessions(out)) == {h.S1, h.S2}
    _, out, _ = _run(capsys, "--what-if", str(projects), "--json", "--project", "/home/me/alpha")
    assert set(_sessions(out)) == {h.S1, h.S2}, "a path, named as the CLI names its directory"
    _, out, _ = _run(capsys, "--what-if", str(projects), "--json", "--since", "2026-11-30")
    assert set(_sessions(out)) == {h.S3}
    _, out, _ = _run(capsys, "--what-if", str(projects), "--json", "--until", "2026-11-29T23:00")
    assert set(_sessions(out)) == {h.S1, h.S2}
    assert json.loads(out)["filters"]["until"] == "2026-11-29T23:00"


def test_no_content_is_printed_unless_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    projects = h.history(tmp_path)
    plots = tmp_path / "plots"
    for argv in ([], ["--json"], ["--plots", str(plots)]):
        status, out, err = _run(capsys, "--what-if", str(projects), *argv)
        assert status == 0
        for secret in (h.SECRET_PROMPT, h.SECRET_OUTPUT):
            assert secret not in out and secret not in err
    assert "3 Claude Code session(s)" in out and "ESTIMATE" in out and "what to do next" in out
    assert sorted(p.name for p in plots.iterdir()) == ["savings.png", "sessions.png"]
    _, out, _ = _run(capsys, "--what-if", str(projects), "--show-prompts")
    assert h.SECRET_PROMPT in out, "asked for: each session's first prompt as its title"


async def test_the_report_reads_the_cli_files_directly(tmp_path: Path) -> None:
    projects = h.history(tmp_path, damaged=False)
    whole = await build_report(projects, options=_no_cli())
    assert {s.session_id for s in whole.sessions} == {h.S1, h.S2, h.S3}
    assert whole.compactions == 1 and whole.subagent_runs == 1 and len(whole.resumes) == 2
    one = await build_report(projects / "-home-me-beta" / f"{h.S3}.jsonl", options=_no_cli())
    assert [s.session_id for s in one.sessions] == [h.S3] and one.turns.subagents == 2
    config = await build_report(tmp_path, options=_no_cli(), project_key="-home-me-alpha")
    assert {s.session_id for s in config.sessions} == {h.S1, h.S2}, "a config directory: its projects/"


def _no_cli() -> Any:
    from flower.report import ReportOptions

    return ReportOptions(ask_cli=False)


@pytest.fixture
def corpus_projects(tmp_path: Path) -> Path:
    """The corpus's real sessions (`--corpus DIR`, else the shared ones) laid out as the CLI keeps them
    (links, not copies; checkpoint copies of one session left out: `benchmarks/what_if_corpus.py`)."""
    reason = corpus.missing_reason()
    if reason is not None:
        pytest.skip(reason)
    lay_out(corpus.corpus_dir(), tmp_path / "projects")
    return tmp_path / "projects"


def test_on_real_sessions_the_counts_equal_an_independent_count(
    corpus_projects: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = _run(capsys, "--what-if", str(corpus_projects), "--json")
    assert status == 0
    found = _sessions(out)
    assert len(found) == len(list((corpus_projects / "-corpus").glob("*.jsonl")))
    counted = {}
    for session in found.values():
        counted[session["session_id"]] = h.independent_counts(Path(session["path"]))
        assert _counts(session) == counted[session["session_id"]], session["path"]
    total = json.loads(out)["total"]
    assert total["layers"]["spill"]["outputs"] == sum(c["spilled"] for c in counted.values())
    assert total["as_recorded"]["compactions"] == sum(c["compactions"] for c in counted.values())
    both = total["layers"]["spill_and_layer4"]
    assert both["replay_usd"] <= both["cost_usd"] <= both["read_back_usd"], "the estimate within its range"


def test_a_session_that_stopped_at_the_window_is_said_so_and_its_lines_are_lower_bounds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    t = h.Transcript(session_id=h.S1)
    t.prompt("Work through the pages.")
    h._use(t.assistant(t.bash("cat page-1.md", "p1")), (10, 0, 190_000, 30))
    t.result("p1", "page one")
    error = t.api_error()  # the CLI's own check, once the context is full: a synthetic reply
    error["message"]["content"] = [{"type": "text", "text": "Prompt is too long"}]
    error["error"] = "invalid_request"
    path = tmp_path / "projects" / "-home-me-alpha" / f"{h.S1}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in t.entries))
    status, out, _ = _run(capsys, "--what-if", str(tmp_path / "projects"), "--json")
    assert status == 0
    report = json.loads(out)
    (session,) = report["sessions"]
    assert (session["as_recorded"]["stopped"], session["as_recorded"]["unfinished"]) == ("window", 1)
    assert (report["total"]["as_recorded"]["stopped"], report["total"]["as_recorded"]["unfinished"]) == (
        "",
        1,
    )
    assert "1 session(s) stopped early: lower bounds." in report["summary"]
    _, text, _ = _run(capsys, "--what-if", str(tmp_path / "projects"))
    assert "stopped (window): lower bounds" in text and "1 stopped before finishing" in text


def test_the_text_ends_with_flower_run_for_the_users_own_project(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    projects = h.history(tmp_path)
    status, out, _ = _run(capsys, "--what-if", str(projects), "--json")
    sessions = _sessions(out)
    assert sessions[h.S1]["cwd"] == h.CWD  # as its transcript recorded it
    costliest = max(sessions.values(), key=lambda s: s["as_recorded"]["cost_usd"])
    status, out, _ = _run(capsys, "--what-if", str(projects))
    assert status == 0
    assert out.rstrip().endswith(f'    cd {costliest["cwd"]} && flower run "GOAL"'), out[-400:]
