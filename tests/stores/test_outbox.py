"""The outbox: delivery in order and exactly once through failures, its records, and reconciliation's
arithmetic (pure, and over the real transcripts when they are at hand)."""

from __future__ import annotations

import json
import os
import random
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

from flower import DeliveryPolicy, SpecError, SqliteSessionStore, StoreError
from flower.stores._outbox import MEMORY, Deliverer, Outbox
from flower.stores._outbox.reconcile import mirrored, missing
from flower.testing import hang_guard
from tests.stores import corpus

KEY: Any = {"project_key": "-repo", "session_id": "0c7c2a4e-0000-4000-8000-00000000b0b0"}
SUB: Any = {**KEY, "subpath": "subagents/agent-a1"}
FAST = DeliveryPolicy(backoff=0.001, max_backoff=0.002, drain_timeout=hang_guard())


class Flaky:
    """A real SQLite store behind a fault: every `fail_every`-th append fails before it lands; with
    `after=True` it lands and then fails (the reply lost), so the same batch comes again."""

    def __init__(self, inner: SqliteSessionStore, fail_every: int, *, after: bool) -> None:
        self.inner, self.fail_every, self.after, self.calls = inner, fail_every, after, 0

    async def append_keyed(self, key: Any, rows: Any) -> None:
        self.calls += 1
        failing = self.calls % self.fail_every == 0
        if failing and not self.after:
            raise StoreError("injected: the store is away")
        await self.inner.append_keyed(key, rows)
        if failing:
            raise StoreError("injected: the commit's reply was lost")


def batches(rng: random.Random) -> list[tuple[Any, list[dict[str, Any]]]]:
    """Batches as the SDK's eager mirror hands them over: main and subagent interleaved, entries without
    a uuid among them, two of which are byte-identical (the CLI writes some lines twice)."""
    found: list[tuple[Any, list[dict[str, Any]]]] = []
    for n in range(40):
        key = SUB if rng.random() < 0.3 else KEY
        batch: list[dict[str, Any]] = [
            {"type": "user", "uuid": f"u{n}-{k}", "n": n} for k in range(rng.randint(1, 4))
        ]
        if n % 5 == 0:
            batch.append({"type": "atis-latch"})  # no uuid, and the same bytes every time
        found.append((key, batch))
    return found


@pytest.mark.parametrize("after", [False, True], ids=["fails-before", "fails-after-commit"])
async def test_delivery_is_in_order_and_exactly_once_through_failures(tmp_path: Path, after: bool) -> None:
    outbox = Outbox(tmp_path / "outbox.db")
    outbox.open()
    inner = SqliteSessionStore(tmp_path / "sessions.db")
    store = Flaky(inner, fail_every=3, after=after)
    deliverer = Deliverer(outbox, store, "target", FAST)
    sent = batches(random.Random(26))
    for key, batch in sent:
        outbox.put("target", key, batch)
        await deliverer.send()  # a failure keeps the rows; the next call sends them again
    assert await deliverer.drain() == 0
    assert store.calls > len({id(b) for _, b in sent}) // 10 and deliverer.delivered == sum(
        len(b) for _, b in sent
    )
    for key in (KEY, SUB):
        expected = [entry for k, batch in sent if k is key for entry in batch]
        assert await inner.load(key) == expected, "every entry once, in the order it came"
    outbox.close()
    await inner.aclose()


async def test_a_deliverer_sends_only_its_sessions_and_says_when_it_waits(tmp_path: Path) -> None:
    outbox = Outbox(tmp_path / "outbox.db")
    outbox.open()
    other = {**KEY, "session_id": "0c7c2a4e-0000-4000-8000-00000000b0b1"}
    inner = SqliteSessionStore(tmp_path / "sessions.db")
    target = str(await inner.identity())  # rows are bound to their store's identity
    outbox.put(target, KEY, [{"type": "user", "uuid": "mine"}])
    outbox.put(target, other, [{"type": "user", "uuid": "theirs"}])
    outbox.put("elsewhere", KEY, [{"type": "user", "uuid": "another store"}])
    said: list[tuple[str, int]] = []

    blocked = {"now": True}

    async def waiting(failure: StoreError, pending: int) -> None:
        said.append((str(failure), pending))
        blocked["now"] = False  # the lease comes: the drain's next attempt delivers

    deliverer = Deliverer(
        outbox,
        inner,
        target,
        DeliveryPolicy(backoff=0.01, max_backoff=0.01, drain_timeout=hang_guard()),
        sessions={KEY["session_id"]},
        blocked=lambda session: StoreError(f"no lease of {session} yet") if blocked["now"] else None,
        on_wait=waiting,
    )
    assert await deliverer.drain() == 0 and said == [(f"no lease of {KEY['session_id']} yet", 1)]
    never = Deliverer(outbox, inner, "elsewhere", DeliveryPolicy(), blocked=lambda _: StoreError("no lease"))
    assert await never.drain(timeout=0.05) == 1, "a drain that runs out of time leaves the rows, counted"
    assert [e["uuid"] for e in await inner.load(KEY)] == ["mine"] and await inner.load(other) is None
    assert outbox.count(target) == 1 and outbox.count("elsewhere") == 1
    outbox.close()
    await inner.aclose()


