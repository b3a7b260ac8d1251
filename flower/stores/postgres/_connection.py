"""The connection half of `PostgresSessionStore`: asyncpg, pools per event loop, the schema and its version.

- asyncpg is imported when a store is built: without it, `StoreError` names the extra to install.
- A store built from a DSN opens its own pool on first use, one per event loop (an asyncpg pool belongs
  to the loop that created it, and `anyio.run` makes a new loop per call); a store given a pool uses it.
- The schema is created on first use, under a transaction-level advisory lock, so several runners
  starting at once create it once. Its version is kept in `<schema>.meta`: a newer version than this
  library reads, or a schema that holds tables but no flower mark, raises `StoreError`.
- Every driver or network failure is raised as `StoreError`, the driver's exception chained, the DSN's
  password never shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import weakref
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from ..._errors import SpecError, StoreError

__all__ = ["SCHEMA_VERSION", "Connections", "advisory_key", "asyncpg_module", "is_dsn", "redact"]

SCHEMA_VERSION: Final = 1
"""The layout this library reads and writes (kept in `<schema>.meta` under `schema_version`)."""

_IDENT: Final = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_SCHEMES: Final = ("postgresql://", "postgres://")
_EXTRA: Final = "pip install 'flower-context[postgres]'"

_TABLES: Final = """
CREATE TABLE {s}.meta (
    key text PRIMARY KEY,
    value text NOT NULL
);
CREATE TABLE {s}.transcripts (
    id bigserial PRIMARY KEY,
    project_key text NOT NULL,
    session_id text NOT NULL,
    subpath text NOT NULL,                 -- '' for the main transcript
    mtime bigint NOT NULL,                 -- storage write time, epoch ms
    UNIQUE (project_key, session_id, subpath)
);
CREATE INDEX transcripts_by_session ON {s}.transcripts (session_id);
CREATE TABLE {s}.entries (
    id bigserial PRIMARY KEY,              -- insertion order: the order load() returns
    transcript bigint NOT NULL REFERENCES {s}.transcripts (id) ON DELETE CASCADE,
    uuid text,                             -- the idempotency key, when the entry has one
    payload text NOT NULL                  -- the entry as JSON (ASCII), kept byte for byte
);
CREATE INDEX entries_by_transcript ON {s}.entries (transcript, id);
CREATE UNIQUE INDEX entries_by_uuid ON {s}.entries (transcript, uuid) WHERE uuid IS NOT NULL;
CREATE TABLE {s}.summaries (
    project_key text NOT NULL,
    session_id text NOT NULL,
    mtime bigint NOT NULL,
    data text NOT NULL,                    -- fold_session_summary's opaque state, verbatim
    PRIMARY KEY (project_key, session_id)
);
CREATE TABLE {s}.leases (
    session_id text PRIMARY KEY,
    holder text NOT NULL,                  -- runner name, host and pid
    backend_pid integer NOT NULL,          -- the server process of the holder's lease connection
    since timestamptz NOT NULL
);
CREATE TABLE {s}.blobs (
    sha256 text PRIMARY KEY,
    size bigint NOT NULL,
    data bytea NOT NULL
);
CREATE TABLE {s}.files (
    session_id text NOT NULL,
    path text NOT NULL,                    -- relative to the workbench root
    sha256 text NOT NULL REFERENCES {s}.blobs (sha256),
    mode integer NOT NULL,
    mtime bigint NOT NULL,                 -- when it was recorded, epoch ms
    PRIMARY KEY (session_id, path)
);
CREATE TABLE {s}.places (
    session_id text NOT NULL,
    project_key text NOT NULL,
    workspace text NOT NULL,
    workbench text NOT NULL,
    runner text NOT NULL,
    first_seen bigint NOT NULL,
    last_seen bigint NOT NULL,
    PRIMARY KEY (session_id, workspace, workbench)
);
CREATE TABLE {s}.spills (
    digest text PRIMARY KEY,               -- sha256 of the manifest line
    session_id text,
    row_json text NOT NULL
);
CREATE INDEX spills_by_session ON {s}.spills (session_id)
"""


def is_dsn(value: object) -> bool:
    """Whether `value` is a PostgreSQL connection URI (`postgresql://…` or `postgres://…`)."""
    return isinstance(value, str) and value.startswith(_SCHEMES)


def redact(dsn: str) -> str:
    """The DSN with its password replaced by `***` (for messages and reprs)."""
    try:
        parts = urlsplit(dsn)
        if parts.password is None:
            return dsn
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
        return urlunsplit(parts._replace(netloc=netloc))
    except ValueError:
        return "postgresql://…"


def asyncpg_module() -> Any:
    """asyncpg, or `StoreError` naming the extra that installs it."""
    try:
        import asyncpg  # type: ignore[import-untyped]
    except ImportError as exc:
        raise StoreError(f"PostgresSessionStore needs the asyncpg driver: {_EXTRA}") from exc
    return asyncpg


def check_schema_name(schema: object) -> str:
    if not isinstance(schema, str) or not _IDENT.fullmatch(schema):
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
        self, source: str | Any, *, schema: str, connect_timeout: float, max_size: int, runner: str | None
    ) -> None:
        self.asyncpg = asyncpg_module()
        self.runner = runner
        """The runner name in leases and places (None: `$FLOWER_RUNNER` or the host name)."""
        self.schema = check_schema_name(schema)
        self.dsn: str | None = source if isinstance(source, str) else None
        self._given: Any = None if isinstance(source, str) else source
        self.connect_timeout = connect_timeout
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

    def error(self, what: str, exc: BaseException) -> StoreError:
        """A `StoreError` for a failure of `what` (to raise `from exc`)."""
        detail = str(exc).strip() or type(exc).__name__
        return StoreError(f"PostgreSQL session store {self.label} (schema {self.schema}): {what}: {detail}")

    async def _pool(self) -> Any:
        if self._given is not None:
            return self._given
        loop = asyncio.get_running_loop()
        pool = self._pools.get(loop)
        if pool is None:
            pool = await self.asyncpg.create_pool(
                self.dsn, min_size=0, max_size=self.max_size, timeout=self.connect_timeout
            )
            self._pools[loop] = pool
        return pool

    @property
    def failures(self) -> tuple[type[BaseException], ...]:
        """What the driver and the network raise: each becomes a `StoreError`."""
        return (TimeoutError, OSError, self.asyncpg.PostgresError, self.asyncpg.InterfaceError)

    @contextmanager
    def translated(self, what: str) -> Iterator[None]:
        """Driver and network failures inside the block raised as `StoreError` (the cause chained)."""
        try:
            yield
        except StoreError:
            raise
        except self.failures as exc:
            raise self.error(what, exc) from exc

    @asynccontextmanager
    async def connection(self, what: str) -> AsyncIterator[Any]:
        """A pooled connection on a ready schema; any driver or network failure becomes `StoreError`."""
        with self.translated(what):
            pool = await self._pool()
            async with pool.acquire() as conn:
                if not self._created:
                    await self._create(conn)
                yield conn

    async def connect(self, what: str) -> Any:
        """A connection of its own (a lease holds one for as long as it lasts), on a ready schema."""
        with self.translated(what):
            if self.dsn is not None:
                conn = await self.asyncpg.connect(self.dsn, timeout=self.connect_timeout)
            else:
                conn = await self._given.acquire()
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
            s = self.schema
            async with conn.transaction():
                # several runners starting at once: one creates, the others wait and then see it
                await conn.execute("SELECT pg_advisory_xact_lock($1)", advisory_key("schema", s))
                tables = await conn.fetch(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = $1", s
                )
                names = {row["table_name"] for row in tables}
                if not names:
                    await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {s}")
                    await conn.execute(_TABLES.format(s=s))
                    await conn.execute(
                        f"INSERT INTO {s}.meta (key, value) VALUES ('schema_version', $1)",
                        str(SCHEMA_VERSION),
                    )
                elif "meta" not in names:
                    raise StoreError(
                        f"PostgreSQL schema {s} at {self.label} holds tables of another application "
                        f"({', '.join(sorted(names)[:5])}); give flower a schema of its own (schema=...)"
                    )
                else:
                    version = await conn.fetchval(f"SELECT value FROM {s}.meta WHERE key = 'schema_version'")
                    if version is None or not str(version).isdigit() or int(version) != SCHEMA_VERSION:
                        newer = (
                            version is not None and str(version).isdigit() and int(version) > SCHEMA_VERSION
                        )
                        why = "a newer flower wrote it: upgrade flower-context" if newer else "unknown layout"
                        raise StoreError(
                            f"PostgreSQL schema {s} at {self.label} holds a flower session store of schema "
                            f"version {version}; this version reads {SCHEMA_VERSION} ({why})"
                        )
            self._created = True
