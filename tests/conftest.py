"""Suite-wide fixtures: a real PostgreSQL server for the fleet tests (never a fake), and the glance jail's.

`postgres_dsn` is `$FLOWER_TEST_POSTGRES_DSN` (CI starts a cluster and sets it), else a throwaway cluster
this test process starts and stops (`tests/postgres.py`); a test that needs it is skipped, with the
reason, only when neither is possible. `pg_schema` gives each test a schema of its own.

`world` is a world to attack from inside the glance jail, one per test module (`tests/jail_world.py`);
`shell` runs a test under bash and under zsh (those installed).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator

import pytest

from tests import postgres
from tests.jail_world import SHELLS, World


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """The DSN of a running PostgreSQL server."""
    given = os.environ.get(postgres.ENV)
    if given:
        yield given
        return
    cluster = postgres.start()
    if isinstance(cluster, str):
        pytest.skip(f"no PostgreSQL server: {postgres.ENV} is not set and {cluster}")
    try:
        yield cluster.dsn
    finally:
        cluster.stop()


@pytest.fixture
async def pg_schema(postgres_dsn: str) -> AsyncIterator[Callable[[], str]]:
    """A factory of fresh schema names, each dropped after the test."""
    import asyncpg

    made: list[str] = []

    def make() -> str:
        made.append(f"t_{uuid.uuid4().hex[:16]}")
        return made[-1]

    yield make
    if made:
        conn = await asyncpg.connect(postgres_dsn)
        try:
            for schema in made:
                await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        finally:
            await conn.close()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """A repository, home and temp dir to watch, listeners, a victim process and a terminal."""
    created = World(tmp_path_factory.mktemp("jail"))
    yield created
    created.close()


@pytest.fixture(params=SHELLS, ids=os.path.basename)
def shell(request: pytest.FixtureRequest) -> str:
    """The path of bash, then of zsh."""
    return str(request.param)
