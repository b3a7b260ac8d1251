"""Every example runs offline against the scripted model and prints what it promises."""

from __future__ import annotations

import os
import re
import runpy
import subprocess
import sys

import pytest

from flower.testing import hang_guard
from tests.example_runs import EXAMPLES, assert_says_what_starts
from tests.printed import assert_prints, docs_output

LIVE_EXAMPLES = ["hello_worker.py", "two_workers.py", "resume.py", "handoff.py"]


def offline(name: str) -> str:
    """Run an example in a fresh process, as a user would, and return what it printed."""
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        capture_output=True,
        text=True,
        timeout=hang_guard(),
        check=False,
    )
    assert done.returncode == 0, f"{name} failed:\n{done.stdout}\n{done.stderr}"
    assert_says_what_starts(name, done.stderr)
    assert_prints(docs_output("examples.md", name), done.stdout, name)
    return done.stdout


@pytest.mark.cli
def test_hello_worker() -> None:
    out = offline("hello_worker.py")
    assert "The analyst says: data/ holds 172 lines in 3 files." in out
    assert "ok=True requests: main=2 analyst=2" in out


@pytest.mark.cli
def test_two_workers_fix_and_commit_in_a_real_repository() -> None:
    out = offline("two_workers.py")
    assert "tests before: FAILING" in out and "tests after: OK" in out
    assert "[lead] Bash git status -s && git log --oneline -3" in out  # a glance, run by the coordinator
    assert "[scout] reports: FOUND: inventory.py:6 sums counts[1:]" in out  # computed from real grep output
    assert "[fixer] Edit inventory.py" in out
    assert "requests: main=5 scout=3 fixer=4" in out
    assert "git log: Fix total(): count the first item | Add inventory.total and its test" in out
    assert "Fixed and committed: Fix total(): count the first item" in out and "ok=True" in out


@pytest.mark.cli
def test_resume_shows_what_the_store_rewrote() -> None:
    out = offline("resume.py")
    assert "first run: ok=True denied=['Write', 'Write']" in out
    assert "expired  'ls -la data'" in out and "expired  'wc -l data/*.csv'" in out
    assert "denial   'Write'" in out
    assert "rt.store.last_report: 2 expired, 1 denials dropped;" in out
    assert "resumed: ok=True same session=True" in out
    # the resumed model saw the rewritten history, and re-ran the glance rather than trust an old one
    assert "coordinator: My history holds 2 expired results and 1 refusal." in out
    assert "coordinator: Not clean: `?? notes.md`" in out


@pytest.mark.cli
def test_handoff_writes_a_document_and_a_successor_goes_on() -> None:
    out = offline("handoff.py")
    assert "warning: context 18,010 tokens, handoff at 22,000" in out
    assert "handoff: at 25,010 tokens (threshold), generation 2 starts, degraded=False" in out
    assert "the document=True, the user's constraint=True, chapter 1's text=False" in out
    assert "handoff document: .flower/notes/handoff.md" in out
    assert "next step in it: Read chapters/03.txt" in out
    assert "retired sessions: 1;" in out and "ok=True" in out
    assert "1. Chapter 1: the harbour. 2. Chapter 2: the storm. 3. Chapter 3: the return." in out


COUNTS = {4: "Four", 5: "Five", 6: "Six", 7: "Seven", 8: "Eight"}


def test_the_pages_count_the_scripts_and_name_the_live_ones() -> None:
    # a newcomer read "Four scripts" for six, and "every example takes --live" where two do not
    docs = EXAMPLES.parent / "docs"
    scripts = sorted(path.name for path in EXAMPLES.glob("*.py"))
    page = (docs / "examples.md").read_text(encoding="utf-8")
    assert page.count(f"{COUNTS[len(scripts)]} scripts in `examples/`") == 1, "the count of examples is wrong"
    headed = re.findall(r"^## `(\w+\.py)`", page, flags=re.MULTILINE)
    assert sorted(headed) == scripts, (
        f"docs/examples.md has a section for {headed}, examples/ holds {scripts}"
    )
    for where, text in (
        ("examples.md", page),
        ("getting-started.md", (docs / "getting-started.md").read_text(encoding="utf-8")),
    ):
        (sentence,) = [
            s for s in re.split(r"(?<=\.)\s", text.replace("\n", " ")) if "run live" in s and "`--live`" in s
        ]
        named = re.findall(r"`(\w+\.py)`", sentence)
        assert named == LIVE_EXAMPLES, f"docs/{where} says {named} run with --live: {sentence}"


@pytest.mark.parametrize("name", LIVE_EXAMPLES)
def test_live_without_a_key_says_so_and_stops(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setattr(sys, "argv", [name, "--live"])

    with pytest.raises(SystemExit) as stopped:
        runpy.run_path(str(EXAMPLES / name), run_name="__main__")

    assert stopped.value.code != 0 and "set ANTHROPIC_API_KEY" in str(stopped.value.code)
    assert capsys.readouterr().out == ""  # stopped before doing anything


@pytest.mark.cli
def test_fleet_moves_a_session_to_another_machine(postgres_dsn: str) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "fleet.py")],
        capture_output=True,
        text=True,
        timeout=hang_guard(),
        check=False,
        env={**os.environ, "FLOWER_POSTGRES_DSN": postgres_dsn},
    )
    assert done.returncode == 0, f"fleet.py failed:\n{done.stdout}\n{done.stderr}"
    assert_says_what_starts("fleet.py", done.stderr)
    assert_prints(docs_output("examples.md", "fleet.py"), done.stdout, "fleet.py")
    out = done.stdout
    assert "machine-b/repo/.flower/spill/" in out and "machine-a/repo" not in out
    assert "machine C: refused, the session is leased by machine-b" in out
    assert "machine B: test_checkout FAILED: expected 3 items, got 2. (ok=True)" in out
    assert "fleet report: 1 session, runners machine-a, machine-b" in out
