"""spill_guard when the spill directory is hostile: a FIFO or a symlink where the manifest goes."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from flower import SqliteSessionStore
from flower._spill import spill_guard
from flower._workbench import Workbench
from tests import shapes
from tests.hostile import finishes, release
from tests.spill.calls import BIG, call, spill_path, updated

SPILLS = 100  # anyio's default thread limiter has 40 tokens: 40 stuck spills used to stall everything


@pytest.fixture
def wb(tmp_path: Path) -> Workbench:
    ws = tmp_path / "ws"
    ws.mkdir()
    return Workbench(ws).ensure()


def test_a_fifo_manifest_stalls_neither_the_hook_nor_the_thread_pool(
    wb: Workbench, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fifo = wb.spill / "INDEX.jsonl"
    os.mkfifo(fifo)
    store = SqliteSessionStore(tmp_path / "sessions.db")
    hook = spill_guard(wb)
    outputs: list[Any] = []

    async def spill(i: int) -> None:
        data = shapes.post_tool_use("Bash", shapes.bash(f"{i}\n{BIG}"), tool_use_id=f"toolu_{i:03d}")
        outputs.append(updated(await call(hook, data)))

    async def scenario() -> None:
        async with anyio.create_task_group() as group:
            for i in range(SPILLS):
                group.start_soon(spill, i)
        key: Any = {"project_key": "p", "session_id": "s"}
        await store.append(key, [{"type": "user", "uuid": "u1"}])
        assert await store.load(key) == [{"type": "user", "uuid": "u1"}]
        await store.aclose()

    try:
        with caplog.at_level(logging.WARNING, logger="flower.spill"):
            finishes(lambda: anyio.run(scenario))
    finally:
        release(fifo)
    assert len(outputs) == SPILLS, "every output was still spilled"
    for output in outputs:
        assert spill_path(output["stdout"]).read_text().endswith(BIG)
    assert "not recorded" in caplog.text and "a FIFO" in caplog.text
    assert os.path.exists(fifo) and not os.path.isfile(fifo), "the FIFO is left as it was, never opened"


async def test_a_symlinked_manifest_is_not_followed(wb: Workbench, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.jsonl"
    target.write_text("")
    (wb.spill / "INDEX.jsonl").symlink_to(target)
    out = updated(await call(spill_guard(wb), shapes.post_tool_use("Bash", shapes.bash(BIG))))
    assert spill_path(out["stdout"]).read_text() == BIG
    assert target.read_text() == "", "nothing was appended through the symlink"
