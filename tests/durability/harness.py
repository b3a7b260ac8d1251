"""The durability trials' shared parts: a runner process, what the CLI wrote locally, what the store holds.

Used by the suite (`tests/durability/test_kills.py`) and the campaigns (`benchmarks/bench_durability.py`).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import anyio
from claude_agent_sdk import SessionKey

from flower import PostgresSessionStore, SqliteSessionStore
from flower.stores.outbox.reconcile import mirrored, transcript_files

ROOT = Path(__file__).resolve().parents[2]
EXIT_LINES = frozenset({"last-prompt", "cost-state"})
"""Lines the CLI writes as it exits, after `ClaudeSDKClient` stopped reading: never mirrored (by design)."""


@dataclass
class Runner:
    """`tests.durability.runner` in a process group of its own; its JSON lines as they come."""

    process: subprocess.Popen[str]
    events: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def start(
        cls,
        store: str,
        schema: str,
        workspace: Path,
        mode: str,
        steps: int,
        sleep: float,
        *,
        subagent: bool = False,
        drain: float = 30.0,
        stderr: Path | None = None,
    ) -> Runner:
        argv = [sys.executable, "-m", "tests.durability.runner", store, schema, str(workspace), mode]
        argv += [str(steps), str(sleep), "--drain", str(drain)] + (["--subagent"] if subagent else [])
        err = open(stderr, "w") if stderr is not None else subprocess.DEVNULL  # noqa: SIM115
        process = subprocess.Popen(
            argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=err, text=True, start_new_session=True
        )
        return cls(process)

    def next(self) -> dict[str, Any] | None:
        """The runner's next line, or None when it ended."""
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            return None
        event: dict[str, Any] = json.loads(line)
        self.events.append(event)
        return event

    def until(self, test: Any) -> dict[str, Any] | None:
        """Read lines until one passes `test` (returned), or the end (None)."""
        while (event := self.next()) is not None:
            if test(event):
                return event
        return None

    def finish(self, timeout: float = 600) -> dict[str, Any]:
        """Read to the end; the `result` line (or a stand-in naming the exit status)."""
        while self.next() is not None:
            pass
        code = self.process.wait(timeout=timeout)
        if self.process.stdout is not None:
            self.process.stdout.close()
        results = [e for e in self.events if e.get("ev") == "result"]
        return results[-1] if results else {"ev": "result", "ok": None, "error": f"runner exited {code}"}

    def kill(self) -> None:
        """SIGKILL the runner's whole process group (Python, the CLI, its tools)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=60)
        if self.process.stdout is not None:
            self.process.stdout.close()

    def first(self, ev: str) -> dict[str, Any] | None:
        return next((e for e in self.events if e.get("ev") == ev), None)

    @property
    def reported(self) -> set[str]:
        """The tool_use ids whose results the runner reported."""
        return {e["id"] for e in self.events if e.get("ev") == "tool_result"}

    def kill_at_random(self, steps: int, sleep: float, rng: random.Random) -> int:
        """Kill somewhere after the k-th tool result (k random), inside the next call; returns k."""
        k = rng.randint(1, steps)
        self.until(lambda e: e.get("ev") == "tool_result" and e["n"] >= k)
        time.sleep(rng.uniform(0, sleep + 0.3))
        self.kill()
        return k


def local_transcripts(config_dir: str, session_id: str) -> list[tuple[SessionKey, Path]]:
    """The CLI's local files of a session (main, then subagents) with their store keys."""
    for main in sorted(Path(config_dir).glob(f"projects/*/{session_id}.jsonl")):
        key = cast(SessionKey, {"project_key": main.parent.name, "session_id": session_id})
        return [(file_key, path) for path, file_key in transcript_files(main, key)]
    return []


async def stored(store: str, schema: str, key: SessionKey) -> list[dict[str, Any]]:
    """What the store holds for `key` (as appended, no rewrite)."""
    opened: Any = (
        PostgresSessionStore(store, schema=schema)
        if store.startswith("postgres")
        else SqliteSessionStore(store)
    )
    async with opened:
        return cast(list[dict[str, Any]], await opened.load(key) or [])


def _ids(entries: list[dict[str, Any]]) -> list[str]:
    return [str(e.get("uuid") or json.dumps(e, sort_keys=True)) for e in entries]


def _settled(entries: list[dict[str, Any]], reported: set[str]) -> int:
    """How many leading entries of a file came before the call in flight: up to the last tool result
    the runner had reported (a `ToolResult` event) before it was killed."""
    last = 0
    for index, entry in enumerate(entries):
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if entry.get("type") == "user" and isinstance(content, list):
            ids = {
                b.get("tool_use_id")
                for b in content
                if isinstance(b, dict) and b.get("type") == "tool_result"
            }
            if ids & reported:
                last = index + 1
    return last


def results_in(path: Path) -> list[str]:
    """The first line of each tool result in a local transcript, in order."""
    found = []
    for entry in mirrored(path):
        content = (entry.get("message") or {}).get("content") if entry.get("type") == "user" else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                text = block.get("content")
                text = text if isinstance(text, str) else " ".join(b.get("text", "") for b in text or [])
                found.append(text.split("\n")[0])
    return found


@dataclass(frozen=True)
class Loss:
    """A killed run's local transcript against the store."""

    written: int
    """Lines the CLI wrote that a mirror sends (main and subagents)."""
    missing: int
    """Of them, lines the store lacks."""
    beyond: int
    """Of those, lines written before the call in flight: up to the last tool result of their file the
    runner reported before the kill (flower had it; the store must too)."""


def loss(store: str, schema: str, config_dir: str, session_id: str, reported: set[str]) -> Loss:
    """Compare what the CLI wrote with what the store holds, file by file; `reported`: the tool_use ids
    whose results the runner reported."""
    written = missing = beyond = 0
    for key, path in local_transcripts(config_dir, session_id):
        local = [entry for entry in mirrored(path) if entry.get("type") not in EXIT_LINES]
        have = set(_ids(anyio.run(stored, store, schema, key)))
        settled = _settled(local, reported)
        for index, entry_id in enumerate(_ids(local)):
            if entry_id in have:
                continue
            missing += 1
            beyond += index < settled
        written += len(local)
    return Loss(written, missing, beyond)
