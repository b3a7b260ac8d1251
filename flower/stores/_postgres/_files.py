"""The files half of `PostgresSessionStore`: blobs by content, the files of each session, where it ran.

- `blobs`: file contents by sha256, each stored once whatever the number of sessions and paths.
- `files`: per session, each workbench path (relative) and the content it had at the session's latest
  write; a session's record holds every file its workbench had, so every pointer its history can hold
  (its system prompt lists the whole workbench) resolves after a restore.
- `places`: the workspaces and workbenches a session ran in, with the runner: the moves applied to its
  history on another machine, and the runners the fleet report shows.
- `spills`: the spill manifest's rows (what layer 3 moved out), for the fleet report.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..._spill._files import manifest_row

__all__ = [
    "Place",
    "StoredFile",
    "add_spill_rows",
    "blob",
    "home_project",
    "missing_blobs",
    "places",
    "project_keys",
    "put_files",
    "record_place",
    "session_files",
    "spill_rows",
]

_NOW_MS = "(extract(epoch from clock_timestamp()) * 1000)::bigint"


@dataclass(frozen=True)
class StoredFile:
    """A file of a session as the store holds it."""

    path: str
    sha256: str
    mode: int
    size: int


@dataclass(frozen=True)
class Place:
    """Where a session ran: its project key there, the workspace, the workbench root, the runner."""

    project_key: str
    workspace: str
    workbench: str
    runner: str
    first_seen: int = 0
    last_seen: int = 0


async def missing_blobs(conn: Any, s: str, digests: Sequence[str]) -> set[str]:
    if not digests:
        return set()
    found = await conn.fetch(f"SELECT sha256 FROM {s}.blobs WHERE sha256 = ANY($1::text[])", list(digests))
    return set(digests) - {r["sha256"] for r in found}


async def put_files(
    conn: Any,
    s: str,
    session_id: str,
    blobs: Sequence[tuple[str, bytes]],
    files: Sequence[tuple[str, str, int]],
) -> None:
    """Store new blobs `(sha256, data)` and record `(path, sha256, mode)` for the session, atomically."""
    async with conn.transaction():
        if blobs:
            await conn.executemany(
                f"INSERT INTO {s}.blobs (sha256, size, data) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                [(digest, len(data), data) for digest, data in blobs],
            )
        if files:
            await conn.execute(
                f"INSERT INTO {s}.files (session_id, path, sha256, mode, mtime) "
                f"SELECT $1, p, h, m, {_NOW_MS} FROM unnest($2::text[], $3::text[], $4::int[]) AS x(p, h, m) "
                "ON CONFLICT (session_id, path) DO UPDATE "
                "SET sha256 = excluded.sha256, mode = excluded.mode, mtime = excluded.mtime",
                session_id,
                [path for path, _, _ in files],
                [digest for _, digest, _ in files],
                [mode for _, _, mode in files],
            )


async def session_files(conn: Any, s: str, session_id: str) -> list[StoredFile]:
    records = await conn.fetch(
        f"SELECT f.path, f.sha256, f.mode, b.size FROM {s}.files f JOIN {s}.blobs b USING (sha256) "
        "WHERE f.session_id = $1 ORDER BY f.path",
        session_id,
    )
    return [StoredFile(r["path"], r["sha256"], int(r["mode"]), int(r["size"])) for r in records]


async def blob(conn: Any, s: str, digest: str) -> bytes | None:
    data = await conn.fetchval(f"SELECT data FROM {s}.blobs WHERE sha256 = $1", digest)
    return bytes(data) if data is not None else None


async def record_place(conn: Any, s: str, session_id: str, place: Place) -> None:
    await conn.execute(
        f"INSERT INTO {s}.places (session_id, project_key, workspace, workbench, runner, first_seen, "
        f"last_seen) VALUES ($1, $2, $3, $4, $5, {_NOW_MS}, {_NOW_MS}) "
        "ON CONFLICT (session_id, workspace, workbench) DO UPDATE SET runner = excluded.runner, "
        "project_key = excluded.project_key, last_seen = excluded.last_seen",
        session_id,
        place.project_key,
        place.workspace,
        place.workbench,
        place.runner,
    )


async def places(conn: Any, s: str, session_ids: Sequence[str]) -> dict[str, list[Place]]:
    """The places of each session, oldest first."""
    records = await conn.fetch(
        "SELECT session_id, project_key, workspace, workbench, runner, first_seen, last_seen "
        f"FROM {s}.places WHERE session_id = ANY($1::text[]) ORDER BY first_seen, workspace",
        list(session_ids),
    )
    found: dict[str, list[Place]] = {}
    for r in records:
        found.setdefault(r["session_id"], []).append(
            Place(
                r["project_key"],
                r["workspace"],
                r["workbench"],
                r["runner"],
                int(r["first_seen"]),
                int(r["last_seen"]),
            )
        )
    return found


async def home_project(conn: Any, s: str, session_id: str, local: str) -> str | None:
    """The project key a session's main transcript is stored under (`local` when it is there)."""
    keys = [
        r["project_key"]
        for r in await conn.fetch(
            f"SELECT project_key FROM {s}.transcripts WHERE session_id = $1 AND subpath = '' ORDER BY id",
            session_id,
        )
    ]
    if local in keys:
        return local
    return keys[0] if keys else None


async def add_spill_rows(conn: Any, s: str, lines: Sequence[str]) -> None:
    """Keep manifest lines that are JSON objects (once each, by content)."""
    rows = []
    for line in lines:
        row = manifest_row(line)
        if row is not None:
            session = row.get("session_id")
            digest = hashlib.sha256(line.encode("utf-8", "surrogatepass")).hexdigest()
            rows.append((digest, session if isinstance(session, str) else None, line))
    if rows:
        await conn.executemany(
            f"INSERT INTO {s}.spills (digest, session_id, row_json) VALUES ($1, $2, $3) "
            "ON CONFLICT DO NOTHING",
            rows,
        )


async def spill_rows(conn: Any, s: str, session_ids: Sequence[str]) -> list[dict[str, Any]]:
    records = await conn.fetch(
        f"SELECT row_json FROM {s}.spills WHERE session_id = ANY($1::text[]) OR session_id IS NULL",
        list(session_ids),
    )
    return [json.loads(r["row_json"]) for r in records]


async def project_keys(conn: Any, s: str) -> list[str]:
    """Every project key with a main transcript, in order of first write."""
    records = await conn.fetch(
        f"SELECT project_key FROM {s}.transcripts WHERE subpath = '' GROUP BY project_key ORDER BY min(id)"
    )
    return [r["project_key"] for r in records]
