"""Every store failure of a run is `StepResult(ok=False)` with the cause, never an exception; and what the
messages say: the store named, its password never, the timeout that expired with its value."""

from __future__ import annotations

import logging
import socket
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import asyncpg
import pytest

from flower import DeliveryPolicy, FailureReason, PostgresSessionStore, Runtime, StoreError, worker
from flower._cli import main
from flower._util.secrets import redact
from flower.events import Event, SessionStarted, StoreWarning
from flower.stores._outbox import Deliverer, Outbox
from flower.testing import ScriptedModel, bash, hang_guard

STEPS = worker("runs steps", "You run the steps.", tools=["Bash"])


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """(a writable directory, the same directory mounted read-only): a read-only bind mount."""
    source, view = tmp_path / "source", tmp_path / "read-only"
    source.mkdir()
    view.mkdir()
    try:
        subprocess.run(["mount", "--bind", str(source), str(view)], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"a read-only bind mount cannot be made here (needs root and mount): {exc}")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(view)], check=True, capture_output=True)
        yield source, view
    finally:
        subprocess.run(["umount", str(view)], check=False, capture_output=True)


@pytest.mark.cli
async def test_a_read_only_sqlite_store_fails_the_run_naming_it_at_start_and_at_resume(
    scripted_model: ScriptedModel, tmp_path: Path, read_only: tuple[Path, Path]
) -> None:
    source, view = read_only
    workspace = tmp_path / "repo"
    workspace.mkdir()
    scripted_model.script("main", [bash("echo one"), "done", "first", "second"])
    events: list[Event] = []
    quick = DeliveryPolicy(drain_timeout=0.5)
    rt = Runtime(workspace, store=view / "sessions.db", configure=scripted_model.attach, delivery=quick)
    result = await rt.run(STEPS, "Go.", on_event=events.append)
    assert not result.ok and isinstance(result.cause, StoreError) and result.reason is FailureReason.STORE
    assert str(view / "sessions.db") in str(result.error) and "read-only" in str(result.error), result.error
    assert "outbox" in str(result.error)
    assert any(isinstance(e, SessionStarted) for e in events)
    assert any(isinstance(e, StoreWarning) and not e.resolved for e in events)

    # a store with the session in it, then read-only: the resume fails at once, naming it
    writable = Runtime(workspace, store=source / "sessions.db", configure=scripted_model.attach)
    first = await writable.run(STEPS, "Start.")
    assert first.ok, first.error
    frozen = Runtime(workspace, store=view / "sessions.db", configure=scripted_model.attach, delivery=quick)
    again = await frozen.run(STEPS, "Go on.", resume=first.session_id)
    assert not again.ok and isinstance(again.cause, StoreError) and again.session_id == first.session_id
    assert again.reason is FailureReason.STORE
    assert str(view / "sessions.db") in str(again.error) and "Read-only" in str(again.error), again.error
    scripted_model.strict = False  # the resume never reached the model


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.cli
async def test_a_postgres_store_down_fails_the_run_without_raising(
    scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    dsn = f"postgresql://flower:s3cret@127.0.0.1:{closed_port()}/runs"
    workspace = tmp_path / "repo"
    workspace.mkdir()
    scripted_model.script("main", ["done"])
    quick = DeliveryPolicy(drain_timeout=0.3)
    rt = Runtime(workspace, store=dsn, configure=scripted_model.attach, delivery=quick)
    started = await rt.run(STEPS, "Go.")
    assert not started.ok and isinstance(started.cause, StoreError), started.error
    assert started.reason is FailureReason.STORE
    assert "flower:***@127.0.0.1" in str(started.error) and "s3cret" not in str(started.error)
    resumed = await rt.run(STEPS, "Go on.", resume="6f1c1a4e-0000-4000-8000-00000000d0e5")
    assert not resumed.ok and isinstance(resumed.cause, StoreError) and "s3cret" not in str(resumed.error)
    assert resumed.reason is FailureReason.STORE
    stream = rt.stream(STEPS, "Go on.", resume="6f1c1a4e-0000-4000-8000-00000000d0e5")
    events = [event async for event in stream]  # the iteration raises nothing either
    assert stream.result is not None and not stream.result.ok and isinstance(stream.result.cause, StoreError)
    assert stream.session_id == "6f1c1a4e-0000-4000-8000-00000000d0e5" and not events
    await rt.store.aclose()


def test_passwords_are_hidden_in_every_form() -> None:
    assert redact("postgresql://u:pw@h:5/db") == "postgresql://u:***@h:5/db"
    assert redact("postgresql://u@h/db?sslmode=require&password=s3cret") == (
        "postgresql://u@h/db?sslmode=require&password=***"
    )
    assert redact("host=h user=u password=s3cret dbname=x") == "host=h user=u password=*** dbname=x"
    assert redact("host=h password='a b' port=5") == "host=h password=*** port=5"
    assert redact("postgresql://u@h/db") == "postgresql://u@h/db"


async def test_a_query_string_password_is_never_printed(capsys: pytest.CaptureFixture[str]) -> None:
    dsn = f"postgresql://flower@127.0.0.1:{closed_port()}/runs?password=s3cret"
    store = PostgresSessionStore(dsn, schema="x")
    assert "s3cret" not in repr(store) and "s3cret" not in store.label
    with pytest.raises(StoreError) as failed:
        await store.load({"project_key": "p", "session_id": "s"})
    assert "s3cret" not in str(failed.value) and "password=***" in str(failed.value)
    with pytest.raises(StoreError) as leasing:
        async with store.lease("6f1c1a4e-0000-4000-8000-00000000d0e6"):
            pass
    assert "s3cret" not in str(leasing.value)
    await store.aclose()
    assert await anyio.to_thread.run_sync(main, ["report", dsn]) == 1
    assert await anyio.to_thread.run_sync(main, ["report", "host=db user=u password=s3cret"]) == 1
    printed = capsys.readouterr()
    assert "s3cret" not in printed.out + printed.err and "password=***" in printed.err


def test_a_malformed_dsn_is_a_store_error_naming_the_problem() -> None:
    with pytest.raises(StoreError, match=r"malformed PostgreSQL DSN postgresql://u:\*\*\*@h:port/db: .*port"):
        PostgresSessionStore("postgresql://u:pw@h:port/db")
    with pytest.raises(StoreError, match=r"malformed PostgreSQL DSN .*names no host"):
        PostgresSessionStore("postgresql:///db")


async def test_a_timeout_names_the_setting_and_its_value() -> None:
    with socket.socket() as silent:  # accepts the connection, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        store = PostgresSessionStore(
            f"postgresql://flower@127.0.0.1:{port}/runs", connect_timeout=0.3, pool_wait=0
        )
        with pytest.raises(StoreError, match=r"within connect_timeout \(0.3 s\)"):
            await store.load({"project_key": "p", "session_id": "s"})
        with pytest.raises(StoreError, match=r"within connect_timeout \(0.3 s\)"):
            async with store.lease("6f1c1a4e-0000-4000-8000-00000000d0e7"):
                pass
        await store.aclose()


