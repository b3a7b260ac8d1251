"""Files flower writes are user-only: tool outputs can hold secrets (0600 files, 0700 directories).

One real run that touches every writer: the SQLite store (and its -wal/-shm files), a spill, the index, a
handoff document, and the bodies layer 4 trims on a resume. The umask is the usual 022 for the run, so a
mode that only comes from a permissive umask shows.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from flower import Runtime, TrimPolicy, coordinator, worker
from flower._demo.pause import pass_time
from flower.testing import RecordedRequest, ScriptedModel, Usage, bash, read, reply
from flower.testing._steps import Step
from tests.e2e.file_modes import assert_private

pytestmark = pytest.mark.cli

SONNET = "claude-sonnet-4-6"
HANDOFF = "## Doing now\nReading the data.\n## Next step\nCount the rows of data.txt.\n"


@pytest.fixture
def usual_umask() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def first_generation(workspace: Path) -> object:
    """Read a 3,000-char file (kept whole: below the spill threshold), spill a big one, then fill up."""

    def step(request: RecordedRequest) -> Step:
        if "Write the handoff document now" in request.last_user_text:
            return HANDOFF
        if "You are taking over work in progress" in str(request.messages[:3]):
            return "Taken over."
        if request.turn == 0:
            return reply(read(str(workspace / "data.txt")), usage=Usage(input_tokens=3_000))
        if request.turn == 1:
            return read(str(workspace / "big.txt"))
        return reply(bash("ls"), usage=Usage(input_tokens=10, cache_read_input_tokens=150_000))

    return step


async def test_every_file_flower_writes_is_user_only(
    scripted_model: ScriptedModel, workspace: Path, usual_umask: None
) -> None:
    (workspace / "data.txt").write_text("row\n" * 750)
    (workspace / "big.txt").write_text("z" * 20_000)
    # claude-sonnet-4-6: the CLI reports a 200k window, so the handoff fires at 147k
    lead = coordinator("lead", "Goal: count rows.", {"w": worker("Counts.", "You count.")}, model=SONNET)
    rt = Runtime(workspace, trim=TrimPolicy(keep_recent=0), configure=scripted_model.attach)

    scripted_model.script("main", first_generation(workspace))
    first = await rt.run(lead, "Count the rows.")
    assert first.ok and len(first.retired) == 1, first.error
    pass_time(workspace / ".flower" / "sessions.db", 3_900)  # 65 minutes later: even a 1-hour cache is cold
    scripted_model.script("main", ["Resumed."])
    again = await rt.run(lead, "Go on.", resume=first.retired[0])  # layer 4 trims data.txt's body to a file
    assert again.ok, again.error

    modes = assert_private(workspace / ".flower")
    names = set(modes)
    assert {"sessions.db", "INDEX.md", "notes/handoff.md"} <= names
    # the last run closed the store's connection, and SQLite removed its -wal and -shm files with it: they
    # exist while a connection is open, so the store is opened again to see them
    async with rt:
        assert await rt.store.load({"project_key": "p", "session_id": "s"}) is None
        opened = assert_private(workspace / ".flower")
        assert {"sessions.db-wal", "sessions.db-shm"} <= set(opened)
    assert "spill/INDEX.jsonl" in names
    spilled = [n for n in names if re.fullmatch(r"spill/[0-9a-f]{16}-read\.txt", n)]  # layer 3
    trimmed = [n for n in names if re.fullmatch(r"spill/[0-9a-f]{16,64}\.txt", n)]  # layer 4
    assert spilled and trimmed, names
