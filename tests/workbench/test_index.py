"""index_guard on plain hook inputs: a write inside the workbench refreshes the index, nothing else does."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from flower._errors import SpecError
from flower._workbench import INDEX_MATCHER, Workbench, index_guard, index_hooks
from tests import shapes


@pytest.fixture
def wb(tmp_path: Path) -> Workbench:
    ws = tmp_path / "ws"
    ws.mkdir()
    return Workbench(ws).ensure()


def write_input(path: str, cwd: str, tool: str = "Write") -> dict[str, Any]:
    response: dict[str, Any] = {
        "type": "create",
        "filePath": path,
        "content": "x",
        "structuredPatch": [],
        "originalFile": None,
    }
    return shapes.post_tool_use(tool, response, {"file_path": path, "content": "x"}, cwd=cwd)


async def call(hook: Any, data: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = await hook(data, data.get("tool_use_id"), {"signal": None})
    return result


async def test_a_write_inside_the_workbench_refreshes_the_index(wb: Workbench) -> None:
    script = wb.scripts / "count.py"
    script.write_text("# desc: Count lines per file\n")
    assert await call(index_guard(wb), write_input(str(script), str(wb.workspace))) == {}
    assert "Count lines per file" in wb.index_path.read_text()


async def test_a_relative_path_is_taken_from_the_hook_cwd(wb: Workbench) -> None:
    (wb.notes / "n.md").write_text("# A decision\n")
    await call(index_guard(wb), write_input(".flower/notes/n.md", str(wb.workspace), tool="Edit"))
    assert "A decision" in wb.index_path.read_text()


@pytest.mark.parametrize("where", ["src/a.py", ".flower-old/scripts/a.py", ".flower/scripts/../../a.py"])
async def test_a_write_elsewhere_does_not_refresh(wb: Workbench, where: str) -> None:
    target = wb.workspace / where
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("x")
    assert await call(index_guard(wb), write_input(str(target), str(wb.workspace))) == {}
    assert not wb.index_path.exists()


async def test_other_events_and_odd_inputs_pass(wb: Workbench) -> None:
    hook = index_guard(wb)
    pre = {**write_input(str(wb.scripts / "a.py"), str(wb.workspace)), "hook_event_name": "PreToolUse"}
    assert await call(hook, pre) == {}
    assert await call(hook, shapes.post_tool_use("Write", {}, {"file_path": 42})) == {}
    assert await call(hook, {**shapes.post_tool_use("Write", {}), "tool_input": None}) == {}
    assert not wb.index_path.exists()


async def test_a_failed_refresh_is_logged_not_raised(wb: Workbench, caplog: pytest.LogCaptureFixture) -> None:
    wb.scripts.rmdir()
    wb.scripts.write_text("a file where the directory should be")
    with caplog.at_level(logging.WARNING, logger="flower.index"):
        assert await call(index_guard(wb), write_input(str(wb.notes / "n.md"), str(wb.workspace))) == {}
    assert "could not refresh" in caplog.text


def test_index_guard_needs_a_workbench() -> None:
    with pytest.raises(SpecError):
        index_guard("not a workbench")  # type: ignore[arg-type]


def test_index_hooks_matcher(wb: Workbench) -> None:
    (matcher,) = index_hooks(wb)["PostToolUse"]
    assert matcher.matcher == INDEX_MATCHER == "Write|Edit" and len(matcher.hooks) == 1
