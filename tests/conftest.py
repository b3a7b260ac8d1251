"""Suite-wide options and fixtures: the transcript corpus the corpus tests read (`--corpus DIR`), a
real PostgreSQL server for the fleet tests (never a fake), the glance jail's, and a word while collecting.

`postgres_dsn` is `$FLOWER_TEST_POSTGRES_DSN` (CI starts a cluster and sets it), else a throwaway cluster
this test process starts and stops (`tests/postgres.py`); a test that needs it is skipped, with the
reason, only when neither is possible. `pg_schema` gives each test a schema of its own.

`world` is a world to attack from inside the glance jail, one per test module (`tests/glance/jail_world.py`);
`shell` runs a test under bash and under zsh (those installed).

Collecting imports every test module (the SDK, OpenTelemetry, matplotlib...) in each pytest process:
about 7 s of CPU, a minute or more of wall time on a busy 2-core machine, and with `-n 2` pytest prints
nothing meanwhile. The suite says so on stderr when it starts collecting, then every 15 s until the
tests are collected (`flower._progress.Heartbeat`, as the demo does).
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import AsyncIterator, Callable, Iterator

import pytest

from flower._progress import Heartbeat
from tests import crashes, postgres
from tests.glance.jail_world import SHELLS, World
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


_COLLECTING = pytest.StashKey[Heartbeat]()


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    """Start the collection's heartbeat (in the process that reports: not in an xdist worker)."""
    config = session.config
    if hasattr(config, "workerinput") or config.getoption("collectonly"):
        return
    workers = config.getoption("numprocesses", None)
    who = f"each of the {workers} workers imports" if workers else "pytest imports"
    beat = Heartbeat(
        f"collecting the tests: {who} every test module first (about 7 s of CPU)", stream=sys.stderr
    )
    beat.step("collecting the tests")
    config.stash[_COLLECTING] = beat.__enter__()


def _collected(config: pytest.Config) -> None:
    beat = config.stash.get(_COLLECTING, None)
    if beat is not None:
        del config.stash[_COLLECTING]
        beat.__exit__(None, None, None)


@pytest.hookimpl
def pytest_collection_finish(session: pytest.Session) -> None:
    """Without xdist: the tests are collected."""
    if session.config.getoption("numprocesses", None) in (None, 0):
        _collected(session.config)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: object, ids: list[str]) -> None:
    """With xdist: the first worker collected (they collect alike, and xdist prints the count)."""
    _collected(node.config)  # type: ignore[attr-defined]


@pytest.hookimpl
def pytest_sessionfinish(session: pytest.Session) -> None:
    _collected(session.config)  # a collection error ends the session before any of the above
    crashes.clean_up(session.config)


@pytest.hookimpl
def pytest_sessionstart(session: pytest.Session) -> None:
    """In an xdist worker: fault dumps go to a file the controller reads if the worker crashes (after
    pytest's own faulthandler set itself up)."""
    crashes.configure_worker(session.config)


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem: str, report: pytest.TestReport, sched: object) -> None:
    """A worker crashed: its fault dump goes into the report (`tests/crashes.py`)."""
    crashes.explain_crash(report)


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
