"""The deliverer rule by rule: its policy's refusals by name, its loop delivering rows as they come and
backing off while the outbox fails (without ever raising), and a drain that cannot count what is left."""

from __future__ import annotations

import json
import logging
import math
import sqlite3
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from flower import DeliveryPolicy, LeaseError, SpecError, SqliteSessionStore, StoreError
from flower.stores._outbox import MEMORY, Deliverer, Outbox
from flower.stores._outbox.reconcile import mirrored, missing
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
    target = str(await store.identity())
    deliverer = Deliverer(outbox, store, target, FAST)

    async def loaded(n: int) -> bool:
        return len(await store.load(KEY) or []) == n

    with caplog.at_level(logging.WARNING, logger="flower.stores"):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(deliverer.run)
            for n, uuid in enumerate("ab", 1):  # each row is sent when it comes, the loop goes on
                outbox.put(target, KEY, [{"uuid": uuid}])
                deliverer.wake()
                await _until(lambda n=n: loaded(n))
            deliverer.outbox = broken(tmp_path)  # then the outbox fails: the loop tells, and retries
            deliverer.wake()

            async def told() -> bool:
                return bool(caplog.records)

            await _until(told)
            await anyio.sleep(0.05)  # many backoffs of 1-2 ms: none may raise
            failure = deliverer.failure
            deliverer.outbox = outbox  # the outbox is back: the loop goes on where it was
            outbox.put(target, KEY, [{"uuid": "c"}])
            deliverer.wake()

            async def counted() -> bool:  # stored first, counted after: wait for both before cancelling
                return await loaded(3) and deliverer.delivered == 3

            await _until(counted)
            tasks.cancel_scope.cancel()
    assert deliverer.delivered == 3 and failure is not None and deliverer.failure is None
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


class Refusing:
    """A store that refuses every append in one way: a lease taken over, a hang, or a plain bug."""

    def __init__(self, how: str) -> None:
        self.how = how

    async def append_keyed(self, key: Any, rows: Any) -> None:
        if self.how == "lease":
            raise LeaseError("taken over", session_id=key["session_id"], holder="runner-b")
        if self.how == "hang":
            await anyio.sleep(hang_guard())
        raise ValueError("a bug in the store")


async def test_an_append_refused_by_a_lease_is_handed_to_on_refused(tmp_path: Path) -> None:
    box = filled(tmp_path)
    refused: list[tuple[str, str]] = []

    async def on_refused(session_id: str, exc: Exception) -> None:
        refused.append((session_id, str(exc)))

    deliverer = Deliverer(box, Refusing("lease"), "t", FAST, on_refused=on_refused)
    assert await deliverer.send() is False
    assert refused == [("A", "taken over")] and isinstance(deliverer.failure, LeaseError)
    box.close()


async def test_an_append_that_takes_too_long_or_breaks_is_a_store_failure_by_name(tmp_path: Path) -> None:
    box = filled(tmp_path)
    slow = DeliveryPolicy(attempt_timeout=0.01, warn_after=hang_guard())
    hung = Deliverer(box, Refusing("hang"), "t", slow, label="the store")
    with anyio.fail_after(hang_guard()):
        assert await hung.send() is False
    assert (
        str(hung.failure) == "an append to the store took longer than DeliveryPolicy.attempt_timeout (0.01 s)"
    )
    broken = Deliverer(box, Refusing("bug"), "t", FAST)
    assert await broken.send() is False
    assert isinstance(broken.failure, StoreError) and str(broken.failure) == "ValueError: a bug in the store"
    assert box.count("t") == 4  # every row stays for the next attempt
    box.close()


def test_a_batch_holds_rows_up_to_one_mib(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "outbox.db")
    box.open()

    def row(uuid: str, size: int) -> dict[str, Any]:
        bare = len(json.dumps({"uuid": uuid, "pad": ""}, separators=(",", ":")))
        return {"uuid": uuid, "pad": "x" * (size - bare)}

    half = 1 << 19
    box.put("t", A, [row("a", half), row("b", half), row("c", 1)])  # a and b: exactly 1 MiB
    assert [r.dedupe for r in box.head("t")] == ["a", "b"]
    box.ack([r.id for r in box.head("t")])
    third = (1 << 20) // 3
    box.put("t", A, [row("d", third), row("e", third), row("f", third + 2)])  # with c: over 1 MiB by f
    assert [r.dedupe for r in box.head("t")] == ["c", "d", "e"]
    box.close()


def test_an_outbox_keeps_its_own_id_and_names_a_file_it_cannot_read(tmp_path: Path) -> None:
    first, second = Outbox(tmp_path / "one.db"), Outbox(tmp_path / "two.db")
    first.open()
    second.open()
    assert first.id != second.id
    again = Outbox(tmp_path / "one.db")
    again.open()
    assert again.id == first.id
    for box in (first, second, again):
        box.close()
    refused(tmp_path / "other.db", "CREATE TABLE t (x)", r"other\.db is a database of another application$")
    newer = tmp_path / "newer.db"
    box = Outbox(newer)
    box.open()
    box.close()
    refused(newer, "PRAGMA user_version = 99", r"newer\.db is an outbox of layout 99; this flower reads \d+$")


def refused(path: Path, statement: str, message: str) -> None:
    """`path`, changed by `statement`, is refused when opened as an outbox, named in the error."""
    with sqlite3.connect(path) as conn:
        conn.execute(statement)
    with pytest.raises(StoreError, match=message) as found:
        Outbox(path).open()
    assert found.value.path == str(path)


def test_a_deleted_outbox_is_named_in_its_refusal(tmp_path: Path) -> None:
    box = filled(tmp_path)
    (tmp_path / "outbox.db").unlink()
    with pytest.raises(StoreError, match="deleted or replaced") as found:
        box.put("t", A, [{"uuid": "z"}])
    assert found.value.path == str(tmp_path / "outbox.db")
    box.close()


async def test_a_failure_never_told_is_cleared_once_the_store_takes_rows(tmp_path: Path) -> None:
    box = filled(tmp_path)
    store = SqliteSessionStore(tmp_path / "sessions.db")

    class Once:
        failed = False

        async def append_keyed(self, key: Any, rows: Any) -> None:
            if not self.failed:
                self.failed = True
                raise StoreError("away once")
            await store.append_keyed(key, rows)

    deliverer = Deliverer(box, Once(), "t", FAST)
    assert await deliverer.send() is False and str(deliverer.failure) == "away once"
    assert await deliverer.send() is True and deliverer.failure is None and not deliverer.waited
    box.close()
    await store.aclose()


def test_an_outbox_is_kept_at_its_absolute_path_with_no_id_until_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    box = Outbox("relative.db")
    assert box.path == str(tmp_path / "relative.db") and box.id == ""
    memory = Outbox(MEMORY)
    memory.open()
    assert memory.put("t", A, [{"uuid": "m"}, "not an object"]) == 2  # kept as given, nothing to check
    assert memory.head("t")[0].dedupe == "m"
    memory.close()


def test_a_database_of_another_application_is_refused_by_its_id(tmp_path: Path) -> None:
    refused(
        tmp_path / "other.db",
        "PRAGMA application_id = 5",
        r"other\.db is not a flower outbox \(application_id 0x5\)$",
    )