async def test_a_full_pool_names_its_size_and_the_timeout(
    postgres_dsn: str, pg_schema: Callable[[], str]
) -> None:
    schema = pg_schema()
    key: Any = {"project_key": "-repo", "session_id": "6f1c1a4e-0000-4000-8000-00000000d0e8"}
    store = PostgresSessionStore(postgres_dsn, schema=schema, pool_size=1, connect_timeout=0.3, pool_wait=0)
    await store.append(key, [{"type": "user", "uuid": "a"}])
    locker = await asyncpg.connect(postgres_dsn)
    try:
        locked = locker.transaction()
        await locked.start()
        await locker.execute(f"LOCK TABLE {schema}.entries IN ACCESS EXCLUSIVE MODE")
        async with anyio.create_task_group() as group:
            group.start_soon(store.append, key, [{"type": "user", "uuid": "b"}])
            with anyio.fail_after(
                hang_guard()
            ):  # the append holds the pool's one connection, waiting on the lock
                # blocked by this lock (its query text may still read BEGIN while it waits in Parse)
                while not await locker.fetchval(
                    "SELECT count(*) FROM pg_stat_activity "
                    "WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid))"
                ):
                    await anyio.sleep(0.05)
            with pytest.raises(StoreError, match=r"pool_size=1 pool\) within connect_timeout \(0.3 s\)"):
                await store.load(key)
            await locked.rollback()  # the lock goes: the append lands
    finally:
        await locker.close()
    assert [e["uuid"] for e in await store.load(key) or []] == ["a", "b"]
    await store.aclose()


async def test_a_store_used_directly_waits_out_a_busy_pool(
    postgres_dsn: str, pg_schema: Callable[[], str], caplog: pytest.LogCaptureFixture
) -> None:
    """A bulk import through a pool whose connections are all busy for a moment: each call waits for one
    again (backoff, up to `pool_wait`) instead of failing at the first `connect_timeout`."""
    schema = pg_schema()
    key: Any = {"project_key": "-repo", "session_id": "6f1c1a4e-0000-4000-8000-00000000d0ea"}
    store = PostgresSessionStore(postgres_dsn, schema=schema, pool_size=1, connect_timeout=0.3, pool_wait=600)
    await store.append(key, [{"type": "user", "uuid": "a"}])
    locker = await asyncpg.connect(postgres_dsn)
    caplog.set_level(logging.INFO, logger="flower.stores")
    try:
        locked = locker.transaction()
        await locked.start()
        await locker.execute(f"LOCK TABLE {schema}.entries IN ACCESS EXCLUSIVE MODE")
        async with anyio.create_task_group() as group:
            group.start_soon(store.append, key, [{"type": "user", "uuid": "b"}])  # holds the one connection
            group.start_soon(store.append, key, [{"type": "user", "uuid": "c"}])  # waits for it
            with anyio.fail_after(120):
                while "waits for a connection of the pool" not in caplog.text:
                    await anyio.sleep(0.05)  # at least one connect_timeout went by for the second
            await locked.rollback()  # the moment passes: both land
    finally:
        await locker.close()
    assert sorted(e["uuid"] for e in await store.load(key) or []) == ["a", "b", "c"]
    await store.aclose()


async def test_an_append_that_hangs_names_the_attempt_timeout(tmp_path: Path) -> None:
    with socket.socket() as silent:  # accepts the connection, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        store = PostgresSessionStore(f"postgresql://flower@127.0.0.1:{silent.getsockname()[1]}/runs")
        outbox = Outbox(tmp_path / "outbox.db")
        outbox.open()
        key: Any = {"project_key": "-repo", "session_id": "6f1c1a4e-0000-4000-8000-00000000d0e9"}
        outbox.put(store.label, key, [{"type": "user", "uuid": "a"}])
        deliverer = Deliverer(outbox, store, store.label, DeliveryPolicy(attempt_timeout=0.3))
        assert not await deliverer.send()
        assert "DeliveryPolicy.attempt_timeout (0.3 s)" in str(deliverer.failure), deliverer.failure
        assert outbox.count(store.label) == 1, "the entry waits for the next attempt"
        outbox.close()
        await store.aclose()
