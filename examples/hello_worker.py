"""The smallest flower program, offline: a coordinator delegates to a worker through the real Claude Code CLI.

No API key and no network: `flower.testing.ScriptedModel` plays the model (the script below is what a
model would do); the bundled CLI does everything else for real: the delegation wall, the Agent tool, the
worker's Bash, the hand-back of its report. The numbers printed at the end come from the requests the CLI
really sent.

Run it: python examples/hello_worker.py
Live, against the real API (a real prompt, no script, at most $0.50):
    ANTHROPIC_API_KEY=... python examples/hello_worker.py --live
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
from pathlib import Path

from flower import Heartbeat, Runtime, coordinator, worker
from flower.testing import RecordedRequest, ScriptedModel, agent, bash

analyst = worker(
    "Analyse files: counts, searches, comparisons. Give it any job that reads files or runs commands.",
    "You do text analysis. Use the command line; never estimate by hand.",
    tools=["Read", "Write", "Bash", "Glob", "Grep"],
)
lead = coordinator("lead", "Goal: measure the size of data/.", {"analyst": analyst})
BUDGET = {"max_budget_usd": 0.5}  # live runs only: the CLI stops a session that has spent this much


def worker_report(request: RecordedRequest) -> str:
    """The worker reads its own `wc` output and reports one line."""
    total = request.tool_results[-1].text.split()[0]
    return f"data/ holds {total} lines in 3 files."


def coordinator_answer(request: RecordedRequest) -> str:
    """The coordinator reads the worker's report (the Agent tool's result) and answers."""
    report = request.tool_results[-1].text
    line = next(line.strip() for line in report.splitlines() if "data/ holds" in line)
    return f"Done. The analyst says: {line}"


def main() -> None:
    parser = argparse.ArgumentParser(description="A coordinator delegates to a worker (offline by default).")
    parser.add_argument("--live", action="store_true", help="use the real API (needs ANTHROPIC_API_KEY)")
    live = parser.parse_args().live
    if live and not os.environ.get("ANTHROPIC_API_KEY"):
        sys.exit("--live calls the real Anthropic API: set ANTHROPIC_API_KEY first (or run without --live).")

    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        (workspace / "data").mkdir()
        for index, lines in enumerate((120, 45, 7)):
            (workspace / "data" / f"part{index}.txt").write_text("row\n" * lines)

        if live:
            capped = dataclasses.replace(lead, options=BUDGET)
            result = Runtime(workspace).run_sync(capped, "Start.")
            print(result.text or result.error)
            print(f"ok={result.ok} cost=${result.cost_usd:.4f} turns={result.num_turns}")
            return

        model = ScriptedModel(
            main=[
                agent("analyst", "Count the lines of data/*.txt; reply with the total only."),
                coordinator_answer,
            ],
            agents={"analyst": [bash("wc -l data/*.txt | tail -1"), worker_report]},
        )
        with model:
            result = Runtime(workspace, configure=model.attach).run_sync(lead, "Start.")
            main_chars = model.request("main", -1).sizes.messages
            worker_chars = model.request("analyst", -1).sizes.messages

        print(result.text)
        counts = f"main={len(model.requests('main'))} analyst={len(model.requests('analyst'))}"
        print(f"ok={result.ok} requests: {counts}")
        print(f"history chars in the last request: main={main_chars:,} analyst={worker_chars:,}")


if __name__ == "__main__":
    # a line on stderr at once, then one whenever the run has been silent for 15 s
    with Heartbeat(f"{Path(__file__).name}: {__doc__.splitlines()[0]}"):
        main()
