"""Entries reach only the database they were written for: a matrix over SQLite files and PostgreSQL
clusters, through the real CLI.

A run whose store is away for the whole run leaves its entries in the workspace's outbox. Then the same
path or DSN reaches another database (a file replaced, a fail-over behind the same address): the next
run there never delivers them to it, whether the workspace knew the right database's identity (the rows
are bound to it, and delivered as soon as a run reaches it again, through any spelling of its DSN) or
not (they wait, `flower doctor` names them, and `deliver_outbox` / `flower doctor --deliver-outbox`
delivers them to the store a person names: once, however often it is called).

A new session leased late (the store was away when its run began) is leased only in the database the
run's rows are for: when the path or DSN reaches another one by then, nothing is leased there and the
lease waits; with the right database back, the same late lease takes it there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from claude_agent_sdk import project_key_for_directory

from flower import (
    DeliveryPolicy,
    FailureReason,
    LeaseError,
    PostgresSessionStore,
    PruningSessionStore,
    Runtime,
    SqliteSessionStore,
    StepResult,
    worker,
)
from flower._doctor import deliver_outbox
from flower._run.durable import DurableRun
from flower._run.outbox_delivery import outbox_state
from flower._run.stream import Tracker
from flower.events import Event, StoreWarning
from flower.stores._outbox import Outbox
from flower.testing import ScriptedModel, bash, hang_guard
from tests import postgres
from tests.durability.proxy import Proxy

pytestmark = pytest.mark.cli

STEPS = worker("runs steps", "You run the steps.", tools=["Bash"])


async def one_run(
    model: ScriptedModel, workspace: Path, store: Any, *, away: bool = False
) -> tuple[StepResult, list[StoreWarning]]:
    """A run of two Bash steps; `away`: the store is unreachable, so do not wait for it at the end."""
    model.script("main", [bash("echo one"), bash("echo two"), "done"])
    workspace.mkdir(parents=True, exist_ok=True)
    events: list[Event] = []
    policy = DeliveryPolicy(drain_timeout=1.0 if away else hang_guard())
    rt = Runtime(workspace, store=store, configure=model.attach, delivery=policy)
    try:
        result = await rt.run(STEPS, "Run the steps.", on_event=events.append)
    finally:
        await rt.store.aclose()
        await store.aclose()
    return result, [e for e in events if isinstance(e, StoreWarning)]


def key(workspace: Path, session_id: str) -> Any:
    return {"project_key": project_key_for_directory(os.path.realpath(workspace)), "session_id": session_id}


async def held(store: Any, workspace: Path, session_id: str) -> list[str]:
    """The entries `store` holds of the session's main transcript, as JSON (closing the store after)."""
    try:
        entries = await store.load(key(workspace, session_id)) or []
    finally:
        await store.aclose()
    return [json.dumps(e, sort_keys=True) for e in entries]


def waiting(workspace: Path) -> dict[str, int]:
    """Per target, the rows the workspace's outbox holds."""
    outbox = Outbox(workspace / ".flower" / "outbox.db")
    try:
        return {w.target: w.pending for w in outbox.waiting()}
    finally:
        outbox.close()


def kept(workspace: Path) -> list[str]:
    """Every entry the workspace's outbox holds, as JSON, sorted."""
    outbox = Outbox(workspace / ".flower" / "outbox.db")
    try:
        rows = [
            row
            for w in outbox.waiting()
            for sid in outbox.sessions_of(w.target)
            for row in outbox.rows(w.target, sid)
        ]
    finally:
        outbox.close()
    return sorted(json.dumps(json.loads(row.payload), sort_keys=True) for row in rows)


def away_ok(result: StepResult) -> None:
    assert not result.ok and "were not stored" in str(result.error), result.error
    assert result.reason is FailureReason.STORE


# -- SQLite: another file at the same path ---------------------------------------------------------------


