"""Rows of the benchmark suite's metrics and its report cut to the figures a test compares."""

from __future__ import annotations

import dataclasses
from typing import Any

from benchmarks.suite.metrics import Metrics


def metrics_row(strategy: str, cost: float, finished: bool) -> Metrics:
    zero = {f.name: 0 for f in dataclasses.fields(Metrics) if f.default is dataclasses.MISSING}
    values = {**zero, "workload": "w1", "strategy": strategy, "family": "peer", "finished": finished}
    return Metrics(**{**values, "cost_all": cost})


def cut_report(report: str, directory: str) -> str:
    """What flower's `report_cut` hook gives the coordinator for this foreground worker's report."""
    import anyio

    from flower._wall.report_cut import report_cut

    hook = report_cut(directory)
    response = {"status": "completed", "agentType": "worker", "content": [{"type": "text", "text": report}]}
    data = {"hook_event_name": "PostToolUse", "tool_name": "Agent", "tool_response": response}
    out: Any = anyio.run(hook, data, "a1", {"signal": None})
    return str(out["hookSpecificOutput"]["updatedToolOutput"]["content"][0]["text"])
