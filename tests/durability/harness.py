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
import threading
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
"""The types of the lines the CLI writes as it exits, after `ClaudeSDKClient` stopped reading: never
mirrored (by design). A `last-prompt` written earlier, when a prompt is submitted, is mirrored."""


def without_exit_lines(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`entries` less the exit lines at their end."""
    end = len(entries)
    while end and entries[end - 1].get("type") in EXIT_LINES:
        end -= 1
    return entries[:end]


@dataclass
class Runner:
    """`tests.durability.runner` in a process group of its own; its JSON lines as they come."""

    process: subprocess.Popen[str]
    events: list[dict[str, Any]] = field(default_factory=list)
    killed_at: float | None = None
    """When `kill()` sent SIGKILL (time.monotonic())."""
    tail: Tail | None = None
    """The local transcript followed since `follow()`."""

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
        linger: float = 0.0,
        config: Path | None = None,
        stderr: Path | None = None,
    ) -> Runner:
        argv = [sys.executable, "-m", "tests.durability.runner", store, schema, str(workspace), mode]
        argv += [str(steps), str(sleep), "--drain", str(drain), "--linger", str(linger)]
        argv += ["--subagent"] if subagent else []
        argv += ["--config", str(config)] if config is not None else []
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

    def follow(self) -> tuple[str, str]:
        """Read up to the session's start, then follow its local transcript; (config dir, session id)."""
        config = self.until(lambda e: e["ev"] == "config")
        session = self.until(lambda e: e["ev"] == "session")
        assert config is not None and session is not None, "the runner ended before its session started"
        self.tail = Tail(config["config_dir"], session["session_id"])
        self.tail.start()
        return config["config_dir"], session["session_id"]

    @property
    def seen(self) -> dict[str, float]:
        """When each local transcript line first appeared (see `Tail`)."""
        return self.tail.seen if self.tail is not None else {}

    def kill(self) -> None:
        """SIGKILL the runner's whole process group (Python, the CLI, its tools)."""
        self.killed_at = time.monotonic()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=60)
        if self.tail is not None:
            self.tail.stop()
        if self.process.stdout is not None:
            self.process.stdout.close()

    def first(self, ev: str) -> dict[str, Any] | None:
        return next((e for e in self.events if e.get("ev") == ev), None)

    def kill_at_random(self, steps: int, sleep: float, rng: random.Random) -> int:
        """Kill somewhere after the k-th tool result (k random in 1..`steps`), inside the next call (or the
        lingering answer); returns k."""
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


def results_of(entries: list[dict[str, Any]]) -> list[str]:
    """The first line of each tool result among transcript entries, in order."""
    found = []
    for entry in entries:
        message = entry.get("message") if entry.get("type") == "user" else None
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                text = block.get("content")
                text = text if isinstance(text, str) else " ".join(b.get("text", "") for b in text or [])
                found.append(text.split("\n")[0])
    return found


def stored_results(store: str, schema: str, config_dir: str, session_id: str) -> list[str]:
    """The main thread's tool results the store holds for a session (keyed as its CLI wrote it)."""
    files = local_transcripts(config_dir, session_id)
    return results_of(anyio.run(stored, store, schema, files[0][0])) if files else []


class Tail(threading.Thread):
    """Follows the CLI's local transcript files of a session while it runs: when each line first appeared
    (time.monotonic(), polled every 10 ms)."""

    def __init__(self, config_dir: str, session_id: str) -> None:
        super().__init__(daemon=True)
        self.config_dir, self.session_id = config_dir, session_id
        self.seen: dict[str, float] = {}
        self._offsets: dict[Path, int] = {}
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            for _, path in local_transcripts(self.config_dir, self.session_id):
                self._read(path)
            time.sleep(0.01)

    def _read(self, path: Path) -> None:
        try:
            with path.open("rb") as lines:
                lines.seek(self._offsets.get(path, 0))
                data = lines.read()
        except OSError:
            return
        end = data.rfind(b"\n") + 1
        self._offsets[path] = self._offsets.get(path, 0) + end
        now = time.monotonic()
        for line in data[:end].splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict):
                self.seen.setdefault(_ids([entry])[0], now)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=10)


@dataclass(frozen=True)
class Loss:
    """A killed run's local transcript against the store."""

    written: int
    """Lines the CLI wrote that a mirror sends (main and subagents)."""
    missing: int
    """Of them, lines the store lacks."""
    beyond: int
    """Of those, lines the CLI had written more than `window` seconds before the kill (must be none:
    "within about a second")."""


def loss(
    store: str,
    schema: str,
    config_dir: str,
    session_id: str,
    seen: dict[str, float] | None = None,
    killed_at: float | None = None,
    window: float = 1.0,
) -> Loss:
    """Compare what the CLI wrote with what the store holds, file by file. With `seen` (a `Tail`'s) and
    the time of the kill, a missing line first seen more than `window` s before the kill is `beyond`."""
    written = missing = beyond = 0
    for key, path in local_transcripts(config_dir, session_id):
        local = without_exit_lines(mirrored(path))
        have = set(_ids(anyio.run(stored, store, schema, key)))
        for entry_id in _ids(local):
            if entry_id in have:
                continue
            missing += 1
            first = (seen or {}).get(entry_id)
            beyond += killed_at is None or (first is not None and first < killed_at - window)
        written += len(local)
    return Loss(written, missing, beyond)
