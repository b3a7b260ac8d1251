"""`PostgresSessionStore`'s tables, and the migration of an older layout in place.

The layout's version is kept in `<schema>.meta` under `schema_version`:

- 1: the first layout.
- 2: session leases carry an **epoch** (`leases.epoch`, drawn from the sequence `lease_epochs` at each
  acquisition, never reused), and a lease's row outlives its holder, so an old epoch never becomes
  valid again: a write from a runner whose lease was taken over is refused (fencing).

A store of version 1 is migrated to 2 at first use, in one transaction under the schema's advisory
lock (several runners starting at once migrate it once). A runner of an older flower then refuses the
schema, naming the version: upgrade every runner of a fleet together.
"""

from __future__ import annotations

from typing import Any, Final

from ..._errors import StoreError

__all__ = ["SCHEMA_VERSION", "ensure_schema"]

SCHEMA_VERSION: Final = 2
"""The layout this library reads and writes."""

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
    uuid text,                             -- the idempotency key: the entry's uuid, or the outbox's key
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
    backend_pid integer NOT NULL,          -- the holder's lease connection's server process (0: none)
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

_TO_2: Final = """
ALTER TABLE {s}.leases ADD COLUMN epoch bigint NOT NULL DEFAULT 0;  -- 0: leased before epochs existed
CREATE SEQUENCE {s}.lease_epochs
"""

_MIGRATIONS: Final = {1: _TO_2}
"""version -> the statements that take a store of that version to the next."""


async def ensure_schema(conn: Any, s: str, label: str) -> None:
    """Create the store's tables in schema `s`, or migrate them to `SCHEMA_VERSION`; in a transaction
    the caller holds the schema's advisory lock in. Raises `StoreError` for another application's tables,
    a newer layout, or one it does not know."""
    tables = await conn.fetch("SELECT table_name FROM information_schema.tables WHERE table_schema = $1", s)
    names = {row["table_name"] for row in tables}
    if not names:
        await _own_schema(conn, s, label)
        await conn.execute(_TABLES.format(s=s))
        for step in range(1, SCHEMA_VERSION):
            await conn.execute(_MIGRATIONS[step].format(s=s))
        await conn.execute(
            f"INSERT INTO {s}.meta (key, value) VALUES ('schema_version', $1)", str(SCHEMA_VERSION)
        )
        return
    if "meta" not in names:
        raise StoreError(
            f"PostgreSQL schema {s} at {label} holds tables of another application "
            f"({', '.join(sorted(names)[:5])}); give flower a schema of its own (schema=...)"
        )
    found = await conn.fetchval(f"SELECT value FROM {s}.meta WHERE key = 'schema_version'")
    version = int(found) if found is not None and str(found).isdigit() else None
    if version is None or version > SCHEMA_VERSION or version not in (*_MIGRATIONS, SCHEMA_VERSION):
        newer = version is not None and version > SCHEMA_VERSION
        why = "a newer flower wrote it: upgrade flower-context" if newer else "unknown layout"
        raise StoreError(
            f"PostgreSQL schema {s} at {label} holds a flower session store of schema version {found}; "
            f"this version reads {SCHEMA_VERSION} ({why})"
        )
    for step in range(version, SCHEMA_VERSION):
        await conn.execute(_MIGRATIONS[step].format(s=s))
        await conn.execute(f"UPDATE {s}.meta SET value = $1 WHERE key = 'schema_version'", str(step + 1))


async def _own_schema(conn: Any, s: str, label: str) -> None:
    """Make sure schema `s` exists and this role may create its tables there. A schema made beforehand
    for a role without `CREATE` on the database is used as it is (`CREATE SCHEMA IF NOT EXISTS` would be
    refused even though it exists); `StoreError` naming what is missing otherwise."""
    role = await conn.fetchval("SELECT current_user")
    exists = await conn.fetchval("SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", s)
    if not exists:
        if not await conn.fetchval("SELECT has_database_privilege(current_database(), 'CREATE')"):
            raise StoreError(
                f"PostgreSQL schema {s} does not exist at {label} and role {role} may not create it (no "
                f"CREATE on the database): create it for the role (CREATE SCHEMA {s} AUTHORIZATION "
                f"{role}), or grant CREATE on the database"
            )
        await conn.execute(f"CREATE SCHEMA {s}")
        return
    missing = [
        right
        for right in ("USAGE", "CREATE")
        if not await conn.fetchval("SELECT has_schema_privilege($1, $2)", s, right)
    ]
    if missing:
        raise StoreError(
            f"PostgreSQL schema {s} at {label} exists but role {role} lacks {' and '.join(missing)} on it, "
            f"so flower cannot create its tables there: GRANT {', '.join(missing)} ON SCHEMA {s} TO {role} "
            f"(or ALTER SCHEMA {s} OWNER TO {role})"
        )


async def store_identity(conn: Any, s: str) -> str:
    """The store's identity: `postgresql:<cluster's system identifier>/<database>/<schema>`, the same
    through any host name, port or pooler that reaches it. A role that may not read the control data
    (`pg_control_system()`) gets an id kept in the store's `meta` table instead (`store-<id>`). Never
    fails on a privilege, so it can run inside a transaction (an append checks it there)."""
    database, readable = await conn.fetchrow(
        "SELECT current_database(), has_function_privilege('pg_catalog.pg_control_system()', 'EXECUTE')"
    )
    if readable:
        system = await conn.fetchval("SELECT system_identifier::text FROM pg_control_system()")
    else:
        await conn.execute(
            f"INSERT INTO {s}.meta (key, value) VALUES ('store_id', md5(random()::text || "
            "clock_timestamp()::text)) ON CONFLICT (key) DO NOTHING"
        )
        system = "store-" + str(await conn.fetchval(f"SELECT value FROM {s}.meta WHERE key = 'store_id'"))
    return f"postgresql:{system}/{database}/{s}"
