"""Run a scripted coordinator through the real CLI with tracing to a running Phoenix, read back through
Phoenix's REST API what it stored, and print one PASS or FAIL per promise of docs/tracing.md.

The endpoint is the one Phoenix prints (`<url>/v1/traces`), given as is; metrics are left to the
defaults (Phoenix takes traces only). The run's last reply is held until Phoenix lists the spans of the
replies and calls before it, and the root must not be there yet: spans arrive while the run goes, by
order, not by timing (the wait is the test harness's hang guard). Then the session is resumed and
exported again with `flower report --otlp`. Exit status 1 when a check fails.

Phoenix is not a dependency of flower: install it in a venv of its own and start it, for instance
`pip install arize-phoenix && PHOENIX_HOST=127.0.0.1 phoenix serve`.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from flower import Runtime, StepResult, TracingPolicy, coordinator, worker
from flower._cli import main as flower_main
from flower.events import Event, SessionStarted, TracingWarning
from flower.testing import RecordedRequest, ScriptedModel, agent, bash, hang_guard, tool_use

LEAD = coordinator("lead", "Goal: survey data/.", {"counter": worker("Counts lines.", "You count lines.")})
BIG = "".join(f"line {n}: ok\n" for n in range(600))
Row = tuple[str, bool, str]


class Phoenix:
    """Phoenix's REST API (the spans and sessions of a project)."""

    def __init__(self, url: str, project: str) -> None:
        self.url = url.rstrip("/")
        self.project = project

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(f"{self.url}/v1/projects/{self.project}/{path}", timeout=60) as reply:
            return json.loads(reply.read())["data"]

    def spans(self, session: str) -> list[dict[str, Any]]:
        found = self.get("spans?limit=1000")
        return [s for s in found if s["attributes"].get("session.id") == session]

    def sessions(self) -> dict[str, dict[str, Any]]:
        return {s["session_id"]: s for s in self.get("sessions?limit=1000")}


