"""Spill and index through the real CLI: what the model saw is the proof.

A replacement the CLI silently ignores (wrong shape, as measured) leaves the original body in the next
request, so every test here looks at the next request, and at the transcript for the CLI's only trace
of an ignored replacement (a `hook_error_during_execution` attachment).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import AgentDefinition, HookMatcher

from flower._options import merge_hooks
from flower._spill import SpillPolicy, spill_hooks
from flower._workbench import Workbench, index_hooks
from flower.testing import ScriptedModel, ToolUse, Usage, agent, bash, read, reply, tool_use
from flower.testing._requests import RecordedRequest
from tests.e2e.spill_pointers import POINTER, pointer_path
from tests.facts import fact

pytestmark = pytest.mark.cli


def ignored_replacements(model: ScriptedModel) -> list[str]:
    """The CLI's trace of an updatedToolOutput it rejected (never sent to the model)."""
    found = []
    for transcript in Path(model.config_dir).rglob("*.jsonl"):
        found += [
            line for line in transcript.read_text().splitlines() if "hook_error_during_execution" in line
        ]
    return found


def worker(tools: list[str]) -> dict[str, AgentDefinition]:
    return {
        "worker": AgentDefinition(
            description="Runs commands", prompt="You run commands.", tools=tools, model="inherit"
        )
    }


