"""Waiting until a runner queues on the server for a session's lease."""

from __future__ import annotations

import anyio
import asyncpg

from flower.stores._postgres._connection import advisory_key
from flower.stores._postgres._lease import lock_parts
from flower.testing import hang_guard


async def waiting_for_a_lease(dsn: str, schema: str, session: str) -> None:
    """Until a runner waits in the server's queue for this session's lease (a queued resume)."""
    classid, objid = lock_parts(advisory_key(schema, "lease", session))
    conn = await asyncpg.connect(dsn)
    try:
        with anyio.fail_after(hang_guard()):
            while not await conn.fetchval(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                "AND classid::bigint = $1 AND objid::bigint = $2",
                classid,
                objid,
            ):
                await anyio.sleep(0.05)
    finally:
        await conn.close()
