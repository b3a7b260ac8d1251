"""A role without `CREATE` on the database runs on a schema made for it beforehand (as docs/fleet.md
suggests), on a real server with a real role; without one, the error names what is missing."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest

from flower import PostgresSessionStore, Runtime, StoreError, worker
from flower.testing import ScriptedModel, bash

STEPS = worker("runs steps", "You run the steps.", tools=["Bash"])


def as_role(dsn: str, role: str) -> str:
    parts = urlsplit(dsn)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit(parts._replace(netloc=f"{role}@{host}"))


@pytest.fixture
async def role(postgres_dsn: str) -> AsyncIterator[str]:
    """A login role with no right on the database beyond connecting (dropped after the test)."""
    name = f"r_{uuid.uuid4().hex[:12]}"
    conn = await asyncpg.connect(postgres_dsn)
    try:
        await conn.execute(f"CREATE ROLE {name} LOGIN")
        assert not await conn.fetchval(
            "SELECT has_database_privilege($1, current_database(), 'CREATE')", name
        )
        yield name
        await conn.execute(f"DROP OWNED BY {name} CASCADE")
        await conn.execute(f"DROP ROLE {name}")
    finally:
        await conn.close()


async def admin(dsn: str, statement: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


@pytest.mark.cli
async def test_a_role_without_create_runs_on_a_schema_made_for_it(
    scripted_model: ScriptedModel, tmp_path: Path, postgres_dsn: str, role: str
) -> None:
    schema = f"s_{role}"
    await admin(postgres_dsn, f"CREATE SCHEMA {schema} AUTHORIZATION {role}")
    store = PostgresSessionStore(as_role(postgres_dsn, role), schema=schema)
    scripted_model.script("main", [bash("echo one"), "done", "next"])
    workspace = tmp_path / "repo"
    workspace.mkdir()
    rt = Runtime(workspace, store=store, configure=scripted_model.attach)
    try:
        result = await rt.run(STEPS, "Run the step.", on_event=None)
        assert result.ok, result.error
        assert result.session_id is not None
        again = await rt.run(STEPS, "Go on.", resume=result.session_id)
    finally:
        await rt.store.aclose()
        await store.aclose()
    assert again.ok, again.error
    assert [r.text.split("\n")[0] for r in scripted_model.request("main", -1).tool_results] == ["one"]


async def test_without_a_schema_or_its_rights_the_error_names_what_is_missing(
    postgres_dsn: str, role: str
) -> None:
    dsn = as_role(postgres_dsn, role)
    key = {"project_key": "p", "session_id": "s"}
    store = PostgresSessionStore(dsn, schema=f"none_{role}", pool_wait=0)
    with pytest.raises(StoreError) as missing:
        await store.load(key)  # type: ignore[arg-type]
    await store.aclose()
    assert f"schema none_{role} does not exist" in str(missing.value)
    assert f"CREATE SCHEMA none_{role} AUTHORIZATION {role}" in str(missing.value)

    await admin(postgres_dsn, f"CREATE SCHEMA other_{role}")  # the role may not use it
    store = PostgresSessionStore(dsn, schema=f"other_{role}", pool_wait=0)
    with pytest.raises(StoreError) as refused:
        await store.load(key)  # type: ignore[arg-type]
    await store.aclose()
    assert "lacks USAGE and CREATE on it" in str(refused.value)
    assert f"GRANT USAGE, CREATE ON SCHEMA other_{role} TO {role}" in str(refused.value)
    await admin(postgres_dsn, f"DROP SCHEMA other_{role}")
