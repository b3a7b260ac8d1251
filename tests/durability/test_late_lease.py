"""A new session leased late (its store was away when the run began) is leased only in the database the
run's rows are for: when the path reaches another SQLite file by then, nothing is leased there, and the
session's lease waits; once the right file is back at the path, the same late lease takes it there."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio

from flower import DeliveryPolicy, LeaseError, PruningSessionStore, SqliteSessionStore
from flower._run.durable import DurableRun
from flower._run.stream import Tracker
from flower.stores.outbox import Outbox
from flower.testing import hang_guard


async def _late_lease(workspace: Path, path: Path, database: Path, until: str) -> tuple[str, DurableRun]:
    """A run that begins with the store away (a directory at `path`), then finds `database` at the path;
    its body ends once the session's late lease is `until` ("refused" or "held")."""
    path.mkdir(parents=True)
    store = SqliteSessionStore(path)
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
    path.rmdir()
    shutil.copyfile(database, path)

    async def body() -> None:
        with anyio.fail_after(hang_guard()):
            while True:
                why = str(run.keeper.why.get(session_id, ""))
                if until == "refused" and "the entries were written for" in why:
                    return
                if until == "held" and session_id not in run.keeper.unheld:
                    return
                await anyio.sleep(0.01)

    try:
        await run.run(body)
    finally:
        await run.close()
        await store.aclose()
    return session_id, run


async def _never_leased(database: Path, session_id: str) -> bool:
    """Whether nobody ever leased the session in the file (a lease at epoch 0 is taken only then)."""
    store = SqliteSessionStore(database)
    try:
        async with store.lease(session_id, if_epoch=0):
            return True
    except LeaseError:
        return False
    finally:
        await store.aclose()


async def test_a_late_lease_never_goes_to_another_file_at_the_store_path(tmp_path: Path) -> None:
    workspace = tmp_path / "repo"
    workspace.mkdir()
    path = tmp_path / "store" / "sessions.db"
    right, other = tmp_path / "right.db", tmp_path / "other.db"
    identities = []
    for database in (right, other):
        made = SqliteSessionStore(database)
        identities.append(await made.identity())
        await made.aclose()
    assert None not in identities and identities[0] != identities[1]
    outbox = Outbox(workspace / ".flower" / "outbox.db")  # an earlier run here reached the right file
    try:
        outbox.remember(str(identities[0]), SqliteSessionStore(path).path)
    finally:
        outbox.close()

    session_id, run = await _late_lease(workspace, path, other, "refused")
    assert run.target == identities[0]
    why = str(run.keeper.why[session_id])
    assert identities[1] in why and identities[0] in why, why
    assert await _never_leased(path, session_id)  # the other file at the path: no lease taken there

    path.unlink()
    session_id, run = await _late_lease(workspace, path, right, "held")
    assert run.failure is None, run.failure
    assert not await _never_leased(path, session_id)  # the right file: leased there


async def test_a_late_lease_with_no_known_identity_goes_where_the_path_leads(tmp_path: Path) -> None:
    """A run that never learned which database its rows are for has nothing to compare with: its late
    lease goes to the file at the path, as its deliveries do."""
    workspace = tmp_path / "repo"
    workspace.mkdir()
    path = tmp_path / "store" / "sessions.db"
    database = tmp_path / "made.db"
    made = SqliteSessionStore(database)
    await made.identity()
    await made.aclose()
    session_id, _ = await _late_lease(workspace, path, database, "held")
    assert not await _never_leased(path, session_id)
