"""chain_spill on plain hook inputs: an app's output rewrite is spilled, and flower's spill steps aside."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from claude_agent_sdk import HookMatcher

from flower._spill import SpillPolicy, _chain, spill_hooks
from flower._spill._chain import chain_spill
from flower.testing import hang_guard
from tests import shapes

POLICY = SpillPolicy(threshold=100, head=10, tail=0)


def post(stdout: str, tool: str = "Bash", tool_use_id: str = "toolu_1") -> dict[str, Any]:
    return {
        "hook_event_name": "PostToolUse",
        "session_id": "s1",
        "cwd": "/ws",
        "tool_name": tool,
        "tool_input": {"command": "cat data"},
        "tool_response": shapes.bash(stdout),
        "tool_use_id": tool_use_id,
    }


async def redact(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
    await anyio.sleep(0.05)
    output = {**data["tool_response"], "stdout": data["tool_response"]["stdout"].replace("S", "r")}
    return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": output}}


async def observe(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
    return {"systemMessage": "seen"}


def chained(spill_dir: Path, app_hook: Any) -> tuple[Any, Any]:
    ours, theirs = chain_spill(
        spill_hooks(spill_dir, POLICY),
        {"PostToolUse": [HookMatcher(matcher="Bash", hooks=[app_hook])]},
        POLICY,
    )
    return ours["PostToolUse"][0].hooks[0], theirs["PostToolUse"][0].hooks[0]


def stdout(result: dict[str, Any]) -> str:
    return str(result["hookSpecificOutput"]["updatedToolOutput"]["stdout"])


async def both(spill: Any, app: Any, data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}

    async def run(name: str, hook: Any) -> None:
        results[name] = await hook(data, data["tool_use_id"], {"signal": None})

    async with anyio.create_task_group() as group:  # as the CLI does: every callback of a call at once
        group.start_soon(run, "spill", spill)
        group.start_soon(run, "app", app)
    return results["spill"], results["app"]


async def test_the_app_rewrite_is_spilled_and_the_original_never_written(tmp_path: Path) -> None:
    spill, app = chained(tmp_path, redact)
    from_spill, from_app = await both(spill, app, post("S" * 500))
    assert from_spill == {}  # flower's own spill stepped aside
    assert stdout(from_app).startswith("[spilled] Bash stdout: 500 chars") and "r" * 10 in stdout(from_app)
    (written,) = tmp_path.glob("*.txt")
    assert written.read_text() == "r" * 500


async def test_an_app_hook_that_rewrites_nothing_changes_nothing(tmp_path: Path) -> None:
    spill, app = chained(tmp_path, observe)
    from_spill, from_app = await both(spill, app, post("S" * 500))
    assert stdout(from_spill).startswith("[spilled]") and from_app == {"systemMessage": "seen"}
    assert [p.read_text() for p in tmp_path.glob("*.txt")] == ["S" * 500]


async def test_an_app_hook_seen_too_late_still_ends_last(tmp_path: Path) -> None:
    spill, app = chained(tmp_path, redact)
    data = post("S" * 500)
    first = await spill(data, "toolu_1", {"signal": None})  # the spill ran alone: the original went out
    assert stdout(first).startswith("[spilled]")
    late = await app(data, "toolu_1", {"signal": None})
    assert "r" * 10 in stdout(late)  # ...and the app's version, spilled, ends after it: it is the one kept
    assert sorted(p.read_text() for p in tmp_path.glob("*.txt")) == ["S" * 500, "r" * 500]


async def test_other_tools_and_small_outputs_pass_straight(tmp_path: Path) -> None:
    spill, app = chained(tmp_path, redact)
    result = await app(post("S" * 500, tool="Write"), "toolu_2", {"signal": None})
    assert stdout(result) == "r" * 500  # not a tool the spill acts on: the app's hook as it was
    _, small = await both(spill, app, post("SS", tool_use_id="toolu_3"))
    assert stdout(small) == "rr" and not list(tmp_path.glob("*.txt"))


@pytest.mark.parametrize("policy", [SpillPolicy(threshold=None), POLICY])
def test_nothing_is_wrapped_without_spill_or_app_post_hooks(tmp_path: Path, policy: SpillPolicy) -> None:
    layers = spill_hooks(tmp_path, policy)
    app = (
        {"PreToolUse": [HookMatcher(hooks=[observe])]}
        if policy.enabled
        else {"PostToolUse": [HookMatcher(hooks=[redact])]}
    )
    ours, theirs = chain_spill(layers, app, policy)
    assert ours == layers and theirs == app


async def test_a_spill_does_not_wait_for_app_hooks_that_cannot_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_chain, "_GRACE", 2 * hang_guard())  # a wait for the app's callback: past the guard
    ours, _ = chain_spill(
        spill_hooks(tmp_path, POLICY),
        {"PostToolUse": [HookMatcher(matcher="Write|Edit", hooks=[redact])]},
        POLICY,
    )
    spill = ours["PostToolUse"][0].hooks[0]
    with anyio.fail_after(hang_guard()):  # no grace for an app callback that the CLI never calls for Bash
        result = await spill(post("S" * 500), "toolu_1", {"signal": None})
    assert stdout(result).startswith("[spilled]")
