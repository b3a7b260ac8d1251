"""What `flower run` prints while a run goes: one line per event a person cares about, or JSON lines.

`RunLines` is an `on_event` handler. It prints a worker's start (with its mandate's first words), a
glance, a refused hands-on call, a spill (read from the workbench's spill manifest, `spill/INDEX.jsonl`,
by the tool call it belongs to: no guess from the text), a worker's report back, a handoff, layer 4's
rewrites on a resume, API errors and warnings, and the cost so far at the end of each turn of the main
thread; it counts what each layer did for the economy line (`economy()`). Nothing is redrawn: a line once
printed stays, so a pipe or a log file gets the same text as a terminal (with no colour).

`event_json(event)` is one event as a JSON object on one line (`flower run --json`).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import events as ev
from .._result import StepResult
from .._spill._files import MANIFEST, manifest_row

__all__ = ["Counts", "RunLines", "event_json", "first_words"]

Out = Callable[[str], None]

LABEL_WIDTH = 9
_BOLD, _DIM, _RESET = "\033[1m", "\033[2m", "\033[0m"


def first_words(text: str, limit: int = 72) -> str:
    """The start of `text` on one line: whitespace collapsed, cut at a word before `limit` chars with `…`."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1].rsplit(" ", 1)[0] or flat[: limit - 1]
    return cut + "…"


def event_json(event: ev.Event) -> str:
    """One event as one line of JSON: `{"event": "<class name>", ...its fields}` (`flower run --json`)."""
    return json.dumps({"event": type(event).__name__, **_plain(event)}, ensure_ascii=False, default=str)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


@dataclass
class Counts:
    """What each layer did in one run, counted from its events (the economy line)."""

    delegations: int = 0
    """Workers started (layer 1)."""
    glances: int = 0
    """Read-only commands the coordinator ran itself."""
    refused: int = 0
    """Hands-on calls of the coordinator refused by the wall."""
    spills: int = 0
    """Tool outputs spilled to the workbench (layer 3)."""
    spilled_chars: int = 0
    """Characters those spills kept out of the conversation."""
    expired: int = 0
    """Layer 4, on a resume: stale command results expired."""
    pruned: int = 0
    """Layer 4: denied calls pruned."""
    trimmed: int = 0
    """Layer 4: large results trimmed to files."""
    layer4_chars: int = 0
    """Characters layer 4 kept out of the resumed history."""
    handoffs: int = 0
    """Handoffs to a fresh session."""
    session_id: str | None = None
    """The session the run writes now (the last `SessionStarted`)."""
    cost_usd: float = 0.0
    """The cost so far, as the CLI reports it at the end of each turn (per session, summed over handoffs)."""
    _retired_cost: float = field(default=0.0, repr=False)


