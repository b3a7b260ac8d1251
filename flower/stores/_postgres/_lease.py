"""`PostgresSessionStore`'s leases: a session-level advisory lock on a connection of its own, and an epoch.

The server drops the lock when that connection closes, so a runner that dies releases its lease: a
killed process closes its socket at once, and a machine that vanishes is noticed through TCP keepalives
(set on the lease connection to 30 s idle + 3 probes 10 s apart). Waiting uses the server's own queue
(`pg_advisory_lock` under `lock_timeout`), so runners queued on one session get it in turn.

Each acquisition draws a new epoch from the sequence `<schema>.lease_epochs` into the session's row of
`<schema>.leases`; the row stays after the lease ends, so an epoch is never valid twice. Every append of
the holder checks that epoch in its transaction (`_transcripts.append`); a concurrent acquisition's
update of the row waits for such an append to commit. When the lease connection ends under a live
holder (the backend terminated, the server restarted), asyncpg's termination listener marks the
`PgHolding` lost; `reacquire()` takes it back only while the row still holds the holder's epoch.

Who holds a lease is written in the same row, with the server process of the holder's connection; a
`LeaseError` names the holder whose row matches the process that really holds the advisory lock.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio

from ..._errors import LeaseError, StoreError
from .._lease import Holding, Lease, busy, fenced, holder_name
from ._connection import Connections, advisory_key

__all__ = ["PgHolding", "hold_lease", "lock_parts"]

logger = logging.getLogger("flower.stores")

_KEEPALIVES: Final = (
    "SET tcp_keepalives_idle = 30; SET tcp_keepalives_interval = 10; SET tcp_keepalives_count = 3"
)
_LOCK_NOT_AVAILABLE: Final = "55P03"
_RELEASE_TIMEOUT: Final = 5.0


def lock_parts(key: int) -> tuple[int, int]:
    """`pg_locks`' (classid, objid) of a bigint advisory key."""
    unsigned = key & 0xFFFFFFFFFFFFFFFF
    return unsigned >> 32, unsigned & 0xFFFFFFFF


class PgHolding(Holding):
    """A PostgreSQL lease held by this process: its connection, its epoch, its loss and its recovery."""

    def __init__(self, conns: Connections, session_id: str) -> None:
        super().__init__(session_id, 0)
        self.conns = conns
        self.key = advisory_key(conns.schema, "lease", session_id)
        self.me = holder_name(conns.runner)
        self.where = f"{conns.label}, schema {conns.schema}"
        self._conn: Any = None
        self._released = False

    async def take(self, timeout: float, if_epoch: int | None) -> None:
        """Lock, then draw a new epoch (only while the row's epoch is `if_epoch`, when given)."""
        s, session_id = self.conns.schema, self.session_id
        conn = await self.conns.connect("taking a session lease")
        try:
            try:
                with contextlib.suppress(self.conns.asyncpg.PostgresError):  # a unix socket has none
                    await conn.execute(_KEEPALIVES)
                await conn.execute(
                    "SELECT set_config('application_name', $1, false)", f"flower lease: {self.me}"[:63]
                )
                if not await _lock(conn, self.key, timeout):
                    raise busy(session_id, timeout, await _holder(conn, s, self.key, session_id), self.where)
                condition = "" if if_epoch is None else " WHERE l.epoch = $3"
                epoch = await conn.fetchval(
                    f"INSERT INTO {s}.leases AS l (session_id, holder, backend_pid, since, epoch) "
                    f"VALUES ($1, $2, pg_backend_pid(), now(), nextval('{s}.lease_epochs')) "
                    "ON CONFLICT (session_id) DO UPDATE SET holder = excluded.holder, "
                    f"backend_pid = excluded.backend_pid, since = now(), epoch = excluded.epoch{condition} "
                    "RETURNING epoch",
                    *(session_id, self.me, *(() if if_epoch is None else (if_epoch,))),
                )
                if epoch is None:  # the session was leased since the epoch this runner wrote under
                    row = await conn.fetchrow(
                        f"SELECT holder, epoch FROM {s}.leases WHERE session_id = $1", session_id
                    )
                    raise fenced(
                        session_id,
                        int(if_epoch or 0),
                        int(row["epoch"]) if row else None,
                        row["holder"] if row else None,
                        self.where,
                    )
            except LeaseError:
                raise
            except self.conns.failures as exc:
                raise self.conns.error(f"leasing session {session_id}", exc) from exc
        except BaseException:
            await self.conns.disconnect(conn)  # closing the connection releases the lock in any case
            raise
        self._conn, self.epoch, self._released = conn, int(epoch), False
        conn.add_termination_listener(self._ended)

    def _ended(self, conn: Any) -> None:
        if not self._released and conn is self._conn:
            logger.warning("flower.stores: the lease connection of session %s ended", self.session_id)
            self.mark_lost()

    async def reacquire(self) -> None:
        """Take the lost lease back on a new connection, only while the epoch is still this holder's."""
        old = self._conn
        self._conn = None
        if old is not None:
            await self.conns.disconnect(old)
        try:
            await self.take(0.0, self.epoch)
        except LeaseError as exc:
            if exc.holder == self.me:  # the server has not yet dropped the connection that was lost
                stale = "the server still holds this runner's lost lease connection"
                raise StoreError(f"{exc} ({stale})") from exc
            if exc.taken_over:
                raise
            # another runner got the lock while this one's connection was gone: the session is theirs
            raise fenced(self.session_id, self.epoch, None, exc.holder, self.where) from exc
        self.lost = anyio.Event()

    async def release(self) -> None:
        """Unlock and close the connection; the row keeps the epoch. Never raises."""
        self._released = True
        conn, self._conn = self._conn, None
        if conn is None:
            return
        with anyio.CancelScope(shield=True), anyio.move_on_after(_RELEASE_TIMEOUT):
            try:
                await conn.execute(
                    f"UPDATE {self.conns.schema}.leases SET backend_pid = 0 "
                    "WHERE session_id = $1 AND backend_pid = pg_backend_pid()",
                    self.session_id,
                )
                held = await conn.fetchval("SELECT pg_advisory_unlock($1)", self.key)
                if not held:
                    logger.warning("flower.stores: the lease of %s was not held at its end", self.session_id)
            except Exception as exc:  # the connection is gone: the server has dropped the lock already
                logger.warning(
                    "flower.stores: the lease of %s was lost before its end (%s)", self.session_id, exc
                )
            await self.conns.disconnect(conn)


@asynccontextmanager
async def hold_lease(
    conns: Connections,
    session_id: str,
    timeout: float,
    holdings: dict[str, Holding],
    if_epoch: int | None = None,
) -> AsyncIterator[Lease]:
    """Hold the lease of `session_id` in `conns`' schema; `LeaseError` after `timeout` seconds, or when
    `if_epoch` is given and the session's epoch is no longer it. Registered in `holdings` while held."""
    holding = PgHolding(conns, session_id)
    started = time.monotonic()
    await holding.take(timeout, if_epoch)
    holdings[session_id] = holding
    try:
        yield Lease(
            session_id, holding.me, conns.label, waited=time.monotonic() - started, epoch=holding.epoch
        )
    finally:
        if holdings.get(session_id) is holding:
            del holdings[session_id]
        await holding.release()


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
