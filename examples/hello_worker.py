"""The seed's minimal example, offline: a coordinator delegates to a worker through the real Claude Code CLI.

No API key and no network: `flower.testing.ScriptedModel` plays the model (the script below is what a
model would do); the bundled CLI does everything else for real: the delegation wall, the Agent tool, the
worker's Bash, the hand-back of its report. The numbers printed at the end come from the requests the CLI
really sent.

Run it: python examples/hello_worker.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from flower import Runtime, coordinator, worker
from flower.testing import RecordedRequest, ScriptedModel, agent, bash

analyst = worker(
    "Analyse files: counts, searches, comparisons. Give it any job that reads files or runs commands.",
    "You do text analysis. Use the command line; never estimate by hand.",
    tools=["Read", "Write", "Bash", "Glob", "Grep"],
)
lead = coordinator("lead", "Goal: measure the size of data/.", {"analyst": analyst})


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
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        (workspace / "data").mkdir()
        for index, lines in enumerate((120, 45, 7)):
            (workspace / "data" / f"part{index}.txt").write_text("row\n" * lines)

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
    main()
