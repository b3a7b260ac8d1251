"""The pings' usage on disk: one JSON line per ping, where `flower report` reads them.

A ping leaves no entry in the session (that is its point), so its tokens would be missing from a report
built from the store alone. The Runtime appends each ping to `<workspace>/.flower/keep-warm.jsonl`, the
directory that holds the store and the workbench the report reads; a line names the session it kept
warm, so a report of some sessions counts only theirs.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from .._usage import TokenUsage
from .._util.safe_open import append_regular, read_regular
from ..events import KeepWarmPing

__all__ = ["RECORDS", "append_record", "read_records", "record_usage"]

logger = logging.getLogger("flower.warm")

RECORDS: Final = "keep-warm.jsonl"
"""The file's name, in the workspace's `.flower/` directory."""


def append_record(path: Path, ping: KeepWarmPing) -> None:
    """Append one ping; a file that cannot be written is logged (the ping's cost is still in the run's
    `StepResult`), never raised."""
    row = {
        "session_id": ping.session_id,
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "ok": ping.ok,
        "model": ping.model,
        "usage": dataclasses.asdict(ping.usage),
        "cost_usd": ping.cost_usd,
        "requests": ping.requests,
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        append_regular(path, (json.dumps(row) + "\n").encode("utf-8"))
    except OSError as exc:
        logger.warning("flower.warm: the ping could not be recorded in %s: %s", path, exc)


def read_records(path: Path, sessions: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The rows of `path` (of `sessions` only, when given); none when the file is missing or unreadable.
    A line that is not a JSON object is skipped."""
    try:  # a regular file only: a FIFO there would block the report
        text = read_regular(path).decode("utf-8", errors="replace")
    except OSError:
        return []
    wanted = set(sessions) if sessions is not None else None
    rows = []
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and (wanted is None or row.get("session_id") in wanted):
            rows.append(row)
    return rows


def record_usage(row: Mapping[str, Any]) -> TokenUsage:
    """A row's tokens (a count that is missing or not a positive int is 0)."""
    used = row.get("usage")
    used = used if isinstance(used, Mapping) else {}
    counts = {f.name: used.get(f.name) for f in dataclasses.fields(TokenUsage)}
    return TokenUsage(
        **{k: v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0 for k, v in counts.items()}
    )