@pytest.mark.parametrize("known", [True, False], ids=["identity-known", "identity-unknown"])
async def test_sqlite_entries_never_reach_another_file_at_their_path(
    scripted_model: ScriptedModel, tmp_path: Path, known: bool
) -> None:
    path = tmp_path / "store" / "sessions.db"
    workspace = tmp_path / "w" / "repo"
    first = tmp_path / "first.db"
    if known:  # the workspace reached the first file once: it knows its identity
        done, _ = await one_run(scripted_model, workspace, SqliteSessionStore(path))
        assert done.ok, done.error
        shutil.move(path, first)
    else:
        await SqliteSessionStore(first).identity()  # a store made elsewhere, the one the rows are for
    path.mkdir(parents=True)  # the path cannot be opened for the whole run
    away, _ = await one_run(scripted_model, workspace, SqliteSessionStore(path), away=True)
    away_ok(away)
    assert away.session_id is not None
    lost = sum(waiting(workspace).values())
    entries = kept(workspace)
    assert lost > 0 and len(entries) == lost
    path.rmdir()

    # another database at the same path: it never receives them
    other = SqliteSessionStore(path)
    later, warnings = await one_run(scripted_model, workspace, other)
    assert later.ok, later.error
    assert await held(SqliteSessionStore(path), workspace, away.session_id) == []
    assert any(
        "not delivered to this one" in w.message or "another session store" in w.message for w in warnings
    )
    state = outbox_state(workspace)
    assert state is not None and sum(s.pending for s in state.stores) == lost

    if known:  # the right file back at its path: the next run delivers them there
        shutil.move(path, tmp_path / "second.db")
        shutil.move(first, path)
        back, _ = await one_run(scripted_model, workspace, SqliteSessionStore(path))
        assert back.ok, back.error
        got = await held(SqliteSessionStore(path), workspace, away.session_id)
        assert sorted(got) == entries  # each once
        assert await held(SqliteSessionStore(tmp_path / "second.db"), workspace, away.session_id) == []
    else:  # nobody knows: a person names the store, once is enough, twice delivers nothing more
        assert any("identity" in line or "never reached" in line for line in state.render())
        done_first = await deliver_outbox(workspace, str(first))
        assert done_first.ok and done_first.delivered == lost and done_first.bound == lost, done_first
        again = await deliver_outbox(workspace, str(first))
        assert again.ok and again.delivered == 0 and again.bound == 0, again
        got = await held(SqliteSessionStore(first), workspace, away.session_id)
        assert sorted(got) == entries  # each once
        assert await held(SqliteSessionStore(path), workspace, away.session_id) == []
    assert sum(waiting(workspace).values()) == 0


# -- PostgreSQL: another cluster behind the same DSN, and one database under two DSNs ------------------


@pytest.fixture(scope="module")
def clusters() -> Iterator[tuple[postgres.Cluster, postgres.Cluster]]:
    """Two throwaway clusters: two databases with the same name, user and schema."""
    first = postgres.start()
    if isinstance(first, str):
        pytest.skip(first)
    second = postgres.start()
    if isinstance(second, str):
        first.stop()
        pytest.skip(second)
    try:
        yield first, second
    finally:
        first.stop()
        second.stop()


@pytest.fixture
async def proxy(clusters: tuple[postgres.Cluster, postgres.Cluster]) -> AsyncIterator[Proxy]:
    """One address (`127.0.0.1:<port>`) for whichever cluster it is pointed at."""
    forward = Proxy(clusters[0].port)
    try:
        yield forward
    finally:
        forward.stop()


def pg(dsn: str, schema: str) -> PostgresSessionStore:
    return PostgresSessionStore(dsn, schema=schema, pool_wait=0, connect_timeout=5)


