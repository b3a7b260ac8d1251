"""The deliverer rule by rule: its policy's refusals by name, its loop delivering rows as they come and
backing off while the outbox fails (without ever raising), and a drain that cannot count what is left."""

from __future__ import annotations

import logging
import math
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from flower import DeliveryPolicy, SpecError, SqliteSessionStore
from flower.stores.outbox import MEMORY, Deliverer, Outbox
from flower.stores.outbox.reconcile import mirrored, missing
from flower.testing import hang_guard

KEY: Any = {"project_key": "-repo", "session_id": "0c7c2a4e-0000-4000-8000-00000000b0b0"}
FAST = DeliveryPolicy(backoff=0.001, max_backoff=0.002, drain_timeout=hang_guard())


@pytest.mark.parametrize("bad", [True, "1", math.nan, 0, -1.5])
@pytest.mark.parametrize("name", ["backoff", "max_backoff", "attempt_timeout", "drain_timeout", "warn_after"])
def test_each_duration_must_be_a_positive_number_of_seconds(name: str, bad: object) -> None:
    with pytest.raises(
        SpecError, match=rf"^DeliveryPolicy: {name} must be a positive number of seconds, got "
    ):
        DeliveryPolicy(**{name: bad})  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["", 5])
def test_an_outbox_must_be_a_path_or_none(bad: object) -> None:
    with pytest.raises(
        SpecError, match=rf"^DeliveryPolicy: outbox must be a file path or None, got {bad!r}$"
    ):
        DeliveryPolicy(outbox=bad)  # type: ignore[arg-type]
    assert DeliveryPolicy(outbox="o.db").outbox == "o.db" and DeliveryPolicy().outbox is None


def broken(tmp_path: Path) -> Outbox:
    """An outbox that cannot be read: its path is a directory."""
    (tmp_path / "not-a-file").mkdir()
    return Outbox(tmp_path / "not-a-file")


async def _until(done: Any) -> None:
    with anyio.fail_after(hang_guard()):  # a hang guard, not a speed limit
        while not await done():
            await anyio.sleep(0.001)


async def test_the_loop_delivers_rows_as_they_come_and_backs_off_while_the_outbox_fails(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    outbox = Outbox(tmp_path / "outbox.db")
    outbox.open()
    store = SqliteSessionStore(tmp_path / "sessions.db")
    deliverer = Deliverer(outbox, store, "t", FAST)

    async def loaded(n: int) -> bool:
        return len(await store.load(KEY) or []) == n

    with caplog.at_level(logging.WARNING, logger="flower.stores"):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(deliverer.run)
            for n, uuid in enumerate("ab", 1):  # each row is sent when it comes, the loop goes on
                outbox.put("t", KEY, [{"uuid": uuid}])
                deliverer.wake()
                await _until(lambda n=n: loaded(n))
            deliverer.outbox = broken(tmp_path)  # then the outbox fails: the loop tells, and retries
            deliverer.wake()

            async def told() -> bool:
                return bool(caplog.records)

            await _until(told)
            await anyio.sleep(0.05)  # many backoffs of 1-2 ms: none may raise
            tasks.cancel_scope.cancel()
    assert deliverer.delivered == 2 and deliverer.failure is not None
    (record,) = caplog.records  # told once for the whole outage
    assert record.getMessage().startswith("flower.stores: session store ")
    assert record.getMessage().endswith(
        f"is a directory, not a database file; the entries wait in {tmp_path}/not-a-file"
    )
    outbox.close()
    await store.aclose()


async def test_a_drain_that_cannot_count_what_is_left_says_minus_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SqliteSessionStore(tmp_path / "sessions.db")
    policy = DeliveryPolicy(backoff=0.001, max_backoff=0.002, drain_timeout=0.05)
    deliverer = Deliverer(broken(tmp_path), store, "t", policy)
    with caplog.at_level(logging.WARNING, logger="flower.stores"), anyio.fail_after(hang_guard()):
        assert await deliverer.drain() == -1  # the policy's drain_timeout bounds it
    assert deliverer.failure is not None and "is a directory" in str(deliverer.failure)
    (record,) = caplog.records
    assert record.getMessage().startswith("flower.stores: session store ")
    await store.aclose()


A: Any = {"project_key": "p", "session_id": "A"}
B: Any = {"project_key": "p", "session_id": "B", "subpath": "subagents/agent-1"}


def filled(tmp_path: Path) -> Outbox:
    box = Outbox(tmp_path / "outbox.db")
    box.open()
    box.put("t", A, [{"uuid": "a1"}, {"uuid": "a2"}])
    box.put("t", B, [{"uuid": "b1"}])
    box.put("t", {**A, "session_id": "C"}, [{"uuid": "c1"}])
    return box


def test_rows_of_several_sessions_are_counted_read_and_moved_together(tmp_path: Path) -> None:
    box = filled(tmp_path)
    assert box.count("t", {"A", "B"}) == 3 and box.count("t", set()) == 0 and box.count("t") == 4
    assert [r.dedupe for r in box.head("t", {"B", "C"})] == ["b1"]  # the oldest key's rows only
    assert box.rekey("t", "u", {"A", "B"}) == 3
    assert (box.count("u"), box.count("t")) == (3, 1)
    box.close()


def test_a_subagents_rows_keep_their_subpath_when_read_and_moved(tmp_path: Path) -> None:
    box = filled(tmp_path)
    (row,) = box.rows("t", "B")
    assert row.key == B and row.id == box.head("t", {"B"})[0].id
    memory = Outbox(MEMORY)
    memory.open()
    memory.put_rows("t", box.take("t", ["B"]))
    assert [(r.key, r.dedupe) for r in memory.rows("t", "B")] == [(B, "b1")] and box.count("t", {"B"}) == 0
    box.close()
    memory.close()


def test_rows_taken_from_an_outbox_that_cannot_forget_them_are_taken_and_stay(tmp_path: Path) -> None:
    box = filled(tmp_path)
    for name in list(tmp_path.iterdir()):
        name.unlink()  # deleted while in use: the delete is refused
    assert [r.dedupe for r in box.take("t", ["A"])] == ["a1", "a2"]
    box.close()


def test_a_sessions_record_holds_when_it_started(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "outbox.db")
    box.open()
    before = time.time()
    box.begin("t", "A", epoch=1, config_dir="/cfg", resumed=False)
    (record,) = box.records("t")
    assert before <= record.started <= time.time()
    box.close()


def test_what_a_store_lacks_after_its_last_known_entry_is_matched_from_just_after_it() -> None:
    x, y, w = {"type": "x"}, {"type": "y"}, {"type": "w"}
    a, b = {"uuid": "a"}, {"uuid": "b"}
    assert missing([a, x, b, y, w], [a, x, b, y]) == [w]  # y is the one stored after b, not x before it
    assert missing([a, y, w], [x, a, y]) == [w]  # the first local entry is the last one known
    assert missing([x, w], [x]) == [w]  # none known: matched from the store's first entry
    odd1, odd2 = {"uuid": 5, "n": 1}, {"uuid": 5, "n": 2}  # a uuid that is not a string: by content
    assert missing([odd1, odd2], [odd1]) == [odd2]


def test_mirrored_lines_stop_at_a_line_that_is_not_an_entry(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"uuid": "a"}\n5\n{"uuid": "b"}\n')
    assert mirrored(path) == [{"uuid": "a"}]
