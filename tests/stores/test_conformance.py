"""The SDK's own conformance suite, for the SQLite store and for each layer over it (and over others)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from claude_agent_sdk import InMemorySessionStore
from claude_agent_sdk.testing import run_session_store_conformance

from flower.stores import PruningSessionStore, SqliteSessionStore, TrimmingSessionStore
from tests.stores.minimal_store import AppendLoadOnly


@pytest.fixture
async def fresh_sqlite(tmp_path: Path) -> AsyncIterator[Callable[[], SqliteSessionStore]]:
    """A factory of stores on new files; every store is closed afterwards."""
    made: list[SqliteSessionStore] = []

    def make() -> SqliteSessionStore:
        store = SqliteSessionStore(tmp_path / f"store{len(made)}.db")
        made.append(store)
        return store

    yield make
    for store in made:
        await store.aclose()


async def test_sqlite(fresh_sqlite: Callable[[], SqliteSessionStore]) -> None:
    await run_session_store_conformance(fresh_sqlite)


async def test_sqlite_in_memory() -> None:
    await run_session_store_conformance(lambda: SqliteSessionStore(":memory:"))


async def test_full_stack_over_sqlite(fresh_sqlite: Callable[[], SqliteSessionStore], tmp_path: Path) -> None:
    await run_session_store_conformance(
        lambda: PruningSessionStore(fresh_sqlite(), trim=True, spill_dir=tmp_path / "spill")
    )


async def test_trimming_over_sqlite(fresh_sqlite: Callable[[], SqliteSessionStore], tmp_path: Path) -> None:
    await run_session_store_conformance(
        lambda: TrimmingSessionStore(fresh_sqlite(), spill_dir=tmp_path / "spill")
    )


async def test_layers_over_the_sdk_memory_store(tmp_path: Path) -> None:
    await run_session_store_conformance(lambda: PruningSessionStore(InMemorySessionStore()))
    await run_session_store_conformance(
        lambda: TrimmingSessionStore(PruningSessionStore(InMemorySessionStore()), spill_dir=tmp_path)
    )


async def test_a_layer_over_a_minimal_store_has_no_optional_methods() -> None:
    await run_session_store_conformance(lambda: PruningSessionStore(AppendLoadOnly()))
