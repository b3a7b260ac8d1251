"""Tracing for `instrument()`: the app runs the SDK itself, so runs are read off the store as they land.

flower sees no run start or end there; it sees the transcripts the SDK mirrors into the layer-4 store
at each result. A *window* of a session (its entries since the last one) is complete when the main
thread's last reply is a final one (not a tool call) and every worker it launched in the background has
sent its notification. A complete window becomes one `invoke_agent` tree, built like a `Runtime`
run's but with the figures of its transcripts (there is no `StepResult`), as a child of the span
current in the SDK's task at that moment: the app's span around its query. It is built and exported
in a daemon thread, so the SDK's append is never slowed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry import context as otel_context

from ._build import RunRecord, build_run_spans
from ._emit import emit
from ._entries import Entry, notified_task, ns
from ._live import Tap, read_spills
from ._providers import telemetry
from ._tracing_policy import TracingPolicy

logger = logging.getLogger("flower.tracing")

_PROMPT_OR_REPLY = ("user", "assistant")


def window_complete(window: Sequence[Entry]) -> bool:
    """Whether a session's entries end a run: a final reply last, and no background worker outstanding."""
    last = next((e for e in reversed(window) if e.get("type") in _PROMPT_OR_REPLY), None)
    if last is None or last.get("type") != "assistant":
        return False
    message = last.get("message")
    stop = message.get("stop_reason") if isinstance(message, Mapping) else None
    if stop in (None, "tool_use"):
        return False
    launched = {
        str(e["toolUseResult"]["agentId"])
        for e in window
        if isinstance(e.get("toolUseResult"), Mapping)
        and e["toolUseResult"].get("isAsync") is True
        and e["toolUseResult"].get("agentId")
    }
    notified = {task for task in map(notified_task, window) if task}
    return launched <= notified


class WindowTap(Tap):
    """A store tap that turns each complete window of a session into spans."""

    def __init__(self, policy: TracingPolicy, spill_dir: str | None, requests: bool) -> None:
        super().__init__(policy.content)
        self.policy = policy
        self.spill_dir = spill_dir
        self.requests = requests
        self.threads: list[threading.Thread] = []

    def __call__(self, key: Mapping[str, Any], entries: Sequence[Any]) -> None:
        super().__call__(key, entries)
        session = str(key.get("session_id") or "")
        with self._lock:
            window = self.main.get(session, [])
            if not window_complete(window):
                return
            self.main[session] = []
            workers = {agent: found for (s, agent), found in self.workers.items() if s == session}
            for agent in workers:
                del self.workers[(session, agent)]
        parent = otel_context.get_current()
        thread = threading.Thread(
            target=self._export,
            args=(session, window, workers, parent),
            name="flower-tracing-window",
            daemon=True,
        )
        self.threads = [t for t in self.threads if t.is_alive()] + [thread]
        thread.start()

    def _export(
        self,
        session: str,
        window: list[dict[str, Any]],
        workers: dict[str, list[dict[str, Any]]],
        parent: otel_context.Context,
    ) -> None:
        try:
            stamps = [t for t in (ns(e.get("timestamp")) for e in window) if t is not None]
            if not stamps:
                return
            record = RunRecord(
                agent=self.policy.name,
                start_ns=min(stamps),
                end_ns=max(stamps),
                sessions=[(session, window)],
                workers=workers,
                spills=read_spills(self.spill_dir, [session]),
                content=self.policy.content,
                requests=self.requests,
            )
            specs = build_run_spans(record)
            found = telemetry(self.policy)
            before = found.watch.failures
            emit(specs, found.tracer, {None: parent}, flush=found.drain)
            if found.instruments is not None:
                found.instruments.record(specs)
            if found.own:
                found.flush()
            if found.watch.failures > before:
                logger.warning(
                    "flower.tracing: some spans or metrics were not exported: %s", found.watch.last
                )
        except Exception:
            logger.exception("flower.tracing: the spans of session %s could not be exported", session)

    def join(self, timeout: float) -> None:
        """Wait for the exports under way (tests, and an app about to exit)."""
        for thread in list(self.threads):
            thread.join(timeout)
