"""`pass_time`: a SQLite store's timestamps moved back, as a real pause between two runs would."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

__all__ = ["pass_time"]


def _earlier(stamp: str, seconds: float) -> str:
    moment = datetime.fromisoformat(stamp) - timedelta(seconds=seconds)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def pass_time(database: Path, seconds: float = 3_900.0) -> None:
    """Make every entry of a flower SQLite store `seconds` older (default: 65 minutes), as a pause would.

    Layer 4 decides new rewrites only at a resume after the prompt cache expired; a test or an example
    whose runs are seconds apart calls this between them (on a store no run holds open).
    """
    with sqlite3.connect(database) as conn:
        rows = conn.execute("SELECT id, payload FROM entries").fetchall()
        for ident, payload in rows:
            entry = json.loads(payload)
            if isinstance(entry, dict) and isinstance(entry.get("timestamp"), str):
                entry["timestamp"] = _earlier(entry["timestamp"], seconds)
                conn.execute("UPDATE entries SET payload = ? WHERE id = ?", (json.dumps(entry), ident))
    conn.close()