class RunLines:
    """Prints one line per event a person cares about, through `out`; counts what each layer did.

    `workbench` is the run's workbench directory (`.flower`): its spill manifest names the spills.
    `colour` makes the labels bold (a terminal only; never through a pipe).
    """

    def __init__(self, out: Out, *, workbench: Path | None, colour: bool = False) -> None:
        self.out = out
        self.colour = colour
        self.counts = Counts()
        """What each layer did so far."""
        self._manifest = workbench / "spill" / MANIFEST if workbench is not None else None
        self._manifest_at = self._manifest_size()
        self._calls: dict[str, ev.ToolCall] = {}
        self._session_cost = 0.0

    def line(self, label: str, text: str) -> None:
        """Print `text` under `label` (a short word), aligned."""
        head = f"{label:<{LABEL_WIDTH}}"
        self.out(f"  {_BOLD}{head}{_RESET}{text}" if self.colour else f"  {head}{text}")

    def __call__(self, event: ev.Event) -> None:
        match event:
            case ev.SessionStarted():
                self._session(event)
            case ev.ToolCall():
                self._calls[event.tool_use_id] = event
            case ev.SubagentStarted():
                self._started(event)
            case ev.ToolResult():
                self._result(event)
                self._spills()
            case ev.SubagentFinished():
                summary = first_words(event.summary or "(no report)", 80)
                self.line("report", f"{event.agent or 'worker'} ({event.status}): {summary}")
            case ev.TaskStarted(agent=None):
                self.line("task", f"in the background: {first_words(event.description, 64)}")
            case ev.Result():
                self._session_cost = event.cost_usd
                self.counts.cost_usd = self.counts._retired_cost + event.cost_usd
                self.line("cost", f"${self.counts.cost_usd:.4f} so far")
            case ev.StoreReport(report=report) if report.subpath is None:
                self._layer4(event)
            case ev.HandoffWarning():
                self.line("context", f"{event.context:,} tokens; handoff at {event.threshold:,}")
            case ev.HandoffDone():
                self.counts.handoffs += 1
                where = f"notes/{Path(event.path).name}" if event.path else "its handoff document"
                self.line(
                    "handoff",
                    f"at {event.context:,} tokens: generation {event.generation} starts from {where}",
                )
            case ev.ApiError():
                state = "retrying" if event.retrying else "gave up"
                self.line("api", f"{first_words(event.message, 80)} ({state})")
            case ev.WorkbenchWarning() | ev.VersionWarning() | ev.TracingWarning() | ev.GlanceWarning():
                self.line("warning", first_words(event.message, 100))
            case ev.StoreWarning():
                self.line("store", first_words(event.message, 100))

    def _session(self, event: ev.SessionStarted) -> None:
        if self.counts.session_id is not None and event.session_id != self.counts.session_id:
            # a handoff's new generation: the CLI's cost starts again from zero there
            self.counts._retired_cost += self._session_cost
            self._session_cost = 0.0
        self.counts.session_id = event.session_id
        how = "resumed" if event.resumed else "forked" if event.fork_of else "new"
        self.line("session", f"{event.session_id} ({how})")

    def _started(self, event: ev.SubagentStarted) -> None:
        self.counts.delegations += 1
        call = self._calls.get(event.tool_use_id or "")
        mandate = str(call.input.get("prompt") or "") if call is not None else ""
        self.line("worker", f"{event.agent or 'worker'}: {first_words(mandate or event.description, 80)}")

    def _result(self, event: ev.ToolResult) -> None:
        call = self._calls.get(event.tool_use_id)
        if event.agent is not None or call is None or call.name in ("Agent", "Task", "Read"):
            return
        what = str(call.input.get("command") or call.input.get("file_path") or "")
        if event.is_error and not event.refused and "hook error" in event.text[:80]:
            self.counts.refused += 1  # the CLI's words for a hook's denial: "PreToolUse:Bash hook error: ..."
            self.line("refused", f"{call.name} {first_words(what, 48)!r}: the coordinator delegates it")
        elif call.name == "Bash":
            self.counts.glances += 1
            self.line("glance", first_words(what, 80))

    def _spills(self) -> None:
        """New rows of the spill manifest: each is a spill that just happened."""
        rows = self._new_rows()
        for row in rows:
            chars = int(row.get("chars") or 0)
            self.counts.spills += 1
            self.counts.spilled_chars += chars
            who = row.get("agent_type") or "coordinator"
            self.line(
                "spill", f"{who}'s {row.get('tool')} output, {chars:,} chars -> spill/{row.get('file')}"
            )

    def _layer4(self, event: ev.StoreReport) -> None:
        report = event.report
        counts = self.counts
        counts.expired += len(report.expired)
        counts.pruned += len(report.pruned)
        counts.trimmed += len(report.trimmed)
        counts.layer4_chars += report.chars_saved
        self.line(
            "layer 4",
            f"the resumed history: {len(report.expired)} expired, {len(report.pruned)} pruned, "
            f"{len(report.trimmed)} trimmed ({report.chars_saved:,} chars)",
        )

    def _manifest_size(self) -> int:
        try:
            return os.stat(self._manifest).st_size if self._manifest is not None else 0
        except OSError:
            return 0

    def _new_rows(self) -> list[dict[str, Any]]:
        if self._manifest is None or self._manifest_size() <= self._manifest_at:
            return []
        try:
            with open(self._manifest, "rb") as file:
                file.seek(self._manifest_at)
                data = file.read()
        except OSError:
            return []
        complete = data[: data.rfind(b"\n") + 1]  # a line still being written is read next time
        self._manifest_at += len(complete)
        rows = (manifest_row(line) for line in complete.decode("utf-8", "replace").splitlines())
        return [row for row in rows if row is not None]

    def economy(self, result: StepResult, workbench: Path | None) -> str:
        """The economy line: cost, the main thread's peak, and what each layer did."""
        c = self.counts
        parts = [
            f"${result.cost_usd:.4f}",
            f"main thread peak {result.peak_context:,} tokens",
            f"wall: {_n(c.delegations, 'delegation')}, {_n(c.glances, 'glance')}, {c.refused} refused",
            f"workbench: {_bench(workbench)}",
            f"spill: {_n(c.spills, 'output')} ({c.spilled_chars:,} chars)",
            f"layer 4: {c.expired} expired, {c.pruned} pruned, {c.trimmed} trimmed",
            f"handoff: {c.handoffs or len(result.retired)}",
        ]
        return " · ".join(parts)


def _n(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _bench(workbench: Path | None) -> str:
    """Files in the workbench's scripts/, artifacts/ and notes/ (what a later session finds there)."""
    if workbench is None:
        return "off"
    found = []
    for name in ("scripts", "artifacts", "notes"):
        try:
            count = sum(1 for p in (workbench / name).rglob("*") if p.is_file())
        except OSError:
            count = 0
        found.append(f"{count} {name.rstrip('s') if count == 1 else name}")
    return ", ".join(found)
