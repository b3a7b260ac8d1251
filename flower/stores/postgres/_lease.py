"""`PostgresSessionStore`'s leases: a session-level advisory lock on a connection of its own.

The server drops the lock when that connection closes, so a runner that dies releases its lease: a
killed process closes its socket at once, and a machine that vanishes is noticed through TCP keepalives
(set on the lease connection to 30 s idle + 3 probes 10 s apart). Waiting uses the server's own queue
(`pg_advisory_lock` under `lock_timeout`), so runners queued on one session get it in turn.

Who holds a lease is written in `<schema>.leases` with the server process of the holder's connection;
a `LeaseError` names the holder whose row matches the process that really holds the advisory lock.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

from ..._errors import LeaseError
from ..lease import Lease, busy, holder_name
from ._connection import Connections, advisory_key

__all__ = ["hold_lease", "lock_parts"]

logger = logging.getLogger("flower.stores")

_KEEPALIVES: Final = (
    "SET tcp_keepalives_idle = 30; SET tcp_keepalives_interval = 10; SET tcp_keepalives_count = 3"
)
_LOCK_NOT_AVAILABLE: Final = "55P03"


def lock_parts(key: int) -> tuple[int, int]:
    """`pg_locks`' (classid, objid) of a bigint advisory key."""
    unsigned = key & 0xFFFFFFFFFFFFFFFF
    return unsigned >> 32, unsigned & 0xFFFFFFFF


@asynccontextmanager
async def hold_lease(conns: Connections, session_id: str, timeout: float) -> AsyncIterator[Lease]:
    """Hold the lease of `session_id` in `conns`' schema; `LeaseError` after `timeout` seconds."""
    s = conns.schema
    key = advisory_key(s, "lease", session_id)
    me = holder_name(conns.runner)
    conn = await conns.connect("taking a session lease")
    started = time.monotonic()
    try:
        try:
            with contextlib.suppress(conns.asyncpg.PostgresError):  # a unix socket has no keepalives
                await conn.execute(_KEEPALIVES)
            await conn.execute("SELECT set_config('application_name', $1, false)", f"flower lease: {me}"[:63])
            got = await _lock(conn, key, timeout)
            if not got:
                holder = await _holder(conn, s, key, session_id)
                raise busy(session_id, timeout, holder, f"{conns.label}, schema {s}")
            await conn.execute(
                f"INSERT INTO {s}.leases (session_id, holder, backend_pid, since) "
                "VALUES ($1, $2, pg_backend_pid(), now()) ON CONFLICT (session_id) "
                "DO UPDATE SET holder = excluded.holder, backend_pid = excluded.backend_pid, since = now()",
                session_id,
                me,
            )
        except LeaseError:
            raise
        except conns.failures as exc:
            raise conns.error(f"leasing session {session_id}", exc) from exc
        yield Lease(session_id, me, conns.label, waited=time.monotonic() - started)
        await _release(conn, s, key, session_id)
    finally:
        await conns.disconnect(conn)  # closing the connection releases the lock in any case


async def _lock(conn: Any, key: int, timeout: float) -> bool:
    if timeout == 0:
        return bool(await conn.fetchval("SELECT pg_try_advisory_lock($1)", key))
    milliseconds = 0 if math.isinf(timeout) else max(1, int(timeout * 1000))
    await conn.execute(f"SET lock_timeout = {milliseconds}")
    try:
        await conn.execute("SELECT pg_advisory_lock($1)", key)
    except Exception as exc:
        if getattr(exc, "sqlstate", None) == _LOCK_NOT_AVAILABLE:
            return False
        raise
    finally:
        with contextlib.suppress(Exception):
            await conn.execute("SET lock_timeout = 0")
    return True


async def _release(conn: Any, s: str, key: int, session_id: str) -> None:
    try:
        await conn.execute(
            f"DELETE FROM {s}.leases WHERE session_id = $1 AND backend_pid = pg_backend_pid()", session_id
        )
        held = await conn.fetchval("SELECT pg_advisory_unlock($1)", key)
    except Exception as exc:  # the connection is gone: the server has dropped the lock already
        logger.warning("flower.stores: the lease of %s was lost before its end (%s)", session_id, exc)
        return
    if not held:
        logger.warning("flower.stores: the lease of %s was not held at its end", session_id)


async def _holder(conn: Any, s: str, key: int, session_id: str) -> str | None:
    classid, objid = lock_parts(key)
    with contextlib.suppress(Exception):
        pids = [
            r["pid"]
            for r in await conn.fetch(
                "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 "
                "AND classid::bigint = $1 AND objid::bigint = $2 "
                "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                classid,
                objid,
            )
        ]
        if not pids:
            return None
        holder = await conn.fetchval(
            f"SELECT holder FROM {s}.leases WHERE session_id = $1 AND backend_pid = ANY($2::int[])",
            session_id,
            pids,
        )
        if holder:
            return str(holder)
        name = await conn.fetchval("SELECT application_name FROM pg_stat_activity WHERE pid = $1", pids[0])
        prefix = "flower lease: "
        if isinstance(name, str) and name.startswith(prefix):
            return name[len(prefix) :]
        return f"PostgreSQL backend {pids[0]}"
    return None
