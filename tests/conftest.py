"""Suite-wide options and fixtures: the transcript corpus the corpus tests read (`--corpus DIR`), and a
real PostgreSQL server for the fleet tests (never a fake).

`postgres_dsn` is `$FLOWER_TEST_POSTGRES_DSN` (CI starts a cluster and sets it), else a throwaway cluster
this test process starts and stops (`tests/postgres.py`); a test that needs it is skipped, with the
reason, only when neither is possible. `pg_schema` gives each test a schema of its own.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator

import pytest

from tests import postgres
from tests.stores import corpus


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--corpus",
        metavar="DIR",
        default=None,
        help="a directory of Claude Code transcripts (*.jsonl, any depth) for the corpus tests; default: "
        f"${corpus.ENV}, else the real transcripts beside the repository, else tests/stores/data/corpus",
    )


def pytest_configure(config: pytest.Config) -> None:
    named = config.getoption("--corpus")
    if named:
        corpus.choose(named)
    directory = corpus.named_dir()
    if directory is not None and corpus.missing_reason(directory) is not None:
        raise pytest.UsageError(f"--corpus / ${corpus.ENV}: {corpus.missing_reason(directory)}")


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