def test_keys_of_entries_without_a_uuid_are_never_reused(tmp_path: Path) -> None:
    outbox = Outbox(tmp_path / "outbox.db")
    outbox.open()
    outbox.put("t", KEY, [{"type": "queue-operation"}])
    first = outbox.head("t")
    outbox.ack([row.id for row in first])
    outbox.put("t", KEY, [{"type": "queue-operation"}])
    second = outbox.head("t")
    assert first[0].dedupe.startswith(f"~{outbox.id}:") and first[0].dedupe != second[0].dedupe
    assert first[0].payload == second[0].payload
    outbox.close()


def test_records_follow_a_session_and_fenced_rows_are_set_aside(tmp_path: Path) -> None:
    outbox = Outbox(tmp_path / "outbox.db")
    outbox.open()
    outbox.begin("t", "s1", epoch=3, config_dir="/c", resumed=True)
    (record,) = outbox.records("t")
    assert (record.epoch, record.resumed, record.prefixes) == (3, True, None), "a resume's prefix is unknown"
    outbox.set_prefixes("t", "s1", {"": 12, "subagents/agent-a1": 4})
    outbox.set_epoch("t", "s1", 4)
    outbox.put("t", {**KEY, "session_id": "s1"}, [{"type": "user", "uuid": "x"}])
    outbox.end("t", "s1")
    (ended,) = outbox.records("t")
    assert ended.pid == 0 and ended.epoch == 4 and ended.prefixes == {"": 12, "subagents/agent-a1": 4}
    assert outbox.fence("t", "s1", "taken over") == 1 and outbox.records("t") == [] and outbox.count("t") == 0
    outbox.close()


def test_an_outbox_file_that_is_not_one_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "outbox.db"
    path.write_text("not a database at all, but long enough to be looked at" * 100)
    with pytest.raises(StoreError, match=str(path)):
        Outbox(path).open()
    with pytest.raises(SpecError, match="max_backoff"):
        DeliveryPolicy(backoff=3, max_backoff=1)


def test_rows_of_layout_1_are_kept_under_their_label_and_taken_over_by_identity(tmp_path: Path) -> None:
    path = tmp_path / "outbox.db"
    with sqlite3.connect(path) as conn:  # an outbox an older flower left: rows keyed by the store's label
        conn.executescript(LAYOUT_1)
    outbox = Outbox(path)
    assert [(w.target, w.label, w.pending) for w in outbox.waiting()] == [
        ("label:/old/sessions.db", "/old/sessions.db", 2)
    ]
    assert outbox.rekey("label:/old/sessions.db", "sqlite:abc") == 2
    outbox.remember("sqlite:abc", "/old/sessions.db")
    assert [r.key["session_id"] for r in outbox.head("sqlite:abc")] == ["s1", "s1"]
    assert [r.session_id for r in outbox.records("sqlite:abc")] == ["s1"]
    outbox.put("postgresql:7/db/flower", KEY, [{"uuid": "x"}])
    assert [(w.target, w.pending) for w in outbox.waiting()] == [
        ("sqlite:abc", 2),
        ("postgresql:7/db/flower", 1),
    ]
    outbox.close()


def test_an_outbox_in_memory_takes_rows_with_their_keys_and_a_deleted_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # where a file named after MEMORY would be created
    path = tmp_path / "outbox.db"
    outbox = Outbox(path)
    outbox.open()
    outbox.put("t", KEY, [{"uuid": "a"}, {"type": "queue-operation"}])
    outbox.put("t", {**KEY, "session_id": "other"}, [{"uuid": "b"}])
    memory = Outbox(MEMORY)
    memory.open()
    taken = outbox.take("t", [KEY["session_id"]])
    memory.put_rows("t", taken)
    assert [r.dedupe for r in memory.head("t")] == [r.dedupe for r in taken] and taken[1].dedupe.startswith(
        "~"
    )
    assert outbox.count("t") == 1 and memory.in_memory and not os.path.exists(MEMORY), "no file for it"
    for name in os.listdir(tmp_path):
        os.unlink(tmp_path / name)  # deleted while in use: a put there would land in a file nobody reads
    with pytest.raises(StoreError, match="deleted or replaced"):
        outbox.put("t", KEY, [{"uuid": "c"}])
    outbox.close()
    memory.close()


