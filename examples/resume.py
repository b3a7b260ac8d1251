"""Resume a run, and see what the session store (layer 4) pruned from the history before the model saw it.

The first run leaves a history that layer 4 cleans up on resume: the coordinator glances at the
repository eight times (`git status`, `ls`, `cat` are ephemeral: their results go stale), and twice tries
to write a file itself, which the delegation wall refuses (a coordinator's hands-on calls are refused at
once by default), before it delegates the writing to a worker.

The second run resumes that session from a new `Runtime` over the same workspace, as a later process
would, 65 minutes later: layer 4 decides new rewrites only once the prompt cache has expired (within
its lifetime, an hour for a coordinator, a resume repeats the last cold resume's rewrites, so as not to
re-send the cached history). The runs here are seconds apart, so the example moves the store's
timestamps back 65 minutes (`flower.testing.pass_time`), as a real pause would. Before the CLI replays
the history, the store rewrites the copy it hands out: the two oldest glance results expire into a
one-line note
(the six most recent are kept), and the older refusal is dropped with its call (the most recent one is
kept: it is what stops a retry loop). The `StoreReport`
event and `rt.store.last_report` say what was rewritten; SQLite keeps every original entry.

    python examples/resume.py          # offline, against the scripted model
    ANTHROPIC_API_KEY=... python examples/resume.py --live
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from flower import Heartbeat, Runtime, coordinator, worker
from flower.events import Event, StoreReport, Text
from flower.stores import LoadReport
from flower.testing import RecordedRequest, Reply, ScriptedModel, agent, bash, pass_time, reply, tool_use

scribe = worker(
    "Writes and edits files: notes, summaries, reports. Give it the file and what goes in it.",
    "You write files exactly as asked and report the path and one line on what it holds.",
    tools=["Read", "Write", "Edit"],
)
# the strict wall (the default): both of the coordinator's writes are refused
lead = coordinator("lead", "Goal: keep notes on this repository in notes.md.", {"scribe": scribe})
BUDGET = {"max_budget_usd": 0.5}  # live runs only: the CLI stops a session that has spent this much

FIRST = "Survey the repository with quick read-only commands, then have notes.md written."
SECOND = "Go on: is the working tree clean now?"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def make_repository(repo: Path) -> None:
    """A committed repository with a README and 24 daily CSV files (listings long enough to matter)."""
    (repo / "README.md").write_text("# Sales\n\nDaily sales, one CSV per day, in data/.\n")
    (repo / "data").mkdir()
    for day in range(1, 25):
        (repo / "data" / f"sales-2024-06-{day:02d}.csv").write_text("item,count\n" + "widget,3\n" * day)
    (repo / ".gitignore").write_text(".flower/\n")
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "example@flower.invalid")
    git(repo, "config", "user.name", "flower example")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "Daily sales")


def first_run_script(notes: Path) -> ScriptedModel:
    content = "# Notes\n\n- 24 daily CSV files in data/, one commit\n"
    return ScriptedModel(
        main=[
            bash("ls -la data"),
            bash("wc -l data/*.csv"),
            reply(bash("git log --oneline -3"), bash("git status -s"), bash("cat README.md")),
            tool_use("Write", file_path=str(notes), content=content),  # refused: the coordinator delegates
            tool_use("Write", file_path=str(notes), content=content),  # refused again
            agent("scribe", f"Write {notes} with exactly this content:\n{content}"),
            reply(bash("git status -s"), bash("cat notes.md"), bash("ls")),  # eight glances in all
            "Notes written to notes.md.",
        ],
        agents={"scribe": [tool_use("Write", file_path=str(notes), content=content), "Wrote notes.md."]},
    )


def look_again(request: RecordedRequest) -> Reply:
    """The resumed coordinator reads the history it was given (the rewritten one) and re-runs a glance."""
    expired = [r for r in request.tool_results if r.text.startswith("[result of `")]
    refused = [r for r in request.tool_results if "the coordinator does not use Write itself" in r.text]
    seen = f"My history holds {len(expired)} expired results and {len(refused)} refusal."
    return reply(f"{seen} Checking the tree again.", bash("git status -s"))


def answer(request: RecordedRequest) -> str:
    status = request.tool_results[-1].text.strip()
    return f"Not clean: `{status}` (notes.md is new and not committed)." if status else "Clean."


def describe(report: LoadReport) -> list[str]:
    """A LoadReport, one line per change."""
    where = "a subagent's transcript" if report.subpath else "the main transcript"
    lines = [
        f"  {where}: stored {report.entries_in} entries, replayed {report.entries_out}; "
        f"{report.chars_saved} chars saved"
    ]
    for change in report.changes:
        # a denial_note: the refusal kept on resume names the one dropped (its detail holds paths)
        detail = "the kept refusal names it" if change.kind == "denial_note" else repr(change.detail)
        kind = "noted" if change.kind == "denial_note" else change.kind
        lines.append(f"    {kind:<8} {detail:<42} {change.chars_saved:>5} chars")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--live", action="store_true", help="use the real API (needs ANTHROPIC_API_KEY)")
    live = parser.parse_args().live
    if live and not os.environ.get("ANTHROPIC_API_KEY"):
        sys.exit("--live calls the real Anthropic API: set ANTHROPIC_API_KEY first (or run without --live).")

    reports: list[LoadReport] = []

    def on_event(event: Event) -> None:
        match event:
            case StoreReport(report=report):  # sent once per transcript the resume loaded
                reports.append(report)
            case Text(agent=None, text=text):
                print(f"  coordinator: {text.strip()}")

    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        make_repository(repo)
        if live:
            capped = dataclasses.replace(lead, options=BUDGET)
            first = Runtime(repo).run_sync(capped, FIRST + " Use one command per call, eight calls at least.")
            print(f"first run: ok={first.ok} denied={list(first.denials)} cost=${first.cost_usd:.4f}")
            pass_time(repo / ".flower" / "sessions.db", 3_900)  # 65 minutes later, by the store's timestamps
            rt = Runtime(repo)  # a new runtime over the same workspace: the store is on disk
            print("resuming:")
            again = rt.run_sync(capped, SECOND, resume=first.session_id, on_event=on_event)
        else:
            with first_run_script(repo / "notes.md") as model:
                first = Runtime(repo, configure=model.attach).run_sync(lead, FIRST)
                print(f"first run: ok={first.ok} denied={list(first.denials)}")
                pass_time(repo / ".flower" / "sessions.db", 3_900)  # 65 minutes later, by the timestamps
                model.script("main", [look_again, answer])
                rt = Runtime(repo, configure=model.attach)  # a new runtime over the same workspace
                print("resuming:")
                again = rt.run_sync(lead, SECOND, resume=first.session_id, on_event=on_event)

        print("on resume, layer 4 rewrote what the CLI replayed:")
        for report in reports:
            print("\n".join(describe(report)))
        last = rt.store.last_report  # the main transcript's report, also kept on the store
        assert last is not None
        print(f"rt.store.last_report: {last.summary().split(': ', 1)[1]}")
        print(f"resumed: ok={again.ok} same session={again.session_id == first.session_id}")
        notes = repo / "notes.md"
        print(f"the scribe's notes: {notes.read_text().splitlines()[-1] if notes.exists() else 'none'}")


if __name__ == "__main__":
    # a line on stderr at once, then one whenever the run has been silent for 15 s
    with Heartbeat(f"{Path(__file__).name}: {__doc__.splitlines()[0]}"):
        main()