def dead_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("known", [True, False], ids=["identity-known", "identity-unknown"])
async def test_postgres_entries_never_reach_another_cluster_behind_their_dsn(
    scripted_model: ScriptedModel,
    tmp_path: Path,
    clusters: tuple[postgres.Cluster, postgres.Cluster],
    proxy: Proxy,
    known: bool,
) -> None:
    right, wrong = clusters
    schema = f"target_{'known' if known else 'unknown'}"
    dsn = f"postgresql://postgres@127.0.0.1:{proxy.port}/postgres"
    workspace = tmp_path / "w" / "repo"
    if known:
        done, _ = await one_run(scripted_model, workspace, pg(dsn, schema))
        assert done.ok, done.error
    proxy.upstream = dead_port()  # the store is away for the whole run
    away, _ = await one_run(scripted_model, workspace, pg(dsn, schema), away=True)
    away_ok(away)
    assert away.session_id is not None
    lost = sum(waiting(workspace).values())
    entries = kept(workspace)
    assert lost > 0 and len(entries) == lost
    assert all(t.startswith("postgresql:") for t in waiting(workspace)) == known

    proxy.upstream = wrong.port  # a fail-over to another database behind the same address
    later, warnings = await one_run(scripted_model, workspace, pg(dsn, schema))
    assert later.ok, later.error
    assert await held(pg(wrong.dsn, schema), workspace, away.session_id) == []
    assert warnings, "the run says entries wait for another store"
    assert sum(waiting(workspace).values()) == lost

    respelled = f"postgresql://postgres@localhost:{right.port}/postgres?application_name=respelled"
    if known:  # the right database through another spelling of its address: its identity decides
        back, _ = await one_run(scripted_model, workspace, pg(respelled, schema))
        assert back.ok, back.error
    else:  # nobody knows where they belong: a person names it, with the command flower doctor shows
        command = [
            sys.executable, "-c", "import sys; from flower._cli import main; sys.exit(main())",
            "doctor", "--deliver-outbox", respelled,
            "--schema", schema, "--workspace", str(workspace),
        ]  # fmt: skip
        for _ in range(2):  # twice: the second delivers nothing more
            done_cli = await anyio.to_thread.run_sync(
                lambda: subprocess.run(command, capture_output=True, text=True, timeout=hang_guard())
            )
            assert done_cli.returncode == 0, done_cli.stdout + done_cli.stderr
        assert "0 entries delivered, 0 left" in done_cli.stdout, done_cli.stdout
    got = await held(pg(right.dsn, schema), workspace, away.session_id)
    assert sorted(got) == entries  # each once
    assert await held(pg(wrong.dsn, schema), workspace, away.session_id) == []
    assert sum(waiting(workspace).values()) == 0


# -- a late lease: only in the database the run's rows are for ------------------------------------------


async def late_lease(workspace: Path, store: Any, arrive: Callable[[], None], until: str) -> tuple[str, Any]:
    """A run that begins with `store` away, then `arrive()` puts a database behind its path or DSN; the
    run's body ends once the new session's late lease is `until` ("refused" or "held"). Returns the
    session and why its lease was refused (None when held)."""
    run = DurableRun(
        PruningSessionStore(store),
        workspace,
        Tracker(None),
        lease_timeout=0.0,
        policy=DeliveryPolicy(backoff=0.01, max_backoff=0.05, drain_timeout=hang_guard()),
    )
    await run.open()
    session_id = await run.new_session()
    assert session_id in run.keeper.unheld  # the store is away: the keeper leases it later
    await run.started(session_id, resumed=False, fork_of=None, config_dir=str(workspace / "config"))
    arrive()

    async def body() -> None:
        with anyio.fail_after(hang_guard()):
            while True:
                why = run.keeper.why.get(session_id)
                if until == "refused" and "the entries were written for" in str(why):
                    return
                if until == "held" and session_id not in run.keeper.unheld:
                    return
                await anyio.sleep(0.01)

    try:
        await run.run(body)
        why = run.keeper.why.get(session_id)
        assert run.failure is None, run.failure
    finally:
        await run.close()
        await store.aclose()
    return session_id, why