async def test_an_append_that_waits_is_told_after_warn_after_then_told_resolved(tmp_path: Path) -> None:
    outbox = Outbox(tmp_path / "outbox.db")
    outbox.open()
    outbox.put("t", KEY, [{"uuid": "a"}])
    inner = SqliteSessionStore(tmp_path / "sessions.db")
    told: list[str] = []
    gate = anyio.Event()

    class Held:  # the real store behind a network that holds every packet until `gate` opens
        async def append_keyed(self, key: Any, rows: Any) -> None:
            await gate.wait()
            await inner.append_keyed(key, rows)

    async def waiting(failure: StoreError, pending: int) -> None:
        told.append(f"waiting {pending}: {failure}")
        gate.set()  # the partition heals once the warning is out

    async def back(pending: int) -> None:
        told.append(f"back {pending}")

    policy = DeliveryPolicy(warn_after=0.01, attempt_timeout=600)
    deliverer = Deliverer(outbox, Held(), "t", policy, label="the store", on_wait=waiting, on_back=back)
    assert await deliverer.send()
    assert told == [
        "waiting 1: an append to the store has waited 0.01 s for an answer (DeliveryPolicy.warn_after)",
        "back 0",
    ]
    assert [e["uuid"] for e in await inner.load(KEY) or []] == ["a"]
    outbox.close()
    await inner.aclose()


LAYOUT_1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta VALUES ('id', 'a1b2c3');
CREATE TABLE pending (id INTEGER PRIMARY KEY AUTOINCREMENT, target TEXT NOT NULL, project_key TEXT NOT NULL,
    session_id TEXT NOT NULL, subpath TEXT NOT NULL, dedupe TEXT NOT NULL, payload TEXT NOT NULL,
    enqueued REAL NOT NULL);
CREATE TABLE sessions (target TEXT NOT NULL, session_id TEXT NOT NULL, epoch INTEGER NOT NULL,
    pid INTEGER NOT NULL, config_dir TEXT NOT NULL, resumed INTEGER NOT NULL, prefixes TEXT,
    started REAL NOT NULL, PRIMARY KEY (target, session_id));
CREATE TABLE fenced (id INTEGER PRIMARY KEY, target TEXT NOT NULL, project_key TEXT NOT NULL,
    session_id TEXT NOT NULL, subpath TEXT NOT NULL, dedupe TEXT NOT NULL, payload TEXT NOT NULL,
    reason TEXT NOT NULL, fenced_at REAL NOT NULL);
INSERT INTO pending VALUES (1, '/old/sessions.db', '-repo', 's1', '', 'u1', '{"uuid":"u1"}', 0);
INSERT INTO pending VALUES (2, '/old/sessions.db', '-repo', 's1', '', 'u2', '{"uuid":"u2"}', 0);
INSERT INTO sessions VALUES ('/old/sessions.db', 's1', 0, 0, '/c', 0, '{}', 0);
PRAGMA application_id = 1718384495;
PRAGMA user_version = 1;
"""
"""The layout of an outbox flower wrote before rows were kept by the store's identity."""


def entries(*names: str) -> list[dict[str, Any]]:
    return [{"uuid": n} if not n.startswith("~") else {"type": n[1:]} for n in names]


def test_missing_is_what_the_store_lacks_in_the_file_order() -> None:
    local = entries("a", "~q", "b", "c", "~q", "d")
    assert missing(local, entries("a", "~q", "b")) == entries("c", "~q", "d")
    assert missing(local, entries("a", "~q", "b", "c", "~q")) == entries("d")
    assert missing(local, local) == []
    assert missing(local, []) == local
    assert missing(local, entries("a", "c")) == entries("b", "~q", "d"), "a hole, then the tail"


def test_mirrored_lines_skip_what_a_mirror_never_sends_and_stop_at_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = [{"uuid": "a"}, {"type": "api-request", "uuid": "r"}, {"uuid": "b"}, {"uuid": "c"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"uuid": "cut')
    assert mirrored(path) == [{"uuid": "a"}, {"uuid": "b"}, {"uuid": "c"}]
    assert mirrored(path, prefix=3) == [{"uuid": "c"}]


def test_reconciling_a_real_transcript_finds_exactly_what_a_store_lost() -> None:
    rng = random.Random(7)
    for path in [t.path for t in corpus.transcripts()][:6]:
        local = mirrored(path)
        cut = rng.randint(1, max(1, len(local) - 1))
        assert missing(local, local[:cut]) == local[cut:], path.name
        assert missing(local, local) == [], path.name
