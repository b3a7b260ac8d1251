"""The layers rewrite only what `load()` returns: the inner store keeps every original entry."""

from __future__ import annotations

import copy
import logging
from pathlib import Path

import pytest
from claude_agent_sdk import InMemorySessionStore
from claude_agent_sdk._internal.session_store_validation import _store_implements

from flower._errors import SpecError
from flower.stores import (
    CachePolicy,
    EphemeralPolicy,
    LoadReport,
    PrunePolicy,
    PruningSessionStore,
    SqliteSessionStore,
    TrimmingSessionStore,
    TrimPolicy,
)
from tests.stores.minimal_store import AppendLoadOnly

from .transcripts import COLD, WRITTEN_BY, Transcript, dumps, results, text

KEY = {"project_key": "proj", "session_id": "sess"}
GIT = EphemeralPolicy(keep_recent=2, predicate=lambda c: c.startswith("git status"))


def status(i: int) -> str:
    """A `git status` body longer than the note that would replace it."""
    return f"status {i}\n" + "\n".join(f" M src/package/module_{i}_{k}.py" for k in range(8))


def busy_session() -> Transcript:
    t = Transcript()
    t.prompt("work")
    for i in range(4):
        t.run("git status", status(i), f"toolu_gs{i}")
        t.run(f"rm -rf b{i}", "denied", f"toolu_rm{i}", denial="permission-rule")
    t.run("cat big.log", "L" * 3000, "toolu_big")
    t.run("sleep 30", "", "toolu_sleep", interrupted=True)
    t.api_error()
    t.assistant(t.bash("make", "toolu_orphan"))
    return t


async def test_load_rewrites_and_sqlite_keeps_every_original(tmp_path: Path) -> None:
    t = busy_session()
    reports: list[LoadReport] = []
    async with PruningSessionStore(
        tmp_path / "s.db",
        ephemeral=GIT,
        trim=TrimPolicy(keep_recent=0),
        spill_dir=tmp_path / "spill",
        on_report=reports.append,
    ) as store:
        store.clock = lambda: COLD
        await store.append(KEY, t.snapshot())

        loaded = await store.load(KEY)
        again = await store.load(KEY)

        assert loaded == again
        assert await store.inner.load(KEY) == t.entries, "the stored history is untouched"
        assert isinstance(store.inner, SqliteSessionStore)
    found = results(loaded)
    assert [text(found[f"toolu_gs{i}"]) for i in (2, 3)] == [status(2), status(3)]
    assert all(text(found[f"toolu_gs{i}"]).startswith("[result of `git status` expired") for i in (0, 1))
    assert set(found) >= {"toolu_rm3", "toolu_orphan"} and not {"toolu_rm0", "toolu_rm1", "toolu_rm2"} & set(
        found
    )
    assert text(found["toolu_sleep"]) == PrunePolicy().interrupt_note
    pointer = text(found["toolu_big"])
    path = pointer.split(" moved to ")[1].split(";")[0]
    assert Path(path).read_text() == "L" * 3000 and Path(path).parent == tmp_path / "spill"
    assert not any(e.get("isApiErrorMessage") for e in loaded)

    report = store.last_report
    assert report is not None and reports == [report, report]
    assert (len(report.expired), len(report.trimmed), len(report.pruned)) == (2, 1, 3 + 1 + 1 + 1)
    assert len(report.of_kind("denial_note")) == 1 and text(found["toolu_rm3"]) == (
        "denied\n[also refused earlier (not shown): `rm -rf b0`, `rm -rf b1`, `rm -rf b2`]"
    )
    assert report.entries_in == len(t.entries) and report.entries_out == len(loaded)
    assert report.chars_saved > 3000 and report.errors == ()
    assert report.summary().startswith("sess: 2 expired, 1 trimmed, 3 denials dropped, 1 API errors dropped")


async def test_trimming_store_does_not_prune(tmp_path: Path) -> None:
    t = busy_session()
    store = TrimmingSessionStore(InMemorySessionStore(), ephemeral=GIT, trim=False)
    store.clock = lambda: COLD
    await store.append(KEY, t.snapshot())
    loaded = await store.load(KEY)
    assert len(loaded) == len(t.entries) and store.last_report is not None
    assert [c.kind for c in store.last_report.changes] == ["expired", "expired"]
    assert store.trim is None and store.spill_dir is None


async def test_a_warm_load_repeats_the_last_cold_load_and_decides_nothing() -> None:
    """Two resumes: the first after a 10-minute pause (cache cold: it decides), the second a minute
    after the last entry (cache warm: it repeats the first's rewrites over the history as the first saw
    it, and sends what came since as the session's own requests sent it)."""
    t = busy_session()
    t.pause(600)
    t.resume("go on")
    first_point = len(t.entries) - 2  # the resumed prompt: the first load saw everything before it
    for i in range(4, 8):
        t.run("git status", status(i), f"toolu_gs{i}")
    t.run("rm -rf c", "denied", "toolu_rm9", denial="permission-rule")
    store = PruningSessionStore(InMemorySessionStore(), ephemeral=GIT)
    await store.append(KEY, t.snapshot())

    store.clock = lambda: t.last_time + 60
    warm = await store.load(KEY)
    report = store.last_report
    store.clock = lambda: t.last_time + 600
    cold = await store.load(KEY)

    assert report is not None and report.warm and store.last_report is not None
    assert "(cache warm: the last cold load's rewrites, repeated)" in report.summary()
    assert not store.last_report.warm
    then = PruningSessionStore(InMemorySessionStore(), ephemeral=GIT)
    await then.append(KEY, t.snapshot()[:first_point])
    then.clock = lambda: t.last_time  # what the first resume loaded, at its time
    decided_then = await then.load(KEY) or []
    assert dumps(warm)[: len(decided_then)] == dumps(decided_then), "the cached prefix, byte for byte"
    assert dumps(warm)[len(decided_then) :] == dumps(t.entries[first_point:]), "the rest as sent"
    assert {c.tool_use_id for c in report.expired} == {"toolu_gs0", "toolu_gs1"}
    assert {c.kind for c in report.changes} >= {"denial", "interrupt", "api_error"}
    found = results(cold)
    assert {c.tool_use_id for c in store.last_report.expired} == {f"toolu_gs{i}" for i in range(6)}
    assert "toolu_rm3" not in found and text(found["toolu_rm9"]).startswith("denied\n[also refused")


