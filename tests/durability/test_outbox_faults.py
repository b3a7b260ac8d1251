"""The outbox's own file failing mid-run, for real: the file system under it full (a small tmpfs filled up),
or the file deleted. The run's entries go straight to the store with a `StoreWarning`, and the store ends
with every line the CLI wrote; when the store cannot take them either, the run fails with the count.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from flower import DeliveryPolicy, FailureReason, Runtime, StepResult, worker
from flower.events import Event, SessionStarted, StoreWarning
from flower.testing import ScriptedModel, bash, hang_guard
from tests.durability.harness import fill, loss, mount_tmpfs, unmount

pytestmark = pytest.mark.cli

STEPS = worker("runs steps", "You run the steps.", tools=["Bash"])
SCRIPT = [bash("echo one"), bash("echo two"), bash("echo three"), "all done"]


@contextmanager
def small_disk(path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs at `path`, unmounted at the end (root only: skipped, saying why, elsewhere)."""
    why = mount_tmpfs(path)
    if why is not None:
        pytest.skip(why)
    try:
        yield path
    finally:
        unmount(path)


async def run_with(
    model: ScriptedModel,
    workspace: Path,
    store: str,
    outbox: Path,
    fault: Callable[[], None],
    drain: float | None = None,
) -> tuple[StepResult, list[StoreWarning]]:
    events: list[Event] = []

    def on_event(event: Event) -> None:
        events.append(event)
        if isinstance(event, SessionStarted):  # the outbox is open and holds the session's record
            fault()

    model.script("main", SCRIPT)
    workspace.mkdir(parents=True, exist_ok=True)
    # a store that takes the entries is waited for as long as the hang guard: a busy machine is no outage
    policy = DeliveryPolicy(outbox=str(outbox), drain_timeout=drain or hang_guard())
    rt = Runtime(workspace, store=store, configure=model.attach, delivery=policy)
    try:
        result = await rt.run(STEPS, "Run the steps.", on_event=on_event)
    finally:
        await rt.store.aclose()
    return result, [e for e in events if isinstance(e, StoreWarning)]


async def test_a_full_disk_under_the_outbox_loses_nothing_and_warns(
    scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    store = str(tmp_path / "sessions.db")
    with small_disk(tmp_path / "small") as disk:
        result, warnings = await run_with(
            scripted_model, tmp_path / "repo", store, disk / "outbox.db", lambda: fill(disk)
        )
    assert result.ok, result.error
    assert any(
        "outbox" in w.message and "disk is full" in w.message and "straight to the store" in w.message
        for w in warnings
    ), warnings
    lost = await anyio.to_thread.run_sync(loss, store, "-", scripted_model.config_dir, str(result.session_id))
    assert lost.written > 10 and lost.missing == 0, lost


async def test_an_outbox_deleted_mid_run_loses_nothing_and_warns(
    scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    store, outbox = str(tmp_path / "sessions.db"), tmp_path / "box" / "outbox.db"

    def delete() -> None:
        for name in os.listdir(outbox.parent):
            os.unlink(outbox.parent / name)

    result, warnings = await run_with(scripted_model, tmp_path / "repo", store, outbox, delete)
    assert result.ok, result.error
    assert any("deleted or replaced" in w.message for w in warnings), warnings
    lost = await anyio.to_thread.run_sync(loss, store, "-", scripted_model.config_dir, str(result.session_id))
    assert lost.written > 10 and lost.missing == 0, lost


async def test_when_neither_the_outbox_nor_the_store_can_take_the_entries_the_run_fails_with_the_count(
    scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    with small_disk(tmp_path / "small") as disk:  # the store and the outbox on one disk, filled mid-run
        store = str(disk / "sessions.db")
        result, warnings = await run_with(
            scripted_model, tmp_path / "repo", store, disk / "outbox.db", lambda: fill(disk), drain=2
        )
    assert not result.ok and result.cause is not None and result.reason is FailureReason.STORE
    assert "transcript entries of session" in str(result.error) and "were not stored" in str(result.error)
    assert "kept nowhere" in str(result.error), result.error
    assert any("straight to the store" in w.message for w in warnings), warnings
