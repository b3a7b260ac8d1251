"""A PostgreSQL store behind a network that fails, for real: a local TCP proxy (`proxy.Proxy`) that is
stopped, or that holds every packet for a while (a partition: nothing fails, everything waits).

- Entries left waiting in the outbox belong to the database, not to the DSN's text: another address for
  the same database delivers them; a run on another store reports them, and leaves them.
- A partition is told (`StoreWarning`) once an append has waited `DeliveryPolicy.warn_after`, then told
  resolved, and loses nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import pytest

from flower import DeliveryPolicy, PostgresSessionStore, Runtime, worker
from flower._cli import main
from flower._run.outbox_delivery import outbox_state
from flower.events import Event, StoreWarning, ToolResult
from flower.testing import ScriptedModel, bash, hang_guard
from tests.durability.harness import loss
from tests.durability.proxy import Proxy

pytestmark = pytest.mark.cli

STEPS = worker("runs steps", "You run the steps.", tools=["Bash"])


def proxy_for(dsn: str) -> Proxy:
    port = urlsplit(dsn).port
    assert port is not None and "127.0.0.1" in dsn, dsn
    return Proxy(port)


async def run(
    model: ScriptedModel,
    workspace: Path,
    store: PostgresSessionStore,
    prompt: str,
    *,
    resume: str | None = None,
    on_event: Callable[[Event], None] | None = None,
    **policy: float,
) -> tuple[object, list[StoreWarning]]:
    workspace.mkdir(parents=True, exist_ok=True)
    events: list[Event] = []

    def seen(event: Event) -> None:
        events.append(event)
        if on_event is not None:
            on_event(event)

    policy.setdefault("drain_timeout", hang_guard())  # a busy machine is not an outage
    rt = Runtime(workspace, store=store, configure=model.attach, delivery=DeliveryPolicy(**policy))
    try:
        result = await rt.run(STEPS, prompt, resume=resume, on_event=seen)
    finally:
        await rt.store.aclose()
        await store.aclose()
    return result, [e for e in events if isinstance(e, StoreWarning)]


async def test_what_waits_for_a_database_is_delivered_through_another_dsn_and_kept_from_another_store(
    scripted_model: ScriptedModel,
    tmp_path: Path,
    postgres_dsn: str,
    pg_schema: Callable[[], str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    schema, workspace = pg_schema(), tmp_path / "repo"
    proxy = proxy_for(postgres_dsn)
    cut = threading.Event()

    def on_event(event: Event) -> None:
        if isinstance(event, ToolResult) and event.text.startswith("one") and not cut.is_set():
            cut.set()
            proxy.stop()  # the database stays up; this address to it is gone for good

    scripted_model.script("main", [bash("echo one"), bash("echo two; sleep 1"), bash("echo three"), "done"])
    through = PostgresSessionStore(proxy.dsn(postgres_dsn), schema=schema, connect_timeout=2, pool_wait=0)
    first, _ = await run(
        scripted_model, workspace, through, "Run the steps.", on_event=on_event, drain_timeout=1
    )
    assert cut.is_set() and not first.ok and "were not stored" in str(first.error), first  # type: ignore[attr-defined]
    session = first.session_id  # type: ignore[attr-defined]

    # a run on another store (another schema) in the same workspace: the rows are reported, and stay
    scripted_model.script("main", ["hello"])
    other, warned = await run(
        scripted_model, workspace, PostgresSessionStore(postgres_dsn, schema=pg_schema()), "Hi."
    )
    assert other.ok, other  # type: ignore[attr-defined]
    assert any(f"(schema {schema})" in w.message and "another session store" in w.message for w in warned), (
        warned
    )
    assert (
        await anyio.to_thread.run_sync(main, ["doctor", "--no-self-check", "--workspace", str(workspace)])
        == 0
    )
    assert f"(schema {schema}) [postgresql:" in capsys.readouterr().out, "flower doctor lists them"
    state = outbox_state(workspace)
    assert state is not None and [
        (s.label.endswith(f"(schema {schema})"), s.pending > 0) for s in state.stores
    ] == [(True, True)], state

    # the same database through its own address: what waits is delivered first, and the resume sees it all
    scripted_model.script("main", ["resumed"])
    again, warned = await run(
        scripted_model, workspace, PostgresSessionStore(postgres_dsn, schema=schema), "Go on.", resume=session
    )
    assert again.ok, again  # type: ignore[attr-defined]
    assert not any("another session store" in w.message for w in warned), warned
    seen = [view.text.split("\n")[0] for view in scripted_model.request("main", -1).tool_results]
    assert seen == ["one", "two", "three"], seen
    lost = await anyio.to_thread.run_sync(loss, postgres_dsn, schema, scripted_model.config_dir, session)
    assert lost.written > 10 and lost.missing == 0, lost
    assert outbox_state(workspace).stores == (), "nothing left"  # type: ignore[union-attr]


async def test_a_partition_is_told_while_it_lasts_then_told_resolved_and_loses_nothing(
    scripted_model: ScriptedModel, tmp_path: Path, postgres_dsn: str, pg_schema: Callable[[], str]
) -> None:
    schema = pg_schema()
    proxy = proxy_for(postgres_dsn)
    cut, healed = threading.Event(), threading.Event()

    def on_event(event: Event) -> None:
        if isinstance(event, ToolResult) and event.text.startswith("one") and not cut.is_set():
            cut.set()
            proxy.pause()  # every packet held: the appends wait, nothing fails
        elif isinstance(event, StoreWarning) and not event.resolved and cut.is_set() and not healed.is_set():
            healed.set()  # the run said it waits: the partition heals (in order, whatever the timing)
            proxy.resume()

    scripted_model.script("main", [bash("echo one"), bash("echo two"), "done"])
    store = PostgresSessionStore(proxy.dsn(postgres_dsn), schema=schema, connect_timeout=hang_guard())
    result, warned = await run(scripted_model, tmp_path / "repo", store, "Run the steps.", on_event=on_event)
    proxy.stop()
    assert healed.is_set() and result.ok, result  # type: ignore[attr-defined]
    waited = [i for i, w in enumerate(warned) if not w.resolved and "DeliveryPolicy.warn_after" in w.message]
    back = [i for i, w in enumerate(warned) if w.resolved]
    assert waited and back and waited[0] < back[-1], warned
    lost = await anyio.to_thread.run_sync(
        loss,
        postgres_dsn,
        schema,
        scripted_model.config_dir,
        result.session_id,  # type: ignore[attr-defined]
    )
    assert lost.written > 5 and lost.missing == 0, lost
