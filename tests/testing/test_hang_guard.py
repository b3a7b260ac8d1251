"""The harness's waits are hang guards: one environment variable bounds them all; its default is minutes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from claude_agent_sdk import ClaudeAgentOptions, InMemorySessionStore

from flower import SpecError
from flower.testing import ScriptedModel, ScriptTimeout, hang_guard, reply
from flower.testing._guard import DEFAULT_HANG_GUARD, HANG_GUARD_ENV


def test_the_default_is_minutes_and_the_variable_sets_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(HANG_GUARD_ENV, raising=False)
    assert hang_guard() == DEFAULT_HANG_GUARD >= 300
    monkeypatch.setenv(HANG_GUARD_ENV, "1800")
    assert hang_guard() == 1800
    for bad in ("soon", "0", "-5", "inf", "nan"):
        monkeypatch.setenv(HANG_GUARD_ENV, bad)
        with pytest.raises(SpecError, match=f"{HANG_GUARD_ENV} must be a number of seconds > 0, got '{bad}'"):
            hang_guard()


def test_the_plugin_gives_the_sdks_wait_for_a_starting_cli_the_same_bound() -> None:
    # set at pytest_configure unless the variable was already set (then it is left as it was)
    assert int(os.environ["CLAUDE_CODE_STREAM_CLOSE_TIMEOUT"]) >= 60_000


def test_attach_raises_the_sdks_store_load_timeout_unless_it_was_chosen() -> None:
    with ScriptedModel() as model:
        store = InMemorySessionStore()
        default = model.attach(ClaudeAgentOptions(session_store=store))
        chosen = model.attach(ClaudeAgentOptions(session_store=store, load_timeout_ms=5_000))
    assert default.load_timeout_ms == int(hang_guard() * 1000) and chosen.load_timeout_ms == 5_000


async def test_a_run_that_outlives_the_guard_is_stopped_with_what_it_was_doing(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HANG_GUARD_ENV, "3")  # the reply below is held for the test's whole guard: a hang
    async with ScriptedModel(main=[reply("slow", delay=DEFAULT_HANG_GUARD)], strict=False) as model:
        with pytest.raises(ScriptTimeout, match=f"did not finish within 3 s .*{HANG_GUARD_ENV}"):
            await model.run("Go", cwd=workspace)
        with pytest.raises(ScriptTimeout, match="waited 3 s for 2 request"):
            await model.wait_for(2)