class Warnings(logging.Handler):
    """Warnings logged by OpenTelemetry's exporters and flower.tracing (a refused metrics request...)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(f"{record.name}: {record.getMessage()}")


def _live(spans: list[dict[str, Any]]) -> bool:
    names = [s["name"] for s in spans]
    return "execute_tool Write" in names and "execute_tool Agent" in names and "chat claude-opus-5-5" in names


async def _run(phoenix: Phoenix, workspace: Path, seen: list[list[dict[str, Any]]]) -> list[StepResult]:
    session: list[str] = []
    events: list[Event] = []

    def on_event(event: Event) -> None:
        events.append(event)
        if isinstance(event, SessionStarted):
            session.append(event.session_id)

    async def once_phoenix_has_them(request: RecordedRequest) -> str:
        deadline = time.monotonic() + hang_guard()
        while time.monotonic() < deadline:
            found = await anyio.to_thread.run_sync(phoenix.spans, session[0])
            if _live(found):
                seen.append(found)
                break
            await anyio.sleep(0.5)
        return "Surveyed: 600 lines in data/a.txt."

    policy = TracingPolicy(endpoint=f"{phoenix.url}/v1/traces", content=True)  # as Phoenix prints it
    async with ScriptedModel() as model:
        model.script(
            "main",
            [
                bash("ls data"),
                tool_use("Write", file_path=str(workspace / "x.txt"), content="x"),  # the wall denies it
                agent("counter", "Count the lines of data/a.txt.", background=False),
                once_phoenix_has_them,
                "Nothing more.",
            ],
        )
        model.script("counter", [bash("cat data/a.txt"), "REPORT: 600 lines."])
        rt = Runtime(workspace, configure=model.attach, tracing=policy)
        first = await rt.run(LEAD, "Survey data/.", on_event=on_event)
        second = await rt.run(LEAD, "Anything else?", resume=first.session_id, on_event=on_event)
    if any(isinstance(e, TracingWarning) for e in events):
        raise RuntimeError(f"a TracingWarning: {[e for e in events if isinstance(e, TracingWarning)]}")
    return [first, second]


def _checks(phoenix: Phoenix, runs: list[StepResult], seen: list[list[dict[str, Any]]]) -> list[Row]:
    session = str(runs[0].session_id)
    spans = _until(
        lambda: phoenix.spans(session), lambda found: sum(s["parent_id"] is None for s in found) >= 2
    )
    roots = sorted((s for s in spans if s["parent_id"] is None), key=lambda s: s["start_time"])
    before = seen[0] if seen else []
    write = [s for s in spans if s["name"] == "execute_tool Write"]
    chats = [s for s in spans if s["name"].startswith("chat")]
    found = phoenix.sessions().get(session, {})
    out = runs[0].usage.total.output
    denial = bool(write) and write[0]["status_code"] != "ERROR"
    denial = denial and [e["name"] for e in write[0]["events"]] == ["flower.denied"]
    shown = ("llm.input_messages.0.message.content", "output.value")
    tokens = bool(roots) and roots[0]["attributes"].get("gen_ai.usage.output_tokens") == out
    named = [r["name"] for r in roots] == ["invoke_agent lead"] * 2
    named = named and len({r["context"]["trace_id"] for r in roots}) == 2
    all_shown = bool(chats) and all(all(k in c["attributes"] for k in shown) for c in chats)
    return [
        ("spans arrive while the run goes", _live(before), f"{len(before)} spans before its last reply"),
        ("the run's root only with its end", not [s for s in before if s["parent_id"] is None], ""),
        ("one trace per run, named for the coordinator", named, ", ".join(r["name"] for r in roots)),
        ("Phoenix's session is flower's session", len(found.get("traces", [])) == 2, session),
        ("a denial is no error", denial, write[0]["status_code"] if write else "-"),
        ("a model call shows its input and output", all_shown, f"{len(chats)} chat spans"),
        ("tokens equal flower's", tokens, f"{out} output tokens"),
    ]


def _export(phoenix: Phoenix, workspace: Path, runs: list[StepResult]) -> list[Row]:
    before = {s["context"]["span_id"] for s in phoenix.spans(str(runs[0].session_id))}
    argv = ["report", str(workspace), "--otlp", f"{phoenix.url}/v1/traces", "--agent-name", "lead"]
    with contextlib.redirect_stdout(io.StringIO()):  # the economy report: not this check's business
        status = flower_main(argv)
    exported = _until(
        lambda: [s for s in phoenix.spans(str(runs[0].session_id)) if s["context"]["span_id"] not in before],
        lambda found: sum(s["parent_id"] is None for s in found) >= 2,
    )
    roots = [s for s in exported if s["parent_id"] is None]
    lengths = sorted(_seconds(r["end_time"]) - _seconds(r["start_time"]) for r in roots)
    longest = max(r.duration_s for r in runs)
    return [
        ("flower report --otlp with Phoenix's URL", status == 0, f"exit {status}"),
        ("an exported run is a trace of its own", len(roots) == 2, f"{len(roots)} roots"),
        (
            "an exported run's span ends with the run",
            bool(lengths) and lengths[-1] <= longest + 1,
            f"{lengths[-1] if lengths else 0:.1f} s, the longest run {longest:.1f} s",
        ),
    ]


def _until(
    read: Callable[[], list[dict[str, Any]]], done: Callable[[list[dict[str, Any]]], bool]
) -> list[Any]:
    """`read()` again until `done` holds of what it read (Phoenix stores what it receives in batches),
    at most for the hang guard; what was read last."""
    deadline = time.monotonic() + hang_guard()
    found = read()
    while not done(found) and time.monotonic() < deadline:
        time.sleep(0.5)
        found = read()
    return found


def _seconds(stamp: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(stamp).timestamp()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--url", default="http://127.0.0.1:6006", help="Phoenix's base URL")
    parser.add_argument("--project", default="default", help="the Phoenix project spans land in")
    args = parser.parse_args(argv)
    phoenix = Phoenix(args.url, args.project)
    warnings = Warnings()
    for name in ("opentelemetry", "flower.tracing"):
        logging.getLogger(name).addHandler(warnings)
    seen: list[list[dict[str, Any]]] = []
    with tempfile.TemporaryDirectory() as root:
        workspace = Path(root) / "repo"
        (workspace / "data").mkdir(parents=True)
        (workspace / "data" / "a.txt").write_text(BIG)
        runs = anyio.run(_run, phoenix, workspace, seen)
        rows = _checks(phoenix, runs, seen) + _export(phoenix, workspace, runs)
    rows.append(
        ("no warning (a metrics request refused...)", not warnings.records, "; ".join(warnings.records)[:100])
    )
    width = max(len(name) for name, _, _ in rows)
    for name, ok, detail in rows:
        print(f"{'PASS' if ok else 'FAIL'}  {name:<{width}}  {detail}")
    return 0 if all(ok for _, ok, _ in rows) else 1
