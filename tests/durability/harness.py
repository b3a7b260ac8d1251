"""The durability trials' shared parts: a runner process, what the CLI wrote locally, what the store holds.

Used by the suite (`tests/durability/test_kills.py`) and the campaigns (`benchmarks/bench_durability.py`).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import anyio
from claude_agent_sdk import SessionKey

from flower import PostgresSessionStore, SqliteSessionStore
from flower.stores._outbox.reconcile import mirrored, transcript_files
from flower.testing import hang_guard

ROOT = Path(__file__).resolve().parents[2]
EXIT_LINES = frozenset({"last-prompt", "cost-state", "atis-latch", "api-request-route"})
"""The types of the lines the CLI writes as it exits, as `ClaudeSDKClient` stops reading: mirrored or not,
as the race goes (by design). CLI 2.1.337 re-appends `atis-latch` and `api-request-route` there too
(their first copies, written as the session starts, are mirrored). A `last-prompt` written earlier, when
a prompt is submitted, is mirrored."""


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
        drain: float | None = None,
        linger: float = 0.0,
        config: Path | None = None,
        stderr: Path | None = None,
        outbox: Path | None = None,
        hold: int = 0,
        flags: tuple[str, ...] = (),
    ) -> Runner:
        argv = [sys.executable, "-m", "tests.durability.runner", store, schema, str(workspace), mode]
        drain = (
            hang_guard() if drain is None else drain
        )  # the outbox's drain: a hang guard, not a speed check
        argv += [str(steps), str(sleep), "--drain", str(drain), "--linger", str(linger)]
        argv += ["--subagent"] if subagent else []
        argv += ["--config", str(config)] if config is not None else []
        argv += ["--outbox", str(outbox)] if outbox is not None else []
        argv += ["--hold", str(hold)] if hold else []
        argv += list(flags)  # `--hold-sub`, `--app`, `--untethered` (see `tests.durability.runner`)
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

    def finish(self) -> dict[str, Any]:
        """Read to the end; the `result` line (or a stand-in naming the exit status)."""
        while self.next() is not None:
            pass
        code = self.process.wait(timeout=hang_guard())
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
    def seen(self) -> dict[Path, dict[str, list[float]]]:
        """When each local transcript line appeared (see `Tail`)."""
        return self.tail.seen if self.tail is not None else {}

    def kill(self, *, group: bool = True) -> None:
        """SIGKILL the runner's whole process group (Python, the CLI), or with `group=False` its process
        alone."""
        self.killed_at = time.monotonic()
        with contextlib.suppress(ProcessLookupError):
            if group:
                os.killpg(self.process.pid, signal.SIGKILL)
            else:
                os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=hang_guard())
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


def written_results(config_dir: str, session_id: str) -> list[str]:
    """The main thread's tool results in the CLI's local transcript of a session."""
    files = local_transcripts(config_dir, session_id)
    return results_of(without_exit_lines(mirrored(files[0][1]))) if files else []


class Tail(threading.Thread):
    """Follows the CLI's local transcript files of a session while it runs: when each line appeared
    (time.monotonic(), polled every 10 ms), by file, then by line (one time per copy of a line without a
    uuid that the CLI writes more than once, in order)."""

    def __init__(self, config_dir: str, session_id: str) -> None:
        super().__init__(daemon=True)
        self.config_dir, self.session_id = config_dir, session_id
        self.seen: dict[Path, dict[str, list[float]]] = {}
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
        seen = self.seen.setdefault(path, {})
        for line in data[:end].splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict):
                seen.setdefault(_ids([entry])[0], []).append(now)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=10)


def outbox_entries(outbox: Path, key: SessionKey) -> list[dict[str, Any]]:
    """The entries an outbox file still holds for `key`, in delivery order (read from the file itself:
    its runner is dead)."""
    if not outbox.exists():
        return []
    with contextlib.closing(sqlite3.connect(outbox)) as conn:
        rows = conn.execute(
            "SELECT payload FROM pending WHERE project_key = ? AND session_id = ? AND subpath = ? "
            "ORDER BY id",
            (key["project_key"], key["session_id"], key.get("subpath") or ""),
        ).fetchall()
    return [json.loads(payload) for (payload,) in rows]


def _lines(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Entries that stand for lines of the CLI's file (an `agent_metadata` entry comes from a sidecar)."""
    return [e for e in entries if e.get("type") != "agent_metadata"]


@dataclass(frozen=True)
class Cut:
    """Where a `kill -9` cut a run's transcript, file by file (main, then each subagent's): what the CLI
    wrote, what the store holds, what the outbox had committed and still holds, and the rest.

    What the mechanism guarantees, with no clock: the SDK hands the lines over in the file's order, one
    batch after the other, the outbox commits each batch before it takes the next, and delivery sends
    the oldest rows first and forgets them only once stored. So the store holds the first lines of each
    file (in order, each once), the outbox's rows continue them with no gap (a row stored but not yet
    forgotten may be in both), and what neither holds is the file's tail after the last committed line:
    the call in flight. How long that tail is depends on timing only (benchmarks/bench_durability.py
    measures it)."""

    written: int
    """Lines the CLI wrote that a mirror sends."""
    stored: int
    """Of them, the first ones, which the store holds."""
    kept: int
    """The lines after those that the outbox committed (its next start in that workspace sends them)."""
    lost: int
    """The tail neither holds: lines the CLI wrote after the last committed one."""
    faults: tuple[str, ...]
    """Where the store or the outbox breaks the guarantee (a gap, another order, a line twice, a line the
    file lacks): must be none."""


