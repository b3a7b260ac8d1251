"""The connection half of `PostgresSessionStore`: asyncpg, pools per event loop, the schema and its version.

- asyncpg is imported when a store is built: without it, `StoreError` names the extra to install.
- A store built from a DSN opens its own pool on first use, one per event loop (an asyncpg pool belongs
  to the loop that created it, and `anyio.run` makes a new loop per call); a store given a pool uses it.
- The schema is created (or an older layout migrated) on first use, under a transaction-level advisory
  lock, so several runners starting at once create it once (`_schema`).
- Every driver or network failure is raised as `StoreError`, the driver's exception chained, the DSN's
  password never shown (in any of its forms: `flower._util.secrets`). A DSN that cannot be parsed is a
  `StoreError` naming the problem; a timeout names the setting that expired and its value.
- A pooled connection that does not come within `connect_timeout` (every connection busy, or the
  server slow to accept one) is waited for again, with backoff, for up to `pool_wait` seconds in all:
  a bulk import or a report through a busy pool waits out a slow moment instead of failing on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import re
import time
import weakref
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Final
from urllib.parse import parse_qsl, urlsplit

from ..._errors import SpecError, StoreError
from ..._util.secrets import redact
from ._schema import SCHEMA_VERSION, ensure_schema

__all__ = [
    "SCHEMA_VERSION",
    "Connections",
    "advisory_key",
    "asyncpg_module",
    "check_dsn",
    "is_dsn",
    "redact",
]

_IDENT: Final = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_SCHEMES: Final = ("postgresql://", "postgres://")
_EXTRA: Final = "pip install 'flower-context[postgres]'"
_FIRST_PAUSE: Final = 0.1  # seconds before the second attempt at a pooled connection, doubling up to 2 s

logger = logging.getLogger("flower.stores")


def is_dsn(value: object) -> bool:
    """Whether `value` is a PostgreSQL connection URI (`postgresql://…` or `postgres://…`)."""
    return isinstance(value, str) and value.startswith(_SCHEMES)


def check_dsn(dsn: str) -> str:
    """`dsn` when it parses as a PostgreSQL URI; else `StoreError` naming the problem (password hidden)."""
    try:
        parts = urlsplit(dsn)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
        parse_qsl(parts.query, strict_parsing=bool(parts.query))
    except ValueError as exc:
        raise StoreError(f"malformed PostgreSQL DSN {redact(dsn)}: {redact(str(exc))}") from None
    if not parts.hostname and "host=" not in parts.query:
        raise StoreError(f"malformed PostgreSQL DSN {redact(dsn)}: it names no host")
    return dsn


def asyncpg_module() -> Any:
    """asyncpg, or `StoreError` naming the extra that installs it."""
    try:
        import asyncpg  # type: ignore[import-untyped]
    except ImportError as exc:
        raise StoreError(f"PostgresSessionStore needs the asyncpg driver: {_EXTRA}") from exc
    return asyncpg


def check_schema_name(schema: str) -> str:
    """`schema` when it is a plain SQL name (its type is `PostgresSessionStore`'s `@checked`)."""
    if not _IDENT.fullmatch(schema):
        raise SpecError(
            f"schema must be a lower-case SQL name ([a-z_][a-z0-9_]*, at most 63 chars), got {schema!r}"
        )
    return schema


def advisory_key(*parts: str) -> int:
    """A signed 64-bit advisory lock key for `parts` (sha256-based: the same on every machine)."""
    digest = hashlib.sha256("\x00".join(("flower", *parts)).encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class Connections:
    """asyncpg connections for one store: its pool (per event loop) and its schema, created on first use."""

    def __init__(
        self,
        source: str | Any,
        *,
        schema: str,
        connect_timeout: float,
        max_size: int,
        runner: str | None,
        pool_wait: float = 0.0,
    ) -> None:
        self.asyncpg = asyncpg_module()
        self.runner = runner
        """The runner name in leases and places (None: `$FLOWER_RUNNER` or the host name)."""
        self.schema = check_schema_name(schema)
        self.dsn: str | None = check_dsn(source) if isinstance(source, str) else None
        self._given: Any = None if isinstance(source, str) else source
        self.connect_timeout = connect_timeout
        self.pool_wait = pool_wait
        """Seconds in all a call waits for a pooled connection, retrying (0: one attempt)."""
        self.max_size = max_size
        self._pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()
        self._ready: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )
        self._created = False

    @property
    def label(self) -> str:
        """The DSN without its password, or a description of the pool."""
        return redact(self.dsn) if self.dsn is not None else f"pool {type(self._given).__name__}"

    def error(self, what: str, exc: BaseException, *, waiting: str = "") -> StoreError:
        """A `StoreError` for a failure of `what` (to raise `from exc`); `waiting` says what a timeout
        waited for."""
        if isinstance(exc, TimeoutError) and not str(exc).strip():
            what_came = waiting or "the server did not answer"
            detail = f"{what_came} within connect_timeout ({self.connect_timeout:g} s)"
            if waiting.startswith("no connection came") and self.pool_wait > 0:
                detail += f", waited for again up to pool_wait ({self.pool_wait:g} s)"
        elif isinstance(exc, ValueError) and not isinstance(exc, StoreError):
            detail = f"malformed PostgreSQL DSN: {exc}"  # the driver's parser refused it
        else:
            detail = str(exc).strip() or type(exc).__name__
        return StoreError(
            f"PostgreSQL session store {self.label} (schema {self.schema}): {what}: {redact(detail)}"
        )

    async def _pool(self) -> Any:
        if self._given is not None:
            return self._given
        loop = asyncio.get_running_loop()
        pool = self._pools.get(loop)
        if pool is None:
            try:
                pool = await self.asyncpg.create_pool(
                    self.dsn, min_size=0, max_size=self.max_size, timeout=self.connect_timeout
                )
            except ValueError as exc:  # the driver's DSN parser (asyncpg's ClientConfigurationError too)
                raise self.error("opening the connection pool", exc) from exc
            self._pools[loop] = pool
        return pool

    @property
    def failures(self) -> tuple[type[BaseException], ...]:
        """What the driver and the network raise: each becomes a `StoreError`."""
        return (TimeoutError, OSError, self.asyncpg.PostgresError, self.asyncpg.InterfaceError)

    @contextmanager
    def translated(self, what: str, waiting: str = "") -> Iterator[None]:
        """Driver and network failures inside the block raised as `StoreError` (the cause chained)."""
        try:
            yield
        except StoreError:
            raise
        except self.failures as exc:
            raise self.error(what, exc, waiting=waiting) from exc

    @asynccontextmanager
    async def connection(self, what: str) -> AsyncIterator[Any]:
        """A pooled connection on a ready schema; any driver or network failure becomes `StoreError`."""
        waiting = f"no connection came (a new one, or a free one of the pool_size={self.max_size} pool)"
        with self.translated(what, waiting):
            pool = await self._pool()
            conn = await self._acquire(pool, what)
        try:
            with self.translated(what):
                if not self._created:
                    await self._create(conn)
                yield conn
        finally:
            with contextlib.suppress(Exception):
                await pool.release(conn)

    async def _acquire(self, pool: Any, what: str) -> Any:
        """A connection of the pool, waited for again with backoff for up to `pool_wait` seconds."""
        deadline = time.monotonic() + self.pool_wait
        pause = _FIRST_PAUSE
        while True:
            try:
                return await pool.acquire(timeout=self.connect_timeout)
            except TimeoutError:
                if time.monotonic() + pause >= deadline:
                    raise
                logger.info("flower.stores: %s waits for a connection of the pool (%s)", what, self.label)
                await asyncio.sleep(pause)
                pause = min(pause * 2, 2.0)

    async def connect(self, what: str) -> Any:
        """A connection of its own (a lease holds one for as long as it lasts), on a ready schema."""
        with self.translated(what, "the connection was not made"):
            if self.dsn is not None:
                try:
                    conn = await self.asyncpg.connect(self.dsn, timeout=self.connect_timeout)
                except ValueError as exc:
                    raise self.error(what, exc) from exc
            else:
                conn = await self._given.acquire(timeout=self.connect_timeout)
            try:
                if not self._created:
                    await self._create(conn)
            except BaseException:
                await self.disconnect(conn)
                raise
            return conn

    async def disconnect(self, conn: Any) -> None:
        """Give back a connection from `connect()`; never raises."""
        with contextlib.suppress(Exception):
            if self.dsn is not None:
                await conn.close(timeout=5)
            else:
                await self._given.release(conn)

    async def close(self) -> None:
        """Close the pool this store opened on the running loop (a pool it was given is the caller's).

        A pool belongs to its event loop: close the store on each loop that used it (`Runtime.run_sync`
        does). Pools of loops already closed are dropped.
        """
        loop = asyncio.get_running_loop()
        pool = self._pools.pop(loop, None)
        for owner in [owner for owner in self._pools if owner.is_closed()]:
            self._pools.pop(owner, None)
        if pool is not None:
            await pool.close()

    async def _create(self, conn: Any) -> None:
        loop = asyncio.get_running_loop()
        lock = self._ready.setdefault(loop, asyncio.Lock())
        async with lock:
            if self._created:
                return
            async with conn.transaction():
                # several runners starting at once: one creates (or migrates), the others wait, then see it
                await conn.execute("SELECT pg_advisory_xact_lock($1)", advisory_key("schema", self.schema))
                await ensure_schema(conn, self.schema, self.label)
            self._created = True
