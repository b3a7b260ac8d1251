"""A coordinator with a background worker: its agents, its scripted replies, and the sign that the
worker's report arrived."""

from __future__ import annotations

import threading

import anyio
import pytest

from flower import coordinator, worker
from flower.testing import RecordedRequest, ScriptedModel

REPORT = "WORKER-REPORT: 42 files, the largest is data/big.csv"

ANALYST = worker("Analyse files.", "You do text analysis.", tools=["Read", "Bash"])


def lead() -> object:
    return coordinator("lead", "Goal: count the files of data/.", {"analyst": ANALYST})


def once(finished: threading.Event, step: object) -> object:
    """A scripted step answered only once the worker has ended (its `SubagentFinished` event came)."""

    async def after_the_worker(request: RecordedRequest) -> object:
        while not finished.is_set():  # the worker ends while this request is in flight, however slow
            await anyio.sleep(0.02)
        return step

    return after_the_worker


def reports_late(model: ScriptedModel) -> object:
    """The worker's report, sent only once the coordinator's next request is out: the worker then ends
    while that request is in flight, never before the CLI wrote it (which would carry the report)."""

    async def after_the_coordinators_request(request: RecordedRequest) -> str:
        while len(model.requests("main")) < 2:
            await anyio.sleep(0.02)
        return REPORT

    return after_the_coordinators_request


STATES = pytest.mark.parametrize(
    "states", ["1", ""], ids=["cli-says-idle", "no-session-states"]
)  # "": a CLI that sends no session state (the JS CLI reads an empty variable as unset), read from the stream


def notified(request: RecordedRequest) -> bool:
    """The request carries the CLI's task notification with the worker's report."""
    return "<task-notification>" in request and REPORT in request
