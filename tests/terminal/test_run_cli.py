"""`flower run` and `flower sessions` through the real CLI and flower's scripted model, as a person runs
them: in a pseudo-terminal (Ctrl-C typed into it), through a pipe, and with `--json`.

What the model saw is read from the scripted model's request log; what the person saw, from the terminal.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flower._terminal import SCRIPTED_MODEL_ENV
from flower.testing import ScriptedModel, bash
from tests.credentials import CHANGE_THE_CLI, VARIABLES
from tests.e2e.processes import processes_of
from tests.terminal import scenario, transcript
from tests.terminal.terminal import Terminal, environment, piped, plain, running, wait_until

pytestmark = pytest.mark.cli

DOCS = Path(__file__).resolve().parents[2] / "docs"
PROVIDERS = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")


def _env(model: ScriptedModel) -> dict[str, str]:
    return environment({SCRIPTED_MODEL_ENV: model.base_url})


def _session(text: str) -> str:
    line = next(line for line in plain(text).splitlines() if line.startswith("session  "))
    return line.split()[1]


def test_a_run_with_two_delegations_a_glance_and_a_spill_then_sessions_then_a_resume(
    scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    repo = scenario.repository(tmp_path)
    gate = scenario.Gate()
    scenario.fix_the_greeting(scripted_model, repo, gate)
    env = _env(scripted_model)

    terminal = Terminal(["run", scenario.GOAL], cwd=repo, env=env)
    first = terminal.wait_line("session")  # the model holds its first reply until this line is read
    gate.open("the first progress line")
    assert terminal.finish() == 0, terminal.text
    assert gate.order == ["the first progress line", "the first reply"]
    shown = plain(terminal.text)

    assert "\x1b[1m" in terminal.text  # a terminal gets bold labels
    lines = [line.strip() for line in shown.splitlines()]
    assert first.strip() in lines
    order = [
        "session",
        "glance   ls src logs",
        "worker   analyst: Find where greet()",
        "spill    analyst's Bash",
        "report   analyst (completed): The typo",
        "worker   builder: In src/greet.py",
        "report   builder (completed): Changed",
        "cost     $",
    ]
    at = [next(i for i, line in enumerate(lines) if line.startswith(start)) for start in order]
    assert at == sorted(at), shown
    assert scenario.ANSWER in shown
    economy = next(line for line in lines if line.startswith("economy"))
    assert "2 delegations, 1 glance, 0 refused" in economy and "spill: 1 output" in economy, economy
    session_id = _session(shown)
    assert (repo / "src" / "greet.py").read_text() == scenario.FIXED  # the builder's Write happened
    spilled = scripted_model.request("analyst", 1).tool_results[0].text
    assert spilled.startswith("[spilled] Bash stdout")  # what the analyst saw: the pointer, not the log
    assert scripted_model.request("builder", 0).last_user_text.endswith(
        "In src/greet.py line 2, 'helo' should be 'hello'. Fix it and run python3 src/greet.py."
    )

    listed = Terminal(["sessions"], cwd=repo, env=env)
    assert listed.finish() == 0, listed.text
    row = next(line for line in listed.text.splitlines() if line.startswith(session_id))
    assert "$0." in row and scenario.GOAL[:30] in row and "1 session," in listed.text

    scenario.anything_else(scripted_model)
    again = Terminal(["run", "--resume", session_id[:8], scenario.NEXT], cwd=repo, env=env)
    assert again.finish() == 0, again.text
    resumed = plain(again.text)
    assert f"session  {session_id} (resumed)" in resumed and scenario.NEXT_ANSWER in resumed
    seen = scripted_model.request("main", -1)
    assert scenario.GOAL in str(seen.messages) and scenario.NEXT in str(seen.messages)  # the whole history


def test_ctrl_c_during_a_delegation_ends_everything_the_run_started_and_the_session_resumes(
    scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    repo = scenario.repository(tmp_path)
    scenario.slow_check(scripted_model)
    env = _env(scripted_model)

    terminal = Terminal(["run", "Run the slow check"], cwd=repo, env=env)
    wait_until(
        lambda: any(
            "FLOWER-RUN-SLOW-CHECK" in c or "sleep 600" in c for c in processes_of(terminal.pid).values()
        ),
        "the builder's slow check running",
    )
    started = processes_of(terminal.pid)  # the CLI, the builder's shell and its sleep...
    terminal.ctrl_c()
    assert terminal.finish() == 130, terminal.text
    shown = plain(terminal.text)
    session_id = _session_from_resume(shown)
    assert "interrupted (SIGINT)" in shown
    wait_until(lambda: not running(started), f"the processes the run started ended ({running(started)})")

    scripted_model.script("main", ["The slow check was stopped before it ended; run it again when needed."])
    again = Terminal(["run", "--resume", session_id, "Where were we?"], cwd=repo, env=env)
    assert again.finish() == 0, again.text
    seen = str(scripted_model.request("main", -1).messages)
    assert "Run the slow check" in seen and scenario.SLOW in seen  # the stopped turn was stored whole


def _session_from_resume(text: str) -> str:
    line = next(line for line in text.splitlines() if "flower run --resume" in line)
    return line.split("--resume", 1)[1].split()[0]


def test_through_a_pipe_the_same_lines_without_colour(scripted_model: ScriptedModel, tmp_path: Path) -> None:
    repo = scenario.repository(tmp_path)
    scenario.fix_the_greeting(scripted_model, repo)

    done = piped(["run", scenario.GOAL], cwd=repo, env=_env(scripted_model))

    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\r" not in done.stdout
    starts = [line.split()[0] for line in done.stdout.splitlines() if line.startswith("  ")]
    assert starts == ["goal", "session", "glance", "worker", "spill", "report", "worker", "report", "cost"]
    assert scenario.ANSWER in done.stdout and "economy  $" in done.stdout
    # docs/run.md shows this run's transcript (from a terminal): the same lines, ids and numbers aside
    page = transcript.page_transcript(DOCS / "run.md").split("\n$ ")[0].split("\n", 1)[1]
    shown = done.stdout.replace(str(repo), transcript.SHOWN_AS)
    assert transcript.normalised(page) == transcript.normalised(shown)


def test_inline_until_does_a_small_goal_without_a_worker(
    scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    repo = scenario.repository(tmp_path)
    scripted_model.script("main", [bash("echo hi > note.txt && echo NOTE-RAN"), "Wrote note.txt."])

    done = piped(["run", "--inline-until", "60000", "Write a note."], cwd=repo, env=_env(scripted_model))

    assert done.returncode == 0, done.stderr
    assert (repo / "note.txt").read_text() == "hi\n" and "Wrote note.txt." in done.stdout
    [result] = scripted_model.request("main", -1).tool_results
    assert not result.is_error and "NOTE-RAN" in result.text
    first = scripted_model.request("main", 0)  # an inline session: one agent, no Agent tool
    assert "Once your context reaches 60,000 tokens" in first.system_text and "Agent" not in first.tool_names


@pytest.mark.parametrize("value", ["0", "many"])
def test_a_bad_inline_until_is_named(tmp_path: Path, value: str) -> None:
    done = piped(["run", "--inline-until", value, "Write a note."], cwd=tmp_path, env=environment())

    assert done.returncode == 2 and "argument --inline-until" in done.stderr
    assert "a positive number of tokens" in done.stderr or "a number of tokens" in done.stderr


def test_json_streams_one_event_per_line(scripted_model: ScriptedModel, tmp_path: Path) -> None:
    repo = scenario.repository(tmp_path)
    scenario.fix_the_greeting(scripted_model, repo)

    done = piped(["run", "--json", scenario.GOAL], cwd=repo, env=_env(scripted_model))

    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds[0] == "SessionStarted" and kinds[-1] == "Done"
    assert kinds.count("SubagentStarted") == 2 and kinds.count("SubagentFinished") == 2
    started = [e["agent"] for e in events if e["event"] == "SubagentStarted"]
    assert started == ["analyst", "builder"]
    last = events[-1]
    assert last["ok"] and last["text"] == scenario.ANSWER and last["session_id"] == events[0]["session_id"]


def test_without_credentials_the_runtime_error_and_no_traceback(tmp_path: Path) -> None:
    repo = scenario.repository(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    env = environment(
        {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")},
        drop=(SCRIPTED_MODEL_ENV, *VARIABLES, *CHANGE_THE_CLI, *PROVIDERS),
    )

    terminal = Terminal(["run", scenario.GOAL], cwd=repo, env=env)
    status = terminal.finish()

    shown = plain(terminal.text)
    assert status == 1, shown
    assert "flower run: error: no credentials for the Claude Code CLI: set ANTHROPIC_API_KEY" in shown
    assert "Traceback" not in shown
