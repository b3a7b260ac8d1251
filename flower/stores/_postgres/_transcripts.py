"""The transcript half of `PostgresSessionStore`: the SDK protocol's calls as SQL on one connection.

The entries are kept as the JSON text flower serialises them to (ASCII, compact), so a load returns
exactly what was appended, byte for byte once serialised again; a `jsonb` column would reorder keys.
An append is one transaction: the transcript row is upserted first, which locks it, so two appends to
one transcript run one after the other and the summary fold never loses an update. An append of a
session this runner holds the lease of first checks the lease's epoch in the same transaction (`FOR
SHARE`: a concurrent acquisition's update of the row waits for the append), and refuses a stale one. An
outbox delivery names the store's identity it is for, checked in the same transaction too.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from claude_agent_sdk import (
    SessionKey,
    SessionStoreEntry,
    SessionStoreListEntry,
    SessionSummaryEntry,
    fold_session_summary,
)

from ..._errors import StoreError
from .._lease import fenced
from .._target import not_this_store
from ._schema import store_identity

__all__ = [
    "Row",
    "append",
    "delete",
    "keyed_rows",
    "list_sessions",
    "list_subkeys",
    "load",
    "rows_of",
    "summaries",
]

Row = tuple[str | None, str, SessionStoreEntry]
"""(uuid or None, payload, the entry)."""

_NOW_MS = "(extract(epoch from clock_timestamp()) * 1000)::bigint"


def subpath_of(key: SessionKey) -> str:
    subpath = key.get("subpath")
    return subpath if isinstance(subpath, str) else ""


def rows_of(entries: Sequence[Any], label: str) -> list[Row]:
    """The batch as rows, without uuids repeated within it (the SDK's retries resend a batch)."""
    rows: list[Row] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise StoreError(f"{label}: entry {index} is a {type(entry).__name__}, not a dict")
        try:
            payload = json.dumps(entry, separators=(",", ":"))  # ASCII: lone surrogates and NUL survive
        except (TypeError, ValueError) as exc:
            raise StoreError(f"{label}: entry {index} is not JSON-serialisable: {exc}") from exc
        uuid = entry.get("uuid")
        if isinstance(uuid, str):
            if uuid in seen:
                continue
            seen.add(uuid)
            rows.append((uuid, payload, cast(SessionStoreEntry, entry)))
        else:
            rows.append((None, payload, cast(SessionStoreEntry, entry)))
    return rows


def keyed_rows(rows: Sequence[tuple[str, str]], label: str) -> list[Row]:
    """Rows from `(idempotency key, payload)` pairs (the outbox's), without keys repeated within them."""
    found: list[Row] = []
    seen: set[str] = set()
    for index, (dedupe, payload) in enumerate(rows):
        if dedupe in seen:
            continue
        seen.add(dedupe)
        try:
            entry = json.loads(payload)
        except ValueError as exc:
            raise StoreError(f"{label}: row {index} is not a JSON entry: {exc}") from exc
        if not isinstance(entry, dict):
            raise StoreError(f"{label}: row {index} is a {type(entry).__name__}, not a dict")
        found.append((dedupe, payload, cast(SessionStoreEntry, entry)))
    return found


async def _check_epoch(conn: Any, s: str, session_id: str, epoch: int, where: str) -> None:
    row = await conn.fetchrow(
        f"SELECT epoch, holder FROM {s}.leases WHERE session_id = $1 FOR SHARE", session_id
    )
    if row is None or int(row["epoch"]) != epoch:
        current = int(row["epoch"]) if row is not None else None
        raise fenced(session_id, epoch, current, row["holder"] if row is not None else None, where)


async def append(
    conn: Any,
    s: str,
    key: SessionKey,
    rows: list[Row],
    *,
    epoch: int | None = None,
    where: str = "",
    identity: str | None = None,
) -> None:
    """Append `rows` to the transcript of `key`; with `epoch`, only while the session's lease has it;
    with `identity`, only into the store of that identity (checked in the same transaction)."""
    subpath = subpath_of(key)
    # one statement: upserting the transcript row locks it (appends to one transcript queue there), then
    # the batch is inserted in order; a subagent's append is that statement alone (atomic by itself)
    statement = (
        f"WITH t AS (INSERT INTO {s}.transcripts AS t (project_key, session_id, subpath, mtime) "
        f"VALUES ($1, $2, $3, {_NOW_MS}) ON CONFLICT (project_key, session_id, subpath) "
        "DO UPDATE SET mtime = greatest(excluded.mtime, t.mtime + 1) RETURNING id, mtime), "
        f"i AS (INSERT INTO {s}.entries (transcript, uuid, payload) "
        "SELECT t.id, u, p FROM t, unnest($4::text[], $5::text[]) WITH ORDINALITY AS x(u, p, n) ORDER BY n "
        "ON CONFLICT (transcript, uuid) WHERE uuid IS NOT NULL DO NOTHING RETURNING uuid) "
        "SELECT t.mtime, ARRAY(SELECT uuid FROM i WHERE uuid IS NOT NULL) AS inserted FROM t"
    )
    args = (
        key["project_key"],
        key["session_id"],
        subpath,
        [uuid for uuid, _, _ in rows],
        [payload for _, payload, _ in rows],
    )
    if subpath and epoch is None and identity is None:
        await conn.fetchrow(statement, *args)
        return
    async with conn.transaction():
        if identity is not None:
            found = await store_identity(conn, s)
            if found != identity:
                raise not_this_store(identity, found, where)
        if epoch is not None:
            await _check_epoch(conn, s, key["session_id"], epoch, where)
        now, inserted = await conn.fetchrow(statement, *args)
        if subpath:
            return
        new = set(inserted)
        fresh = [entry for uuid, _, entry in rows if uuid is None or uuid in new]
        await _fold(conn, s, key, fresh, now)


async def _fold(conn: Any, s: str, key: SessionKey, entries: list[SessionStoreEntry], now: int) -> None:
    row = await conn.fetchrow(
        f"SELECT mtime, data FROM {s}.summaries WHERE project_key = $1 AND session_id = $2",
        key["project_key"],
        key["session_id"],
    )
    previous: SessionSummaryEntry | None = None
    if row is not None:
        previous = {"session_id": key["session_id"], "mtime": row["mtime"], "data": json.loads(row["data"])}
    folded = fold_session_summary(previous, key, entries)
    await conn.execute(
        f"INSERT INTO {s}.summaries (project_key, session_id, mtime, data) VALUES ($1, $2, $3, $4) "
        "ON CONFLICT (project_key, session_id) DO UPDATE SET mtime = excluded.mtime, data = excluded.data",
        key["project_key"],
        key["session_id"],
        now,
        json.dumps(folded["data"], separators=(",", ":")),
    )


async def load(conn: Any, s: str, key: SessionKey) -> list[str] | None:
    """The payloads of a transcript in append order, or None for a key never written."""
    records = await conn.fetch(
        f"SELECT e.payload FROM {s}.transcripts t LEFT JOIN {s}.entries e ON e.transcript = t.id "
        "WHERE t.project_key = $1 AND t.session_id = $2 AND t.subpath = $3 ORDER BY e.id",
        key["project_key"],
        key["session_id"],
        subpath_of(key),
    )
    if not records:
        return None
    return [record["payload"] for record in records if record["payload"] is not None]


async def list_sessions(conn: Any, s: str, project_key: str) -> list[SessionStoreListEntry]:
    records = await conn.fetch(
        f"SELECT session_id, mtime FROM {s}.transcripts WHERE project_key = $1 AND subpath = '' ORDER BY id",
        project_key,
    )
    return [{"session_id": r["session_id"], "mtime": int(r["mtime"])} for r in records]


async def summaries(conn: Any, s: str, project_key: str) -> list[SessionSummaryEntry]:
    records = await conn.fetch(
        f"SELECT session_id, mtime, data FROM {s}.summaries WHERE project_key = $1 ORDER BY session_id",
        project_key,
    )
    return [
        {"session_id": r["session_id"], "mtime": int(r["mtime"]), "data": json.loads(r["data"])}
        for r in records
    ]


async def delete(conn: Any, s: str, key: SessionKey) -> None:
    subpath = subpath_of(key)
    async with conn.transaction():
        if subpath:
            await conn.execute(
                f"DELETE FROM {s}.transcripts WHERE project_key = $1 AND session_id = $2 AND subpath = $3",
                key["project_key"],
                key["session_id"],
                subpath,
            )
            return
        for table in ("transcripts", "summaries"):
            await conn.execute(
                f"DELETE FROM {s}.{table} WHERE project_key = $1 AND session_id = $2",
                key["project_key"],
                key["session_id"],
            )


async def list_subkeys(conn: Any, s: str, project_key: str, session_id: str) -> list[str]:
    records = await conn.fetch(
        f"SELECT subpath FROM {s}.transcripts WHERE project_key = $1 AND session_id = $2 AND subpath <> '' "
        "ORDER BY id",
        project_key,
        session_id,
    )
    return [r["subpath"] for r in records]
