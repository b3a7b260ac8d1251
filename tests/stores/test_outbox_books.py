"""The outbox's records, call by call: the sessions it writes and their epochs, the stores it knows, rows
moved to a store's real identity, what waits per store, rows set aside by a fence, and taking rows over."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import pytest

from flower.stores._outbox import Outbox
from flower.stores._outbox._books import Row, Waiting

A: Any = {"project_key": "p", "session_id": "A"}
B: Any = {"project_key": "p", "session_id": "B", "subpath": "subagents/agent-1"}


def outbox(tmp_path: Path) -> Outbox:
    box = Outbox(tmp_path / "outbox.db")
    box.open()
    return box


def test_a_sessions_record_follows_its_run(tmp_path: Path) -> None:
    box = outbox(tmp_path)
    box.begin("t", "A", epoch=3, config_dir="/cfg", resumed=False)
    box.begin("t", "B", epoch=1, config_dir="/cfg2", resumed=True)
    first, second = box.records("t")
    assert (first.session_id, first.epoch, first.pid, first.config_dir, first.resumed, first.prefixes) == (
        "A",
        3,
        os.getpid(),
        "/cfg",
        False,
        {},
    )
    assert (second.session_id, second.resumed, second.prefixes) == ("B", True, None)  # unknown until set
    box.set_epoch("t", "A", 4)
    box.set_prefixes("t", "B", {"": 12, "subagents/agent-1": 3})
    assert [(r.epoch, r.prefixes) for r in box.records("t")] == [
        (4, {}),
        (1, {"": 12, "subagents/agent-1": 3}),
    ]
    box.put("t", B, [{"uuid": "b1"}])
    box.end("t", "A")  # nothing left: forgotten
    box.end("t", "B")  # rows left: kept, without a writer
    (left,) = box.records("t")
    assert (left.session_id, left.pid) == ("B", 0)
    box.forget("t", "B")
    assert box.records("t") == [] and box.orphans("t") == ["B"]


def test_stores_are_known_by_label_and_rows_move_to_their_identity(tmp_path: Path) -> None:
    box = outbox(tmp_path)
    assert box.known("main") is None
    box.remember("label:main", "main")
    assert box.known("main") is None  # a label target is not an identity
    box.remember("store-1", "main")
    assert box.known("main") == "store-1"
    box.put("label:main", A, [{"uuid": "a1"}, {"uuid": "a2"}])
    box.put("label:main", B, [{"uuid": "b1"}])
    box.begin("label:main", "A", epoch=1, config_dir="/c", resumed=False)
    assert box.rekey("label:main", "store-1", []) == 0
    assert box.rekey("label:main", "store-1", ["A"]) == 2
    assert [r.session_id for r in box.records("store-1")] == ["A"] and box.count("label:main") == 1
    assert box.rekey("label:main", "store-1") == 1
    assert box.count("store-1") == 3 and box.count("label:main") == 0
    assert box.waiting() == [Waiting("store-1", "main", 3, 0)]


def test_a_fence_sets_a_sessions_rows_aside_and_waiting_counts_them(tmp_path: Path) -> None:
    box = outbox(tmp_path)
    box.put("t1", A, [{"uuid": "a1"}, {"uuid": "a2"}])
    box.put("t2", B, [{"uuid": "b1"}])
    box.begin("t1", "A", epoch=1, config_dir="/c", resumed=False)
    assert box.fence("t1", "A", "taken over") == 2
    assert box.count("t1") == 0 and box.records("t1") == []
    assert box.waiting() == [Waiting("t2", "t2", 1, 0), Waiting("t1", "t1", 0, 2)]


def test_rows_are_taken_over_in_order_with_their_keys(tmp_path: Path) -> None:
    box = outbox(tmp_path)
    box.put("t", A, [{"uuid": "a1"}, {"no": "uuid"}])
    box.put("t", B, [{"uuid": "b1"}])
    assert box.take("t", []) == []
    taken = box.take("t", ["A", "B"])
    assert [(r.key, r.dedupe) for r in taken][::2] == [(A, "a1"), (B, "b1")]
    assert taken[1].dedupe.startswith("~") and box.count("t") == 0
    other = outbox(tmp_path / "other")
    other.put_rows("t", taken)
    assert [(r.key, r.dedupe, r.payload) for r in other.rows("t", "A")] == [
        (r.key, r.dedupe, r.payload) for r in taken[:2]
    ]
    assert [r.payload for r in other.rows("t", "B")] == ['{"uuid":"b1"}']
    assert isinstance(taken[0], Row)


async def test_a_plain_store_gets_entries_and_an_outage_is_told_then_ended(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from claude_agent_sdk import InMemorySessionStore

    from flower.stores import DeliveryPolicy
    from flower.stores._outbox import Deliverer

    class Failing(InMemorySessionStore):
        fail = 1

        async def append(self, key: Any, entries: Any) -> None:
            if self.fail:
                self.fail -= 1
                raise RuntimeError("the store is away")
            await super().append(key, entries)

    box = outbox(tmp_path)
    store = Failing()
    box.put("t", B, [{"type": "user", "uuid": "b1"}, {"type": "user", "uuid": "b2"}])
    told: list[tuple[str, int]] = []
    back: list[int] = []

    async def on_wait(failure: Any, pending: int) -> None:
        told.append((str(failure), pending))

    async def on_back(pending: int) -> None:
        back.append(pending)

    policy = DeliveryPolicy(backoff=0.01, max_backoff=0.02, drain_timeout=600)
    deliverer = Deliverer(box, store, "t", policy, on_wait=on_wait, on_back=on_back)
    assert (deliverer.failure, deliverer.waited, deliverer.delivered) == (None, False, 0)
    with caplog.at_level(logging.WARNING, logger="flower.stores"):
        assert await deliverer.drain() == 0
    assert told == [("RuntimeError: the store is away", 2)] and back == [0]
    assert [e["uuid"] for e in await store.load(B)] == ["b1", "b2"]  # the plain append, by key
    assert (deliverer.failure, deliverer.waited, deliverer.delivered) == (None, False, 2)
    (record,) = [r for r in caplog.records if r.name == "flower.stores"]
    assert (
        record.getMessage()
        == f"flower.stores: RuntimeError: the store is away; the entries wait in {box.path}"
    )
