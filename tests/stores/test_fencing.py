"""Lease epochs: a runner whose lease was taken over cannot write the session, in either store."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import asyncpg
import pytest

from flower import LeaseError, PostgresSessionStore, SqliteSessionStore
from flower.testing import hang_guard

ENTRY: Any = {"type": "user", "message": {"content": "x"}}


def key(session: str) -> Any:
    return {"project_key": "-repo", "session_id": session}


def entry(name: str) -> Any:
    return {**ENTRY, "uuid": name}


async def test_sqlite_refuses_the_writes_of_a_holder_whose_lease_was_taken_over(tmp_path: Path) -> None:
    session = str(uuid.uuid4())
    path = tmp_path / "sessions.db"
    first, second = SqliteSessionStore(path), SqliteSessionStore(path)
    async with first.lease(session) as lease:
        await first.append(key(session), [entry("a1")])
        shutil.rmtree(f"{path}-leases")  # the lock file deleted under its holder: a second flock is possible
        async with second.lease(session) as other:
            assert other.epoch == lease.epoch + 1
            with pytest.raises(LeaseError, match=r"taken over by .* \(epoch 2\)") as refused:
                await first.append(key(session), [entry("a2")])
            assert refused.value.taken_over and refused.value.session_id == session
            await second.append(key(session), [entry("b1")])
            holding = first.holding(session)
            assert holding is not None
            with pytest.raises(LeaseError):
                await holding.reacquire()  # never on an epoch that moved on
    assert [e["uuid"] for e in await first.load(key(session))] == ["a1", "b1"]
    for store in (first, second):
        await store.aclose()


async def test_a_conditional_lease_is_taken_only_on_the_epoch_it_names(tmp_path: Path) -> None:
    session = str(uuid.uuid4())
    async with SqliteSessionStore(tmp_path / "sessions.db") as store:
        async with store.lease(session, if_epoch=0) as lease:  # 0: never leased
            assert lease.epoch == 1
        async with store.lease(session, if_epoch=1) as again:
            assert again.epoch == 2
        with pytest.raises(LeaseError) as moved:
            async with store.lease(session, if_epoch=1):
                pass
        assert moved.value.taken_over


async def terminate(dsn: str, runner: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE $1",
            f"flower lease: {runner} %",
        )
    finally:
        await conn.close()


async def lost(holding: Any) -> None:
    with anyio.fail_after(hang_guard()):
        await holding.lost.wait()


async def test_postgres_takes_a_lost_lease_back_or_refuses_the_old_holder(
    postgres_dsn: str, pg_schema: Callable[[], str]
) -> None:
    schema, session = pg_schema(), str(uuid.uuid4())
    names = [f"fence-a-{uuid.uuid4().hex[:6]}", f"fence-b-{uuid.uuid4().hex[:6]}"]
    first, second = (PostgresSessionStore(postgres_dsn, schema=schema, runner=name) for name in names)
    async with first.lease(session) as lease:
        holding = first.holding(session)
        assert holding is not None and holding.epoch == lease.epoch
        await first.append(key(session), [entry("a1")])

        await terminate(postgres_dsn, names[0])  # lost; nobody took it: taken back on a new epoch
        await lost(holding)
        await holding.reacquire()
        assert holding.epoch > lease.epoch and not holding.lost.is_set()
        await first.append(key(session), [entry("a2")])

        await terminate(postgres_dsn, names[0])  # lost again, and another runner takes it meanwhile
        await lost(holding)
        async with second.lease(session) as other:
            assert other.epoch > holding.epoch
            with pytest.raises(LeaseError) as refused:
                await first.append(key(session), [entry("a3")])
            assert refused.value.taken_over and names[1] in str(refused.value.holder)
            with pytest.raises(LeaseError) as back:
                await holding.reacquire()
            assert back.value.taken_over
            await second.append(key(session), [entry("b1")])
    assert [e["uuid"] for e in await second.load(key(session))] == ["a1", "a2", "b1"]
    for store in (first, second):
        await store.aclose()