async def test_without_a_cache_policy_every_load_decides() -> None:
    t = busy_session()
    store = PruningSessionStore(InMemorySessionStore(), ephemeral=GIT, cache=None)
    store.clock = lambda: WRITTEN_BY
    await store.append(KEY, t.snapshot())
    await store.load(KEY)
    assert store.last_report is not None and not store.last_report.warm
    assert len(store.last_report.expired) == 2 and store.cache is None


async def test_subagent_loads_report_but_keep_the_main_report() -> None:
    reports: list[LoadReport] = []
    store = PruningSessionStore(InMemorySessionStore(), on_report=reports.append)
    sub = {**KEY, "subpath": "subagents/agent-1"}
    await store.append(KEY, busy_session().entries)
    await store.append(sub, busy_session().entries)
    await store.load(KEY)
    await store.load(sub)
    assert [r.subpath for r in reports] == [None, "subagents/agent-1"]
    assert store.last_report is reports[0]
    assert await store.load({**KEY, "session_id": "nope"}) is None


async def test_a_failing_rewrite_or_callback_never_breaks_a_load(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def explode(command: str) -> bool:
        raise RuntimeError("predicate bug")

    def bad_callback(report: LoadReport) -> None:
        raise ValueError("callback bug")

    t = busy_session()
    store = PruningSessionStore(
        InMemorySessionStore(), ephemeral=EphemeralPolicy(predicate=explode), on_report=bad_callback
    )
    await store.append(KEY, t.snapshot())
    with caplog.at_level(logging.ERROR, logger="flower.stores"):
        loaded = await store.load(KEY)
    report = store.last_report
    assert report is not None and report.errors == ("expire_ephemeral: RuntimeError: predicate bug",)
    assert len(report.pruned) == 6, "the other rewrites still ran"
    assert "predicate bug" in caplog.text and "callback bug" in caplog.text
    assert text(results(loaded)["toolu_gs0"]) == status(0)


async def test_a_trim_that_cannot_write_keeps_the_bodies(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    store = PruningSessionStore(InMemorySessionStore(), trim=TrimPolicy(keep_recent=0), spill_dir=blocker)
    store.clock = lambda: COLD
    await store.append(KEY, busy_session().entries)
    loaded = await store.load(KEY)
    assert text(results(loaded)["toolu_big"]) == "L" * 3000
    assert store.last_report is not None and store.last_report.errors[0].startswith(
        "trim_results: StoreError"
    )


async def test_entries_that_are_not_dicts_pass_through() -> None:
    inner = AppendLoadOnly()
    store = PruningSessionStore(inner)
    await store.append(KEY, [{"type": "user", "uuid": "a"}, "garbage"])  # type: ignore[list-item]
    assert await store.load(KEY) == [{"type": "user", "uuid": "a"}, "garbage"]
    assert store.last_report is not None
    assert store.last_report.errors == ("history: transcript entry 1 is a str, not a dict",)


async def test_optional_methods_follow_the_inner_store(tmp_path: Path) -> None:
    optional = ("list_sessions", "list_session_summaries", "delete", "list_subkeys")
    minimal = PruningSessionStore(AppendLoadOnly())
    full = PruningSessionStore(tmp_path / "s.db")
    assert [_store_implements(minimal, m) for m in optional] == [False] * 4
    assert [_store_implements(full, m) for m in optional] == [True] * 4
    assert isinstance(minimal, PruningSessionStore) and type(minimal).__name__ == "PruningSessionStore"
    assert type(PruningSessionStore(AppendLoadOnly())) is type(minimal), (
        "one variant class per capability set"
    )
    await full.aclose()


def test_configuration_errors(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="spill_dir"):
        TrimmingSessionStore(InMemorySessionStore())
    with pytest.raises(SpecError, match="spill_dir"):
        PruningSessionStore(InMemorySessionStore(), trim=True)
    with pytest.raises(SpecError, match="ephemeral must be"):
        PruningSessionStore(InMemorySessionStore(), ephemeral="yes")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="prune must be"):
        PruningSessionStore(InMemorySessionStore(), prune=TrimPolicy())  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="inner must be"):
        PruningSessionStore(42)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="on_report"):
        PruningSessionStore(InMemorySessionStore(), on_report="print")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="cache must be a CachePolicy"):
        PruningSessionStore(InMemorySessionStore(), cache=300)  # type: ignore[arg-type]
    for ttl in (0, -5, True, float("inf"), "5m"):
        with pytest.raises(SpecError, match=r"CachePolicy\.ttl"):
            CachePolicy(ttl=ttl)  # type: ignore[arg-type]
    store = TrimmingSessionStore(InMemorySessionStore(), spill_dir="rel/spill", ephemeral=False)
    assert store.spill_dir == str(Path("rel/spill").resolve()) and store.ephemeral is None
    assert copy.copy(PrunePolicy()) == PrunePolicy()
