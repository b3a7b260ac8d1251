"""The outbox's records: the sessions it holds rows of, and the stores they are for (`Outbox`'s half that
is not the rows themselves). Blocking, under the connection lock, like the rest of the outbox."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Collection
from dataclasses import dataclass
from typing import cast

from claude_agent_sdk import SessionKey

from .._sqlite._locked import LockedConnection

__all__ = ["Books", "Record", "Row", "Waiting", "key_of"]


@dataclass(frozen=True)
class Row:
    """A pending row: its id, the key it is for, its idempotency key and its JSON."""

    id: int
    key: SessionKey
    dedupe: str
    payload: str


@dataclass(frozen=True)
class Waiting:
    """Rows an outbox holds for one store: its identity, its label, how many wait, how many are fenced."""

    target: str
    label: str
    pending: int
    fenced: int


@dataclass(frozen=True)
class Record:
    """What the outbox knows of a session it holds rows of (see the module docstring)."""

    session_id: str
    epoch: int
    pid: int
    config_dir: str
    resumed: bool
    prefixes: dict[str, int] | None
    started: float


def key_of(project_key: str, session_id: str, subpath: str) -> SessionKey:
    key: dict[str, str] = {"project_key": project_key, "session_id": session_id}
    if subpath:
        key["subpath"] = subpath
    return cast(SessionKey, key)


class Books(LockedConnection):
    """The records half of an outbox (see the module docstring)."""

    # -- the sessions --------------------------------------------------------------------------------

    def begin(self, target: str, session_id: str, *, epoch: int, config_dir: str, resumed: bool) -> None:
        """Record that this process writes `session_id` now (its prefixes unknown for a resume, until
        `set_prefixes`)."""
        with self._write() as conn:
            conn.execute(
                "INSERT INTO sessions (target, session_id, epoch, pid, config_dir, resumed, prefixes, "
                "started) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (target, session_id) DO UPDATE SET "
                "epoch = excluded.epoch, pid = excluded.pid, config_dir = excluded.config_dir, "
                "resumed = excluded.resumed, prefixes = excluded.prefixes, started = excluded.started",
                (
                    target,
                    session_id,
                    epoch,
                    os.getpid(),
                    config_dir,
                    int(resumed),
                    None if resumed else "{}",
                    time.time(),
                ),
            )

    def set_epoch(self, target: str, session_id: str, epoch: int) -> None:
        """The lease was taken (back) with a new epoch: the session's rows are written under it."""
        with self._write() as conn:
            conn.execute(
                "UPDATE sessions SET epoch = ? WHERE target = ? AND session_id = ?",
                (epoch, target, session_id),
            )

    def set_prefixes(self, target: str, session_id: str, prefixes: dict[str, int]) -> None:
        """How many lines of each transcript file a resume copied from the store (by subpath, '' main)."""
        with self._write() as conn:
            conn.execute(
                "UPDATE sessions SET prefixes = ? WHERE target = ? AND session_id = ?",
                (json.dumps(prefixes, sort_keys=True), target, session_id),
            )

    def end(self, target: str, session_id: str) -> None:
        """The run writing the session ended: forget it when nothing is left, else mark it writer-less."""
        with self._write() as conn:
            left = conn.execute(
                "SELECT count(*) FROM pending WHERE target = ? AND session_id = ?", (target, session_id)
            ).fetchone()[0]
            if left:
                conn.execute(
                    "UPDATE sessions SET pid = 0 WHERE target = ? AND session_id = ?", (target, session_id)
                )
            else:
                conn.execute("DELETE FROM sessions WHERE target = ? AND session_id = ?", (target, session_id))

    def forget(self, target: str, session_id: str) -> None:
        """Drop the session's record (its rows, if any, stay)."""
        with self._write() as conn:
            conn.execute("DELETE FROM sessions WHERE target = ? AND session_id = ?", (target, session_id))

    def records(self, target: str) -> list[Record]:
        """Every session recorded for `target`, oldest first."""
        with self._connection() as conn:
            found = conn.execute(
                "SELECT session_id, epoch, pid, config_dir, resumed, prefixes, started FROM sessions "
                "WHERE target = ? ORDER BY started",
                (target,),
            ).fetchall()
        return [
            Record(
                sid,
                int(epoch),
                int(pid),
                config,
                bool(resumed),
                json.loads(prefixes) if prefixes else None,
                started,
            )
            for sid, epoch, pid, config, resumed, prefixes, started in found
        ]

    # -- the stores ----------------------------------------------------------------------------------

    def remember(self, target: str, label: str) -> None:
        """`target` is the identity of the store named `label` now."""
        with self._write() as conn:
            conn.execute(
                "INSERT INTO stores (target, label, seen) VALUES (?, ?, ?) ON CONFLICT (target) DO UPDATE "
                "SET label = excluded.label, seen = excluded.seen",
                (target, label, time.time()),
            )

    def known(self, label: str) -> str | None:
        """The identity last seen for the store named `label` (not a `label:` target), if any."""
        with self._connection() as conn:
            row = conn.execute(
                "SELECT target FROM stores WHERE label = ? AND target NOT LIKE 'label:%' "
                "ORDER BY seen DESC LIMIT 1",
                (label,),
            ).fetchone()
        return str(row[0]) if row is not None else None

    def rekey(self, old: str, new: str, sessions: Collection[str] | None = None) -> int:
        """Rows and records kept for `old` (of `sessions` when given) are for `new` from now on: the
        store they were written for turned out to be `new`. The rows moved."""
        where, args = "target = ?", [old]
        if sessions is not None:
            if not sessions:
                return 0
            where += f" AND session_id IN ({','.join('?' * len(sessions))})"
            args += list(sessions)
        with self._write() as conn:
            moved = conn.execute(f"UPDATE pending SET target = ? WHERE {where}", [new, *args]).rowcount
            conn.execute(f"UPDATE OR REPLACE sessions SET target = ? WHERE {where}", [new, *args])
            conn.execute(f"UPDATE fenced SET target = ? WHERE {where}", [new, *args])
        return int(moved)

    def waiting(self) -> list[Waiting]:
        """Per store, the rows the outbox holds for it (pending and fenced), largest first."""
        with self._connection() as conn:
            found = conn.execute(
                "SELECT t.target, coalesce(s.label, t.target), sum(t.pending), sum(t.fenced) FROM ("
                "SELECT target, 1 AS pending, 0 AS fenced FROM pending UNION ALL "
                "SELECT target, 0, 1 FROM fenced) AS t LEFT JOIN stores AS s ON s.target = t.target "
                "GROUP BY t.target ORDER BY sum(t.pending) DESC, t.target"
            ).fetchall()
        return [Waiting(str(t), str(label), int(p), int(f)) for t, label, p, f in found]

    def sessions_of(self, target: str) -> set[str]:
        """Every session the outbox holds rows or a record of for `target`."""
        with self._connection() as conn:
            found = conn.execute(
                "SELECT session_id FROM pending WHERE target = ? UNION SELECT session_id FROM fenced "
                "WHERE target = ? UNION SELECT session_id FROM sessions WHERE target = ?",
                (target, target, target),
            ).fetchall()
        return {sid for (sid,) in found}

    def orphans(self, target: str) -> list[str]:
        """Sessions with rows but no record (left by an older flower or a record dropped by hand)."""
        with self._connection() as conn:
            found = conn.execute(
                "SELECT DISTINCT session_id FROM pending WHERE target = ? AND session_id NOT IN "
                "(SELECT session_id FROM sessions WHERE target = ?)",
                (target, target),
            ).fetchall()
        return [sid for (sid,) in found]
