"""A pause between the demo's two steps, written into its store: step 1 ended ten minutes before step 2.

Layer 4 decides new rewrites only at a resume that comes after the prompt cache has expired (5 minutes,
`CachePolicy`); the demo's steps run seconds apart. So before step 2 the demo moves the timestamps of
everything its store holds back by `seconds`, as if the user had come back later: the store's load and
the report then read the same pause. Only the demo's own throwaway store is touched.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

__all__ = ["PAUSE", "pass_time"]

PAUSE = 600.0
"""Seconds between the demo's steps: the prompt cache has expired, expiry's idle hour has not."""


def _earlier(stamp: str, seconds: float) -> str:
    moment = datetime.fromisoformat(stamp) - timedelta(seconds=seconds)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def pass_time(database: Path, seconds: float = PAUSE) -> None:
    """Make every entry of a flower SQLite store `seconds` older (the demo's store only)."""
    with sqlite3.connect(database) as conn:
        rows = conn.execute("SELECT id, payload FROM entries").fetchall()
        for ident, payload in rows:
            entry = json.loads(payload)
            if isinstance(entry, dict) and isinstance(entry.get("timestamp"), str):
                entry["timestamp"] = _earlier(entry["timestamp"], seconds)
                conn.execute("UPDATE entries SET payload = ? WHERE id = ?", (json.dumps(entry), ident))
    conn.close()
