"""An app on the plain SDK with `instrument(..., store=DSN)` and `lease_session`: the fleet guarantees."""

from __future__ import annotations

import re
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from claude_agent_sdk import ClaudeAgentOptions

from flower import LeaseError, PostgresSessionStore, instrument, lease_session
from flower._errors import SpecError
from flower.testing import ScriptedModel, bash, hang_guard, read
from flower.testing._requests import RecordedRequest

pytestmark = pytest.mark.cli

BIG = "".join(f"row {n}\n" for n in range(1500)) + "row 1500: the needle\n"
POINTER = re.compile(r"to `?([^` ]+/\.flower/spill/[0-9a-f]{16}-bash\.txt)`? \(")


def app_options(workspace: Path, **fields: object) -> ClaudeAgentOptions:
    return ClaudeAgentOptions(
        cwd=workspace,
        permission_mode="bypassPermissions",
        setting_sources=[],
        **fields,  # type: ignore[arg-type]
    )


async def test_an_instrumented_app_leases_and_carries_its_files(
    scripted_model: ScriptedModel, tmp_path: Path, postgres_dsn: str, pg_schema: Callable[[], str]
) -> None:
    schema = pg_schema()
    a, b = tmp_path / "a" / "app", tmp_path / "b" / "app"
    for workspace in (a, b):
        workspace.mkdir(parents=True)
    (a / "big.txt").write_text(BIG)
    store_a = PostgresSessionStore(postgres_dsn, schema=schema, runner="app-a")
    store_b = PostgresSessionStore(postgres_dsn, schema=schema, runner="app-b")
    session = str(uuid.uuid4())

    options = instrument(app_options(a, session_id=session), workspace=a, store=store_a)
    scripted_model.script("main", [bash("cat big.txt"), "Read it."])
    async with lease_session(options) as lease:
        assert lease is not None and lease.session_id == session and "app-a" in lease.holder
        with pytest.raises(LeaseError) as refused:  # another app instance resuming it now is refused
            async with lease_session(instrument(app_options(b, resume=session), workspace=b, store=store_b)):
                pass
        run = await scripted_model.run("Look at big.txt.", options=options)
    assert run.error is None and refused.value.session_id == session and "app-a" in str(refused.value.holder)
    spilled = POINTER.search(scripted_model.request("main", 1).tool_results[0].text)
    assert spilled is not None
    shutil.rmtree(tmp_path / "a")

    resumed = instrument(app_options(b, resume=session), workspace=b, store=store_b)

    def read_the_pointer(request: RecordedRequest) -> object:
        found = POINTER.search(str(request.messages))
        assert found is not None and found.group(1).startswith(str(b))
        return read(found.group(1))

    scripted_model.script("main", [read_the_pointer, "The needle is on row 1500."])
    async with lease_session(resumed, timeout=hang_guard()) as lease:
        assert lease is not None and f"spill/{Path(spilled.group(1)).name}" in lease.restored
        again = await scripted_model.run("Where is the needle?", options=resumed)
    assert again.error is None and "row 1500: the needle" in scripted_model.request("main", -1)
    for store in (store_a, store_b):
        await store.aclose()


def test_instrument_takes_the_store_once(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="give the store once"):
        instrument(app_options(tmp_path, session_store=object()), workspace=tmp_path, store="x.db")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="no session_store"):
        lease_session(app_options(tmp_path))