async def test_a_worker_bash_of_50000_chars_is_spilled_and_read_back(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    wb = Workbench(workspace)
    body = "x" * 50_000

    def read_the_spill(request: RecordedRequest) -> ToolUse:
        return read(str(pointer_path(request.tool_results[-1].text)))

    scripted_model.script("main", [agent("worker", "Print the big thing.", background=False), "done"])
    scripted_model.script("worker", [bash("python3 -c 'print(\"x\"*50000)'"), read_the_spill, "WORKER DONE"])

    await scripted_model.run("Go", cwd=workspace, agents=worker(["Bash", "Read"]), hooks=spill_hooks(wb))

    seen = scripted_model.request("worker", 1)
    (result,) = seen.tool_results
    assert body[:5000] not in seen, "the body must not reach the worker's next request"
    assert result.text.startswith("[spilled] Bash stdout: 50,001 chars moved out of the conversation to ")
    head, omitted, tail = result.text.split("\n")[1:4]
    assert head == "x" * 300 and omitted == "[... 49,601 chars not shown ...]" and tail.startswith("x" * 99)
    assert len(result.text) < 700
    path = pointer_path(result.text)
    assert path.parent == wb.spill
    assert path.read_bytes() == (body + "\n").encode(), "the spill file holds the exact bytes"
    fact(
        "persisted-output" not in result.text,
        "§2",
        "dropping Bash's optional persistedOutput* keys is accepted",
    )

    reread = scripted_model.request("worker", 2).tool_results[-1]
    assert reread.tool_name == "Read" and "[spilled]" not in reread.text
    assert reread.text.count("x") >= 50_000, "a Read of a spilled file passes through whole"
    assert body[:5000] not in scripted_model.request("main", 1)
    assert ignored_replacements(scripted_model) == []


async def test_each_tool_replacement_reaches_the_model(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    wb = Workbench(workspace)
    rows = "".join(f"row {i:04d} needle " + "v" * 60 + "\n" for i in range(150))  # 11,250 chars
    (workspace / "data.txt").write_text(rows)
    for i in range(90):
        (workspace / f"part_{i:03d}_{'n' * 50}.txt").write_text("needle\n")
    steps = [
        bash("python3 -c 'print(\"b\"*9000)'"),
        read(str(workspace / "data.txt")),
        tool_use("Grep", pattern="needle", path=str(workspace / "data.txt"), output_mode="content"),
        tool_use("Grep", pattern="needle", path=str(workspace), glob="part_*"),
        tool_use("Glob", pattern="part_*.txt", path=str(workspace)),
    ]
    scripted_model.script("main", [*steps, "done"])
    policy = SpillPolicy(lists="strings")

    await scripted_model.run(
        "Go", cwd=workspace, tools=["Bash", "Read", "Grep", "Glob"], hooks=spill_hooks(wb, policy)
    )

    last = scripted_model.request("main", len(steps))
    results = {r.tool_use_id: r for r in last.tool_results}
    expected = [("Bash", "stdout", "b" * 1000), ("Read", "file.content", rows[2000:3000])]
    expected += [("Grep", "content", "row 0100 needle"), ("Grep", "filenames", f"part_080_{'n' * 50}.txt")]
    expected += [("Glob", "filenames", f"part_080_{'n' * 50}.txt")]
    for index, (tool, field, body) in enumerate(expected):
        result = results[last.tool_uses[index]["id"]]
        found = POINTER.search(result.text)
        assert found and found.group(1) == tool and found.group(2) == field, f"{tool}: {result.text[:300]!r}"
        assert body not in result.text, f"{tool} {field}: the body reached the model"
        assert result.text.count("part_") < 10 and result.text.count("row ") < 10
        assert len(result.text) < 1200
        assert body in pointer_path(result.text).read_text()
    assert ignored_replacements(scripted_model) == []


async def test_a_spilled_read_keeps_the_files_line_numbers_and_its_quoted_path_reads_back(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    """The CLI numbers a Read's lines itself: the preview's numbers are the file's, the spill's path (under
    a directory with a space) is quoted, and a model that takes it from between the backticks reads it."""
    project = workspace / "my project"
    project.mkdir()
    wb = Workbench(project)
    rows = "".join(f"row {i:04d} " + "v" * 60 + "\n" for i in range(1, 301))  # line i holds `row i`
    (project / "data.txt").write_text(rows)
    offset = 100

    def read_back(request: RecordedRequest) -> ToolUse:
        (whole_file,) = [r for r in request.tool_results if "Line 1 of that file" not in r.text]
        return read(whole_file.text.split("`")[1])  # what a model does with a quoted path

    steps = [
        read(str(project / "data.txt")),
        tool_use("Read", file_path=str(project / "data.txt"), offset=offset),
    ]
    scripted_model.script("main", [*steps, read_back, "done"])

    await scripted_model.run("Go", cwd=project, tools=["Read"], hooks=spill_hooks(wb))

    for index, first in ((1, 1), (2, offset)):
        shown = scripted_model.request("main", index).tool_results[-1].text
        numbered = [line.split("\t", 1) for line in shown.splitlines()]
        assert numbered[0][0] == str(first - 1) and numbered[0][1].startswith("[spilled] Read file.content")
        assert f"Lines {first}-{first + 3} of the file follow." in numbered[0][1]
        assert [n for n, _ in numbered[1:]] == [str(first + k) for k in range(4)]
        assert all(text.startswith(f"row {int(n):04d} ") for n, text in numbered[1:])  # true to the file
        assert "row 0300" not in shown  # no tail: it could not keep its numbers
        assert "/my project/.flower/spill/" in shown
        assert (f"Line 1 of that file is line {offset} of this one." in shown) == (first == offset)
    whole = scripted_model.request("main", 3).tool_results[-1]
    assert whole.tool_name == "Read" and "[spilled]" not in whole.text and "row 0300" in whole.text
    assert "300\trow 0300" in whole.text  # the spill of a whole-file Read keeps its numbers too
    assert ignored_replacements(scripted_model) == []


async def test_a_failed_spill_keeps_the_original_output(
    scripted_model: ScriptedModel, workspace: Path, tmp_path: Path
) -> None:
    wb = Workbench(workspace)
    outside = tmp_path / "outside"
    outside.mkdir()
    wb.root.mkdir()
    wb.spill.symlink_to(outside, target_is_directory=True)
    scripted_model.script("main", [bash("python3 -c 'print(\"k\"*6000)'"), "done"])

    await scripted_model.run("Go", cwd=workspace, tools=["Bash"], hooks=spill_hooks(wb))

    (result,) = scripted_model.request("main", 1).tool_results
    assert result.text == "k" * 6000
    assert list(outside.iterdir()) == []


async def test_a_failing_command_is_cut_by_the_cli_and_no_hook_can_rewrite_it(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    """Why spill leaves failing commands alone: a known limit, asserted so an upgrade that lifts it shows.

    A Bash call that exits non-zero fires PostToolUseFailure, not PostToolUse. The CLI cuts its output
    to about 10,000 chars (head and tail) itself, and ignores `updatedToolOutput` from that event.
    """
    seen: list[str] = []

    async def rewrite(data: Any, tool_use_id: str | None, context: Any) -> Any:
        seen.append(data["hook_event_name"])
        output = {"hookEventName": "PostToolUseFailure", "updatedToolOutput": "REWRITTEN"}
        return {"hookSpecificOutput": output}

    hooks = merge_hooks(
        spill_hooks(Workbench(workspace)), {"PostToolUseFailure": [HookMatcher(hooks=[rewrite])]}
    )
    scripted_model.script("main", [bash("python3 -c 'print(\"f\" * 60000); exit(3)'"), "done"])

    await scripted_model.run("Go", cwd=workspace, tools=["Bash"], hooks=hooks)

    (result,) = scripted_model.request("main", 1).tool_results
    fact(seen == ["PostToolUseFailure"], "§2", "a failing Bash fires PostToolUseFailure, not PostToolUse")
    fact("REWRITTEN" not in result.text, "§2", "PostToolUseFailure cannot rewrite the output")
    fact(
        result.text.startswith("Exit code 3\n") and 9_000 < len(result.text) < 11_000,
        "§2",
        "the CLI cuts a failing command's output to about 10,000 chars",
    )


async def test_the_index_reaches_the_coordinator_and_follows_a_worker_write(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    wb = Workbench(workspace).ensure()
    (wb.scripts / "count.py").write_text("# desc: Count lines per file\n")
    block = wb.prompt_block()
    new_script = wb.scripts / "sizes.sh"
    write = tool_use("Write", file_path=str(new_script), content="# desc: Sizes of data dirs\ndu -sh data\n")
    scripted_model.script("main", [agent("worker", "Write the sizes script.", background=False), "done"])
    scripted_model.script("worker", [write, "WROTE"])

    first = await scripted_model.run(
        "Measure the size of data/.",
        cwd=workspace,
        system_prompt=_preset(f"You coordinate.\n\n{block}"),
        agents=worker(["Write"]),
        hooks=index_hooks(wb),
    )

    assert "- `scripts/count.py` — Count lines per file" in scripted_model.request("main", 0).system_text
    assert "scripts/count.py" not in scripted_model.request("worker", 0), "the block does not reach subagents"
    assert "- `scripts/sizes.sh` — Sizes of data dirs" in wb.index_path.read_text(), (
        "index_guard refreshed it"
    )

    scripted_model.script("main", ["resumed"])
    prompt = wb.preface("Continue.", since=block)
    await scripted_model.run(
        prompt, cwd=workspace, system_prompt=_preset("ignored on resume"), resume=first.session_id
    )
    resumed = scripted_model.request("main", -1)
    assert "- `scripts/sizes.sh` — Sizes of data dirs" in resumed.last_user_text
    assert wb.preface("Again.", since=wb.prompt_block()) == "Again."


async def test_a_resume_keeps_the_system_prompt_the_session_started_with(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    """The placement of the workbench block rests on this (docs/workbench.md)."""
    scripted_model.script("main", [bash("echo one"), "done"])
    first = await scripted_model.run("Go", cwd=workspace, system_prompt=_preset("BLOCK-AT-START"))
    before = scripted_model.request("main", -1)
    scripted_model.script("main", ["resumed"])

    await scripted_model.run(
        "Continue", cwd=workspace, system_prompt=_preset("BLOCK-CHANGED"), resume=first.session_id
    )

    after = scripted_model.request("main", -1)
    fact(
        "BLOCK-AT-START" in after.system_text and "BLOCK-CHANGED" not in after,
        "§6 (new)",
        "on resume the CLI replays the session's system prompt (prompt_snapshot) and ignores a new append",
    )
    assert after.body["system"] == before.body["system"] or after.system_text == before.system_text


async def test_compaction_keeps_the_system_prompt_but_not_the_first_message(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script(
        "main",
        [
            reply(bash("echo one"), usage=Usage(input_tokens=3_000, output_tokens=10)),
            reply(bash("echo two"), usage=Usage(input_tokens=980_000, output_tokens=10)),
            "after compaction",
        ],
    )
    scripted_model.script("compact", ["<analysis>a</analysis>\n<summary>SUMMARY</summary>"])

    await scripted_model.run("FIRST-MESSAGE-BLOCK Go", cwd=workspace, system_prompt=_preset("SYSTEM-BLOCK"))

    assert [r.caller for r in scripted_model.requests()] == ["main", "main", "compact", "main"]
    last = scripted_model.request("main", -1)
    assert "SYSTEM-BLOCK" in last.system_text
    assert "FIRST-MESSAGE-BLOCK" not in last


def _preset(append: str) -> dict[str, str]:
    return {"type": "preset", "preset": "claude_code", "append": append}
