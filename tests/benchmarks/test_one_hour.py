"""The benchmark prices a plain run with a 1-hour cache as a replay of its recording with the main thread's
marks at one hour (`benchmarks/suite/replays.py`): the fact that allows it, through the real CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.suite.trace import at_one_hour, cut
from flower._cost import TTL_1H, TTL_5M
from flower.testing import ScriptedModel, bash


def marks(value: Any) -> list[dict[str, Any]]:
    """Every `cache_control` mark of a request body, in order."""
    if isinstance(value, dict):
        own = [value["cache_control"]] if "cache_control" in value else []
        return own + [m for v in value.values() for m in marks(v)]
    if isinstance(value, list):
        return [m for v in value for m in marks(v)]
    return []


async def _run(workspace: Path, env: dict[str, str]) -> list[Any]:
    async with ScriptedModel() as model:
        model.script("main", [bash("echo one"), bash("echo two"), "done"])
        await model.run(
            "Go.",
            cwd=workspace,
            tools=["Bash"],
            allowed_tools=["Bash"],
            system_prompt={"type": "preset", "preset": "claude_code"},
            env=env,
        )
        return model.requests()


async def test_a_one_hour_cache_changes_only_the_main_threads_marks(workspace: Path) -> None:
    auto = await _run(workspace, {})
    hour = await _run(workspace, {"CLAUDE_CODE_PROMPT_CACHE_TTL": "1h"})
    assert len(auto) == len(hour) == 3
    assert all(m == {"type": "ephemeral"} for r in auto for m in marks(r.body))
    assert all(m == {"type": "ephemeral", "ttl": "1h"} for r in hour for m in marks(r.body))
    as_run = [cut(r.body, "main", 10, 0, None) for r in hour]
    replayed = at_one_hour([cut(r.body, "main", 10, 0, None) for r in auto])
    for real, replay in zip(as_run, replayed, strict=True):
        # the same blocks where it prices: each block's size and lifetime (keys hold each run's own ids)
        assert [(b.tokens, b.breakpoint) for b in real.blocks] == [
            (b.tokens, b.breakpoint) for b in replay.blocks
        ]
    assert {b.breakpoint for s in replayed for b in s.blocks} == {None, TTL_1H} != {None, TTL_5M}
