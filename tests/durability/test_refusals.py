"""A PostgreSQL server that refuses part of what a run sends: the workbench's files (the transcript is
stored all the same), or every write (a read-only database: the run fails naming the store).

The CLI is real, on the scripted model; the server is the suite's, refusing through its own means (a
trigger, `default_transaction_read_only`), never a fake.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import anyio
import asyncpg
import pytest

from flower import DeliveryPolicy, FailureReason, PostgresSessionStore, Runtime, StoreError, worker
from flower.events import Event, StoreWarning
from flower.testing import ScriptedModel, bash
from tests.durability.harness import loss

pytestmark = pytest.mark.cli

STEPS = worker("runs steps", "You run the steps.", tools=["Bash"])


async def execute(dsn: str, *statements: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        for statement in statements:
            await conn.execute(statement)
    finally:
        await conn.close()


async def test_files_the_server_refuses_never_cost_the_transcript(
    scripted_model: ScriptedModel,
    tmp_path: Path,
    postgres_dsn: str,
    pg_schema: object,
    caplog: pytest.LogCaptureFixture,
) -> None:
    schema = pg_schema()  # type: ignore[operator]
    store = PostgresSessionStore(postgres_dsn, schema=schema, runner="machine-a")
    await store.list_sessions("-made")  # the schema exists; then its file tables refuse every row
    await execute(
        postgres_dsn,
        f"CREATE FUNCTION {schema}.refuse() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN RAISE EXCEPTION 'no room for files'; END $$",
        f"CREATE TRIGGER refuse BEFORE INSERT OR UPDATE ON {schema}.blobs "
        f"FOR EACH ROW EXECUTE FUNCTION {schema}.refuse()",
        f"CREATE TRIGGER refuse BEFORE INSERT OR UPDATE ON {schema}.files "
        f"FOR EACH ROW EXECUTE FUNCTION {schema}.refuse()",
    )
    workspace = tmp_path / "a" / "repo"
    (workspace / ".flower" / "scripts").mkdir(parents=True)
    (workspace / ".flower" / "scripts" / "check.sh").write_text("echo checked\n")
    scripted_model.script("main", [bash("echo one"), bash("echo two"), "done", "resumed"])
    events: list[Event] = []
    rt = Runtime(workspace, store=store, configure=scripted_model.attach)
    result = await rt.run(STEPS, "Run the steps.", on_event=events.append)

    assert result.ok, result.error
    assert not [e for e in events if isinstance(e, StoreWarning)], "the transcript never waited"
    assert "not sent yet" in caplog.text and "no room for files" in caplog.text
    lost = await anyio.to_thread.run_sync(
        loss, postgres_dsn, schema, scripted_model.config_dir, str(result.session_id)
    )
    assert lost.written > 5 and lost.missing == 0, lost

    other = PostgresSessionStore(postgres_dsn, schema=schema, runner="machine-b")
    (tmp_path / "b" / "repo").mkdir(parents=True)
    again = await Runtime(
        tmp_path / "b" / "repo",
        store=other,
        configure=scripted_model.attach,
        env={"CLAUDE_CONFIG_DIR": str(tmp_path / "config-b")},
    ).run(STEPS, "Go on.", resume=result.session_id)
    assert again.ok, again.error
    seen = [view.text.split("\n")[0] for view in scripted_model.request("main", -1).tool_results]
    assert seen == ["one", "two"]
    assert not (tmp_path / "b" / "repo" / ".flower" / "scripts" / "check.sh").exists(), "never stored"
    for opened in (store, other):
        await opened.aclose()


async def test_a_read_only_postgres_store_fails_the_run_naming_it(
    scripted_model: ScriptedModel, tmp_path: Path, postgres_dsn: str
) -> None:
    name = f"ro_{uuid.uuid4().hex[:12]}"
    dsn = urlunsplit(urlsplit(postgres_dsn)._replace(path=f"/{name}"))
    await execute(postgres_dsn, f"CREATE DATABASE {name}")
    workspace = tmp_path / "repo"
    workspace.mkdir()
    scripted_model.script("main", [bash("echo one"), "done", "again", "never"])
    quick = DeliveryPolicy(drain_timeout=0.5)
    try:
        writable = PostgresSessionStore(dsn, schema="flower", runner="machine-a")
        first = await Runtime(workspace, store=writable, configure=scripted_model.attach).run(STEPS, "Start.")
        assert first.ok, first.error
        await writable.aclose()
        await execute(postgres_dsn, f"ALTER DATABASE {name} SET default_transaction_read_only = on")

        frozen = PostgresSessionStore(dsn, schema="flower", runner="machine-a")
        rt = Runtime(workspace, store=frozen, configure=scripted_model.attach, delivery=quick)
        started = await rt.run(STEPS, "A new session.")
        assert not started.ok and isinstance(started.cause, StoreError), started.error
        assert started.reason is FailureReason.STORE
        assert frozen.label in str(started.error) and "read-only" in str(started.error), started.error
        assert "transcript entries of session" in str(started.error)

        resumed = await rt.run(STEPS, "Go on.", resume=first.session_id)
        assert not resumed.ok and isinstance(resumed.cause, StoreError), resumed.error
        assert resumed.session_id == first.session_id
        assert frozen.label in str(resumed.error) and "read-only" in str(resumed.error), resumed.error
        scripted_model.strict = False  # the resume never reached the model
        await frozen.aclose()
    finally:
        await execute(postgres_dsn, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
