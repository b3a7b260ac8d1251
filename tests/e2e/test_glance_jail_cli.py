"""The glance jail through the real CLI: the wall rewrites a Bash call (`updatedInput`) into the launcher,
the bundled CLI runs it with its own shell, bash or zsh, and the model reads the jailed command's result.

First through a flower coordinator (the real `delegate_guard`): its glances run jailed, their output
reaches the model, a `cd` stays inside the call, and the model's history keeps its own command. Then
with a hook that hands the CLI attacks the parser would refuse, jailed as the wall jails a glance: the
file is not written, a command past the time limit is ended (not moved to the background), a flood is
cut with the note last.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import HookMatcher

from flower import Runtime, coordinator, worker
from flower.glance import JailLimits, jail_command, jail_support
from flower.testing import ScriptedModel, bash, hang_guard

pytestmark = [
    pytest.mark.cli,
    pytest.mark.skipif(not jail_support().available, reason=f"no glance jail here: {jail_support().reason}"),
]
SHELLS = [path for path in ("/bin/bash", shutil.which("zsh")) if path and os.access(path, os.X_OK)]


async def test_a_coordinators_glances_run_in_the_jail(scripted_model: ScriptedModel, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    (workspace / "notes.txt").write_text("one\ntwo\n")
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    commands = ["git status --short && wc -l < notes.txt", "cd sub && pwd", "pwd", "touch made.txt"]
    scripted_model.script("main", [*(bash(command) for command in commands), "looked"])
    spec = coordinator("lead", "Goal: look.", {"helper": worker("Does things.", "You do.", tools=["Bash"])})

    result = await Runtime(workspace, configure=scripted_model.attach).run(spec, "Look around.")

    assert result.ok, result.error
    last = scripted_model.request("main", -1)
    status, cd, pwd, touch = [view.text for view in last.tool_results]
    assert "?? notes.txt" in status and "2" in status.split()  # git and wc ran, in the jail
    assert cd.strip() == str((workspace / "sub").resolve())
    assert pwd.strip() == str(workspace.resolve())  # the `cd` stayed inside its call
    assert "the coordinator does not run" in touch and not (workspace / "made.txt").exists()
    history = str(last.body["messages"])
    assert "git status --short" in history and "run.py" not in history  # the model keeps its command


def _jailing(seen: list[dict[str, Any]], slow: str) -> Any:
    """A PreToolUse hook that jails every Bash call, whatever it is, as the wall jails a glance: the `slow`
    one with a wall time of 3 s, which it outlasts by far, the others with the hang guard's (no machine is
    too slow for them)."""

    async def hook(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen.append(data)
        tool_input = data["tool_input"]
        wall = 3 if tool_input["command"] == slow else hang_guard()
        command = jail_command(tool_input["command"], limits=JailLimits(wall_seconds=wall))
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "updatedInput": {**tool_input, "command": command},
            }
        }

    return hook


@pytest.mark.parametrize("shell", SHELLS, ids=os.path.basename)
def test_attacks_handed_to_the_cli_have_no_effect(
    scripted_model: ScriptedModel, workspace: Path, shell: str
) -> None:
    commands = [
        "touch made.txt && echo made",
        "echo $0 ${ZSH_VERSION:-bash}",
        "python3 -c 'import time; time.sleep(30)'; echo after",
        "yes",
    ]
    scripted_model.script("main", [*(bash(command) for command in commands), "done"])
    seen: list[dict[str, Any]] = []
    hooks = {"PreToolUse": [HookMatcher(matcher="Bash", hooks=[_jailing(seen, commands[2])])]}

    run = scripted_model.run_sync("look around", cwd=workspace, hooks=hooks, env={"SHELL": shell})

    assert run.text == "done"
    assert [data["tool_input"]["command"] for data in seen] == commands
    touch, which, sleep, flood = [scripted_model.request("main", i).tool_results[-1] for i in range(1, 5)]
    assert "Permission denied" in touch.text and not (workspace / "made.txt").exists()
    assert os.path.basename(shell) in which.text  # the jail ran the CLI's own shell
    assert sleep.is_error and "[glance: stopped after 3 s" in sleep.text and "background" not in sleep.text
    assert flood.is_error and flood.text.rstrip().endswith(
        "[glance: output cut at 24,000 bytes and the command stopped: narrow it or delegate it]"
    )