async def never_leased(store: Any, session_id: str) -> bool:
    """Whether nobody ever leased the session in `store` (a lease at epoch 0 is taken only then)."""
    try:
        async with store.lease(session_id, if_epoch=0):
            return True
    except LeaseError:
        return False
    finally:
        await store.aclose()


def remember(workspace: Path, identity: str | None, label: str) -> None:
    """An earlier run in `workspace` reached the store named `label`, and learned it is `identity`."""
    assert identity is not None
    outbox = Outbox(workspace / ".flower" / "outbox.db")
    try:
        outbox.remember(identity, label)
    finally:
        outbox.close()


async def test_a_late_lease_never_goes_to_another_sqlite_file_at_the_path(tmp_path: Path) -> None:
    workspace, path = tmp_path / "repo", tmp_path / "store" / "sessions.db"
    workspace.mkdir()
    right, other = tmp_path / "right.db", tmp_path / "other.db"
    identities = []
    for database in (right, other):
        made = SqliteSessionStore(database)
        identities.append(await made.identity())
        await made.aclose()
    remember(workspace, identities[0], SqliteSessionStore(path).path)

    def at_path(database: Path) -> Callable[[], None]:
        path.mkdir(parents=True)  # away at the start: the path cannot be opened

        def arrive() -> None:
            path.rmdir()
            shutil.copyfile(database, path)

        return arrive

    session_id, why = await late_lease(workspace, SqliteSessionStore(path), at_path(other), "refused")
    assert str(identities[1]) in str(why) and str(identities[0]) in str(why), why
    assert await never_leased(SqliteSessionStore(path), session_id)  # nothing leased in the other file

    path.unlink()
    session_id, why = await late_lease(workspace, SqliteSessionStore(path), at_path(right), "held")
    assert why is None
    assert not await never_leased(SqliteSessionStore(path), session_id)  # the right file: leased there


async def test_a_late_lease_with_no_known_identity_goes_where_the_path_leads(tmp_path: Path) -> None:
    """A run that never learned which database its rows are for has nothing to compare with: its late
    lease goes to the file at the path, as its deliveries do."""
    workspace, path = tmp_path / "repo", tmp_path / "store" / "sessions.db"
    workspace.mkdir()
    database = tmp_path / "made.db"
    made = SqliteSessionStore(database)
    await made.identity()
    await made.aclose()
    path.mkdir(parents=True)  # away at the start

    def arrive() -> None:
        path.rmdir()
        shutil.copyfile(database, path)

    session_id, _ = await late_lease(workspace, SqliteSessionStore(path), arrive, "held")
    assert not await never_leased(SqliteSessionStore(path), session_id)


async def test_a_late_lease_never_goes_to_another_cluster_behind_the_dsn(
    tmp_path: Path, clusters: tuple[postgres.Cluster, postgres.Cluster], proxy: Proxy
) -> None:
    right, wrong = clusters
    schema = "late_lease"
    dsn = f"postgresql://postgres@127.0.0.1:{proxy.port}/postgres"
    workspace = tmp_path / "repo"
    workspace.mkdir()
    known = pg(right.dsn, schema)
    try:
        remember(workspace, await known.identity(), pg(dsn, schema).label)
    finally:
        await known.aclose()

    def behind(cluster: postgres.Cluster) -> Callable[[], None]:
        proxy.upstream = dead_port()  # away at the start

        def arrive() -> None:
            proxy.upstream = cluster.port

        return arrive

    session_id, why = await late_lease(workspace, pg(dsn, schema), behind(wrong), "refused")
    assert why is not None
    assert await never_leased(pg(wrong.dsn, schema), session_id)  # nothing leased in the other cluster

    session_id, why = await late_lease(workspace, pg(dsn, schema), behind(right), "held")
    assert why is None
    assert not await never_leased(pg(right.dsn, schema), session_id)  # the right one: leased there
