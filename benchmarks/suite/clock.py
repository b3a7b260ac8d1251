"""The CLI's clock after a workload's idle gap: the session's transcript is dated back by the idle time.

The CLI decides its idle handling from the timestamps of the session's transcript entries (CLI 2.1.332:
*tool-result clearing after idle*, once 3,900 s separate two entries). A resumed session reads its
history from the transcript, so writing those timestamps `idle` seconds earlier makes the CLI see the gap
the workload simulates, as the cost model and flower's store clock do. (Running the CLI under `faketime`
shifts its clock too, but the commands it runs inherit libfaketime, and their output is lost to its
shared-memory errors.)

flower's runs resume from flower's session store instead, whose clock is moved forward by the idle time
(`rt.store.clock`): the same gap, seen from the other side.
"""

from __future__ import annotations

import itertools
import json
from datetime import datetime, timedelta
from pathlib import Path

STAMP = "%Y-%m-%dT%H:%M:%S.%f"


def _earlier(value: str, seconds: float) -> str:
    when = datetime.fromisoformat(value.replace("Z", "+00:00")) - timedelta(seconds=seconds)
    return when.strftime(STAMP)[:-3] + "Z"


def date_back(config_dir: str | Path, session_id: str, seconds: float) -> int:
    """Move every timestamp of a session's transcripts (main and subagents) `seconds` into the past.

    Returns the number of entries changed (0 when the transcript is not found).
    """
    changed = 0
    root = Path(config_dir) / "projects"
    files = [*root.glob(f"*/{session_id}.jsonl"), *root.glob(f"*/{session_id}/**/*.jsonl")]
    for path in files:
        lines = []
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line) if line.strip() else None
            if isinstance(entry, dict) and isinstance(entry.get("timestamp"), str):
                entry["timestamp"] = _earlier(entry["timestamp"], seconds)
                changed += 1
                line = json.dumps(entry, ensure_ascii=False)
            lines.append(line)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return changed


def gap(config_dir: str | Path, session_id: str) -> float:
    """The largest gap (seconds) between consecutive timestamps of a session's main transcript."""
    root = Path(config_dir) / "projects"
    stamps = []
    for path in root.glob(f"*/{session_id}.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line) if line.strip() else {}
            if isinstance(entry.get("timestamp"), str):
                stamps.append(datetime.fromisoformat(entry["timestamp"].replace("Z", "+00:00")))
    stamps.sort()
    return max(((b - a).total_seconds() for a, b in itertools.pairwise(stamps)), default=0.0)