def cut(store: str, schema: str, config_dir: str, session_id: str, outbox: Path) -> Cut:
    """Compare each local transcript file of a killed run with the store and with its outbox file."""
    written = stored_count = kept = lost = 0
    faults: list[str] = []
    for key, path in local_transcripts(config_dir, session_id):
        name = key.get("subpath") or "main"
        local = _ids(without_exit_lines(mirrored(path)))
        held = _lines(anyio.run(stored, store, schema, key))
        have = _ids(held)
        uuids = [e["uuid"] for e in held if isinstance(e.get("uuid"), str)]
        if len(set(uuids)) != len(uuids):
            faults.append(f"{name}: the store holds a line twice")
        if have != local[: len(have)]:
            faults.append(f"{name}: the store's {len(have)} lines are not the file's first {len(have)}")
        waiting = _ids(_lines(outbox_entries(outbox, key)))
        end = len(have)
        if waiting:
            starts = [i for i in range(len(have) + 1) if local[i : i + len(waiting)] == waiting]
            if starts:
                end = max(end, starts[-1] + len(waiting))
            else:
                faults.append(f"{name}: the outbox's {len(waiting)} rows do not continue the store's lines")
        written += len(local)
        stored_count += len(have)
        kept += end - len(have)
        lost += len(local) - end
    return Cut(written, stored_count, kept, lost, tuple(faults))


@dataclass(frozen=True)
class Loss:
    """A killed run's local transcript against the store."""

    written: int
    """Lines the CLI wrote that a mirror sends (main and subagents)."""
    missing: int
    """Of them, lines the store lacks (a line without a uuid written twice needs two copies)."""
    beyond: int
    """Of those, lines the CLI had written more than `window` seconds before the kill (a latency figure
    for the benchmark: `Cut` is what a test asserts)."""


def loss(
    store: str,
    schema: str,
    config_dir: str,
    session_id: str,
    seen: dict[Path, dict[str, list[float]]] | None = None,
    killed_at: float | None = None,
    window: float = 1.0,
) -> Loss:
    """Compare what the CLI wrote with what the store holds, file by file. With `seen` (a `Tail`'s) and
    the time of the kill, a missing line first seen more than `window` s before the kill is `beyond`."""
    written = missing = beyond = 0
    for key, path in local_transcripts(config_dir, session_id):
        local = without_exit_lines(mirrored(path))
        have = Counter(_ids(anyio.run(stored, store, schema, key)))
        copies: Counter[str] = Counter()
        for entry_id in _ids(local):
            copy, copies[entry_id] = copies[entry_id], copies[entry_id] + 1
            if have[entry_id] > 0:
                have[entry_id] -= 1
                continue
            missing += 1
            times = (seen or {}).get(path, {}).get(entry_id, [])
            first = times[copy] if copy < len(times) else None
            beyond += killed_at is None or (first is not None and first < killed_at - window)
        written += len(local)
    return Loss(written, missing, beyond)


@dataclass(frozen=True)
class Shape:
    """The shape of a stored main transcript's chain."""

    broken: tuple[str, ...]
    """Entries whose parent the transcript does not hold."""
    leaves: tuple[str, ...]
    """User and assistant entries no entry continues: the tips a resume could start from (one when the
    history is a single chain)."""


def shape(entries: list[dict[str, Any]]) -> Shape:
    """The links of the main thread's entries (sidechain entries left out)."""
    mine = [e for e in entries if isinstance(e.get("uuid"), str) and e.get("isSidechain") is not True]
    uuids = {e["uuid"] for e in mine}
    named = {e.get("parentUuid") for e in mine}
    broken = tuple(
        e["uuid"] for e in mine if isinstance(e.get("parentUuid"), str) and e["parentUuid"] not in uuids
    )
    leaves = tuple(
        e["uuid"] for e in mine if e.get("type") in ("user", "assistant") and e["uuid"] not in named
    )
    return Shape(broken, leaves)


def main_key(config_dir: str, session_id: str) -> SessionKey:
    """The store key of a session's main transcript, as its CLI (in `config_dir`) wrote it."""
    files = local_transcripts(config_dir, session_id)
    assert files, f"no local transcript of {session_id} under {config_dir}"
    return files[0][0]


def wait_stored(store: str, schema: str, key: SessionKey, needle: str) -> None:
    """Wait until an entry of `key` in the store holds `needle` (its JSON); the hang guard bounds it."""
    deadline = time.monotonic() + hang_guard()
    while time.monotonic() < deadline:
        if any(needle in json.dumps(e) for e in anyio.run(stored, store, schema, key)):
            return
        time.sleep(0.1)
    raise AssertionError(f"{needle!r} never reached the store")


def mount_tmpfs(path: Path, size: str = "1m") -> str | None:
    """Mount a tmpfs of `size` at `path` (created); None, or why it cannot be done here (root only)."""
    if os.geteuid() != 0:
        return "mounting a tmpfs needs root"
    path.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)],
            check=True,
            capture_output=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"cannot mount a tmpfs here: {exc}"
    return None


def unmount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], check=False, capture_output=True, timeout=60)


def fill(path: Path) -> None:
    """Write zeros under `path` until its file system is full."""
    with open(path / "filler", "wb", buffering=0) as filler:
        try:
            while True:
                filler.write(b"\0" * 65536)
        except OSError:
            return
