"""`PostgresSessionStore`: the SDK's `SessionStore` protocol in PostgreSQL, for a fleet of runners.

Many runners on many machines share one store: any of them can resume any session, with its files.

- The whole protocol, the optional methods included; it passes the SDK's
  `run_session_store_conformance`, alone and under the layer-4 stores. Entries are kept byte for byte
  (JSON text, not `jsonb`), idempotent on their `uuid`; a batch lands whole or not at all.
- Its own schema (`schema="flower"`), created on first use with a schema version; a newer version
  than this library reads, a schema of another application, or a server it cannot reach raises
  `StoreError` with the driver's exception chained.
- Session leases (`lease()`): an advisory lock per session, released by the server when the holder's
  connection ends, with an epoch every append of the holder checks (fencing, see `Lease`).
- Files follow the session: a workbench attached for a working directory (`attach_workbench`) is
  published with every append, and `follow()` restores a session's files into the local workbench and
  serves its history moved to this place (another project key, other absolute paths). A file upload that
  fails never costs the entries: it is logged, and the next append or the end of the lease sends again.

Needs the `postgres` extra (`pip install 'flower-context[postgres]'`, which installs asyncpg) and an
asyncio event loop. The constructor does no I/O.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, cast

import anyio
from claude_agent_sdk import (
    SessionKey,
    SessionListSubkeysKey,
    SessionStore,
    SessionStoreEntry,
    SessionStoreListEntry,
    SessionSummaryEntry,
    project_key_for_directory,
)

from ..._errors import SpecError, StoreError
from ..._util.check import checked
from ..._util.secrets import redact
from .._closing import AsyncClosing
from .._lease import Holding, Lease, check_epoch, check_timeout, holder_name
from .._relocate import Moves, relocate
from .._sqlite._sql import _check_key
from . import _transcripts as sql
from ._connection import Connections, is_dsn
from ._files import home_project
from ._lease import hold_lease
from ._schema import store_identity
from ._sync import Attachment, publish, restore

__all__ = ["PostgresSessionStore"]

logger = logging.getLogger("flower.stores")

_DECODE_IN_THREAD = 2000  # entries: decoding a long history off the event loop


class PostgresSessionStore(AsyncClosing, SessionStore):
    """A `SessionStore` in PostgreSQL; see the module docstring.

    Example::

        store = PostgresSessionStore("postgresql://flower@db.internal/runs")
        rt = Runtime(workspace="repo", store=store)      # or Runtime(..., store="postgresql://...")
        ...
        await store.aclose()
    """

    @checked
    def __init__(
        self,
        dsn: str | Any,
        *,
        schema: str = "flower",
        connect_timeout: float = 10.0,
        pool_size: int = 10,
        pool_wait: float = 30.0,
        max_file_bytes: int = 64 << 20,
        runner: str | None = None,
    ) -> None:
        """`dsn` is a `postgresql://` URI (the store opens its own pool) or an `asyncpg.Pool` (yours to
        close). `schema` holds the store's tables. `pool_size` bounds the pool the store opens; each
        held lease uses one more connection of its own. A pooled connection that does not come within
        `connect_timeout` is waited for again, with backoff, for up to `pool_wait` seconds in all (0: no
        second attempt). Workbench files over `max_file_bytes` stay local.
        `runner` names this runner in leases and in the fleet report (default: `$FLOWER_RUNNER`, else the
        host name)."""
        if not is_dsn(dsn) and not callable(getattr(dsn, "acquire", None)):
            raise SpecError(
                "PostgresSessionStore: dsn must be a postgresql:// DSN or an asyncpg pool, got "
                f"{redact(repr(dsn)):.80}"
            )
        for name, value in (("connect_timeout", connect_timeout), ("pool_size", pool_size)):
            if value <= 0:
                raise SpecError(f"PostgresSessionStore: {name} must be a positive number, got {value!r}")
        if not 0 <= pool_wait < 1e9:
            raise SpecError(
                f"PostgresSessionStore: pool_wait must be a number of seconds >= 0, got {pool_wait!r}"
            )
        if max_file_bytes < 0:
            raise SpecError(
                f"PostgresSessionStore: max_file_bytes must be an int >= 0, got {max_file_bytes!r}"
            )
        if runner is not None and not runner.strip():
            raise SpecError(f"PostgresSessionStore: runner must be a non-empty str or None, got {runner!r}")
        self._conns = Connections(
            dsn,
            schema=schema,
            connect_timeout=float(connect_timeout),
            max_size=int(pool_size),
            runner=runner,
            pool_wait=float(pool_wait),
        )
        self.max_file_bytes = max_file_bytes
        """Workbench files larger than this are not sent to the store."""
        self._attached: dict[str, Attachment] = {}
        self._homes: dict[str, tuple[str, str]] = {}  # session -> (local project key, home project key)
        self._moves: dict[str, Moves] = {}  # session -> path moves applied to what load() returns
        self._holdings: dict[str, Holding] = {}  # session -> the lease this store holds, while it does

    @property
    def schema(self) -> str:
        """The PostgreSQL schema that holds the store's tables."""
        return self._conns.schema

    @property
    def label(self) -> str:
        """The DSN without its password (or the pool's type) and the schema: for messages."""
        return f"{self._conns.label} (schema {self.schema})"

    def __repr__(self) -> str:
        return f"PostgresSessionStore({self._conns.label!r}, schema={self.schema!r})"

    # -- keys and places -----------------------------------------------------------------------------

    def _key(self, key: SessionKey) -> SessionKey:
        _check_key(key)
        home = self._homes.get(key["session_id"])
        if home is not None and key["project_key"] == home[0] and home[0] != home[1]:
            return cast(SessionKey, {**key, "project_key": home[1]})
        return key

    @checked
    def attach_workbench(self, cwd: str | os.PathLike[str], workbench: str | os.PathLike[str]) -> None:
        """Carry the files of the workbench `workbench` for sessions run with the CLI in `cwd`.

        Every append of such a session first sends what is new in the workbench, and `follow()`
        restores them elsewhere. The Runtime and `instrument()` call it for you. No I/O but a realpath.
        """
        workspace = os.path.realpath(os.fspath(cwd))
        project_key = project_key_for_directory(workspace)
        current = self._attached.get(project_key)
        root = Path(os.path.abspath(os.fspath(workbench)))
        if current is None or current.workbench != root:
            self._attached[project_key] = Attachment(project_key, workspace, root)

    @asynccontextmanager
    @checked
    async def follow(self, session_id: str, *, cwd: str | os.PathLike[str]) -> AsyncIterator[Lease]:
        """For the block: restore `session_id`'s files into the workbench attached for `cwd` (where they
        are missing), and serve its history as if it had always run here: from the project key it is
        stored under, with the paths of the places it ran in moved to this one. Publishes at the end."""
        workspace = os.path.realpath(os.fspath(cwd))
        local = project_key_for_directory(workspace)
        attachment = self._attached.get(local)
        restored: list[str] = []
        kept: list[str] = []
        async with self._conns.connection("finding the session") as conn:
            home = await home_project(conn, self.schema, session_id, local)
        if attachment is not None:
            restored, kept, elsewhere = await restore(
                self._conns, attachment, session_id, self.max_file_bytes
            )
            self._moves[session_id] = attachment.moves(elsewhere)
        if home is not None:
            self._homes[session_id] = (local, home)
        me = holder_name(self._conns.runner)
        try:
            yield Lease(session_id, me, self.label, restored=tuple(restored), kept=tuple(kept))
        finally:
            if attachment is not None:  # what the run wrote travels, if it can; never at the run's cost
                with anyio.CancelScope(shield=True):
                    await self._publish(attachment, session_id)
            self._homes.pop(session_id, None)
            self._moves.pop(session_id, None)

    async def _publish(self, attachment: Attachment, session_id: str) -> None:
        """Send the workbench's new files; a failure is logged (the next append or lease end retries)."""
        try:
            await publish(self._conns, attachment, session_id, self.max_file_bytes)
        except (StoreError, OSError) as exc:
            logger.warning("flower.stores: workbench files of session %s not sent yet: %s", session_id, exc)

    def lease(
        self, session_id: str, *, timeout: float = 0.0, if_epoch: int | None = None
    ) -> AbstractAsyncContextManager[Lease]:
        """Hold the lease of `session_id` for the `async with` block (see `Lease`).

        Another runner holding it: wait up to `timeout` seconds (default: do not wait; `math.inf`: as
        long as it takes), then `LeaseError` naming the session and the holder. With `if_epoch`, the
        lease is taken only if nobody leased the session since that epoch (0: never leased), else
        `LeaseError`: how the outbox delivers what a dead runner left without forking the session.
        """
        if not isinstance(session_id, str) or not session_id:
            raise SpecError(
                f"PostgresSessionStore.lease: session_id must be a non-empty str, got {session_id!r}"
            )
        wait = check_timeout(timeout, "PostgresSessionStore.lease")
        expect = check_epoch(if_epoch, "PostgresSessionStore.lease")
        return hold_lease(self._conns, session_id, wait, self._holdings, expect)

    @checked
    def holding(self, session_id: str) -> Holding | None:
        """The lease of `session_id` this store holds now, or None (appends of a held session are fenced)."""
        return self._holdings.get(session_id)

    # -- the protocol --------------------------------------------------------------------------------

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        """Store a batch in order, skipping uuids already stored; atomic. Sends the workbench's new
        files first when one is attached for the key's project (a failure there is only logged). A
        session this store holds the lease of is fenced: `LeaseError` once another runner took it over."""
        if not isinstance(entries, list | tuple):
            raise StoreError(f"append() takes a list of entries, got {type(entries).__name__}")
        if entries:
            await self._append(key, sql.rows_of(entries, self.label))

    async def append_keyed(
        self, key: SessionKey, rows: Sequence[tuple[str, str]], *, identity: str | None = None
    ) -> None:
        """Store `(idempotency key, entry JSON)` rows in order, skipping keys already stored; atomic and
        fenced as `append()`. The outbox's delivery: an entry without a uuid gets a key of its own, so a
        batch sent again after a lost reply lands once. With `identity`, only when this store is the one
        of that identity (checked in the append's transaction; `StoreError` otherwise)."""
        if rows:
            await self._append(key, sql.keyed_rows(rows, self.label), identity)

    async def _append(self, key: SessionKey, rows: list[sql.Row], identity: str | None = None) -> None:
        stored = self._key(key)
        attachment = self._attached.get(key["project_key"])
        if attachment is not None:
            await self._publish(attachment, key["session_id"])
        holding = self._holdings.get(key["session_id"])
        epoch = holding.epoch if holding is not None else None
        async with self._conns.connection("append") as conn:
            await sql.append(
                conn, self.schema, stored, rows, epoch=epoch, where=self.label, identity=identity
            )

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """Every entry of the transcript in append order; `None` for a key never written."""
        stored = self._key(key)
        async with self._conns.connection("load") as conn:
            payloads = await sql.load(conn, self.schema, stored)
        if payloads is None:
            return None
        if len(payloads) > _DECODE_IN_THREAD:
            entries = await anyio.to_thread.run_sync(lambda: [json.loads(p) for p in payloads])
        else:
            entries = [json.loads(p) for p in payloads]
        moves = self._moves.get(key["session_id"])
        return cast(list[SessionStoreEntry], relocate(entries, moves) if moves else entries)

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """The main transcripts of a project with their last write time (epoch ms)."""
        _check_project(project_key)
        async with self._conns.connection("list_sessions") as conn:
            return await sql.list_sessions(conn, self.schema, project_key)

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        """The summaries folded at each main-transcript append (`fold_session_summary`), one per session."""
        _check_project(project_key)
        async with self._conns.connection("list_session_summaries") as conn:
            return await sql.summaries(conn, self.schema, project_key)

    async def delete(self, key: SessionKey) -> None:
        """Delete a transcript; a main key (no `subpath`) takes its subagent transcripts and summary along."""
        stored = self._key(key)
        async with self._conns.connection("delete") as conn:
            await sql.delete(conn, self.schema, stored)

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        """The subpaths (subagent transcripts) stored under a session."""
        stored = self._key(cast(SessionKey, key))
        async with self._conns.connection("list_subkeys") as conn:
            return await sql.list_subkeys(conn, self.schema, stored["project_key"], stored["session_id"])

    async def identity(self) -> str:
        """The store's identity, whatever DSN reaches it: `postgresql:<system identifier>/<database>/
        <schema>` (the cluster's system identifier, as `pg_control_system()` gives it). The outbox keys
        waiting entries by it, so another host name, port or pooler for the same database delivers them."""
        async with self._conns.connection("reading the store's identity") as conn:
            return await store_identity(conn, self.schema)

    # -- lifecycle -----------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close the pool the store opened (a pool it was given stays open); a later call opens one again."""
        await self._conns.close()

    @property
    def connections(self) -> Connections:
        """The store's connections (for flower's fleet report)."""
        return self._conns


def _check_project(project_key: object) -> None:
    if not isinstance(project_key, str) or not project_key:
        raise StoreError(f"project_key must be a non-empty str, got {project_key!r}")
