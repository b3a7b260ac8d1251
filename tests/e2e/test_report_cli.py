"""The cap on workers' reports through the real CLI: the coordinator never sees a long report whole."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from flower import Runtime, build_report, coordinator, worker
from flower.testing import ScriptedModel, agent

pytestmark = pytest.mark.cli

ANALYST = worker("Analyses logs.", "You read logs.", tools=["Bash", "Read"])
LONG = "REPORT-HEAD: 3 tests fail\n" + "".join(f"log line {i}: something happened\n" for i in range(400))
SHORT = "3 tests fail (test_a, test_b, test_c); details in the saved report."


def lead() -> object:
    return coordinator("lead", "Goal: find the failures.", {"analyst": ANALYST})


def saved_path(text: str) -> Path:
    found = re.search(r"saved whole to (\S+?\.txt)", text)
    assert found, f"no saved path in {text[:300]!r}"
    return Path(found.group(1))


async def test_a_long_foreground_report_is_cut_to_its_head_without_another_worker_request(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", [agent("analyst", "Find the failures.", background=False), "noted"])
    scripted_model.script("analyst", [LONG])  # one reply only: a request for a second would fail the run

    result = await Runtime(workspace, configure=scripted_model.attach).run(lead(), "Go.")

    assert result.ok, result.error
    assert len(scripted_model.requests("analyst")) == 1, "the worker was not asked again"
    seen = scripted_model.request("main", -1)
    assert "REPORT-HEAD: 3 tests fail" in seen and "log line 30:" in seen, "the head reaches the coordinator"
    assert "log line 399" not in seen, "the rest does not"
    found = re.search(
        r"\[flower: report cut at ([\d,]+) of ([\d,]+) chars; the whole report: (\S+?\.txt)\]",
        str(seen.messages),
    )
    assert found, "the coordinator is told where the whole report is"
    assert int(found.group(2).replace(",", "")) == len(LONG), "the CLI keeps its last newline"
    path = Path(found.group(3))
    assert path.is_relative_to(workspace / ".flower" / "artifacts" / "reports")
    assert path.read_text().endswith(LONG), "the long report is kept whole"
    assert "full report of worker analyst" in (workspace / ".flower" / "INDEX.md").read_text()
    economy = await build_report(workspace)  # read back from the store, as for any run
    shown = int(found.group(1).replace(",", ""))
    assert (economy.reports.cut, economy.reports.sent_back) == (1, 0)
    assert economy.reports.chars == len(LONG) - shown
    assert "1 cut to its head" in economy.render_text()


async def test_a_long_background_report_is_saved_and_the_coordinator_gets_the_short_one(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script(
        "main", [agent("analyst", "Find the failures.", background=True), "waiting", "noted"]
    )
    scripted_model.script("analyst", [LONG, SHORT])

    result = await Runtime(workspace, configure=scripted_model.attach).run(lead(), "Go.")

    assert result.ok, result.error
    sent_back = scripted_model.request("analyst", 1)
    assert "flower: your report is" in sent_back, "the worker was asked for a short report"
    path = saved_path(sent_back.summary() + str(sent_back.messages))
    assert path.is_relative_to(workspace / ".flower" / "artifacts" / "reports")
    assert path.read_text().endswith(LONG.rstrip()), "the long report is kept whole"
    last = scripted_model.request("main", -1)
    assert SHORT in last and "log line 399" not in last, "the coordinator sees only the short report"
    economy = await build_report(workspace)
    assert (economy.reports.sent_back, economy.reports.cut, economy.reports.chars) == (
        1,
        0,
        len(LONG.rstrip()),
    )
    assert "1 sent back for a short one" in economy.render_text()


async def test_a_second_long_answer_passes_and_no_limit_sends_nothing_back(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", [agent("analyst", "Find them.", background=True), "waiting", "noted"])
    scripted_model.script("analyst", [LONG, LONG + "SECOND ANSWER"])
    await Runtime(workspace, configure=scripted_model.attach).run(lead(), "Go.")
    seen = scripted_model.request("main", -1)
    assert "SECOND ANSWER" in seen and "log line 399" in seen

    scripted_model.script("main", [agent("analyst", "Find them.", background=False), "noted"])
    scripted_model.script("analyst", [LONG])  # one reply only: a request for a second would fail the run
    unlimited = Runtime(workspace, configure=scripted_model.attach, report_limit=None)
    assert (await unlimited.run(lead(), "Go.")).ok
    assert "log line 399" in scripted_model.request("main", -1)
