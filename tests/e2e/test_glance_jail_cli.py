"""The glance jail through the real CLI: the wall rewrites a Bash call (`updatedInput`) into the launcher,
the bundled CLI runs it with its own shell, bash or zsh, and the model reads the jailed command's result.

First through a flower coordinator (the real `delegate_guard`): its glances run jailed, their output
reaches the model, a `cd` stays inside the call, and the model's history keeps its own command. Then
with a hook that hands the CLI attacks the parser would refuse, jailed as the wall jails a glance: the
file is not written, a command past the time limit is ended (not moved to the background), a flood is
cut with the note last.

Credentials: with fake values of every credential variable the bundled CLI reads in its environment, a
fake `~/.claude/.credentials.json` (and the other stores) in its home and configuration directories and
a fake token in its own command line, no glance's output carries any of them to the model, whether the
wall refuses the command with its reason or the jail runs it (and, with the parser bypassed, the jail
alone), under bash and zsh. The request log is what the model saw.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import HookMatcher

from flower import Runtime, coordinator, worker
from flower._glance import JailLimits, jail_command, jail_support
from flower.testing import ScriptedModel, bash, hang_guard
from tests.credentials import fake, leaks
from tests.e2e.glance_secrets import SHELLS, _secrets

pytestmark = [
    pytest.mark.cli,
    pytest.mark.skipif(not jail_support().available, reason=f"no glance jail here: {jail_support().reason}"),
]


async def test_a_coordinators_glances_run_in_the_jail(scripted_model: ScriptedModel, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    (workspace / "notes.txt").write_text("one\ntwo\n")
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    commands = ["git status --short && wc -l < notes.txt", "cd sub && pwd", "pwd", "touch made.txt"]
    scripted_model.script("main", [*(bash(command) for command in commands), "looked"])
    helper = worker("Does things.", "You do.", tools=["Bash"])
    spec = coordinator("lead", "Goal: look.", {"helper": helper}, own_steps=0)  # refused, not run outside

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


def _everything_the_model_saw(scripted_model: ScriptedModel) -> str:
    return json.dumps([request.body for request in scripted_model.requests()])


WALL = {  # the model's command: what the wall answers (a refusal's reason) or the jail shows
    "env": "`env` prints the environment, which may hold credentials (API keys, tokens)",
    "printenv AWS_BEARER_TOKEN_BEDROCK": "`printenv` prints the environment",
    "export -p": "prints the environment, which may hold credentials",
    "cat /proc/self/environ": "`cat` would read a process's environment (`/proc/…/environ`)",
    "cat ~/.claude/.credentials.json": "`cat` would read a credential store (`~/.claude`)",
    "cat $HOME/.claude/.credentials.json": "`cat` would read a credential store (`~/.claude`)",
    "cat {config}/.credentials.json": "`cat` would read a file named like credentials (`.credentials.json`)",
    "cat ~/.aws/credentials ~/.netrc": "`cat` would read a credential store (`~/.aws`)",
    "cat /etc/shadow": "`cat` would read a credential store (`/etc/shadow`)",
    "ps aux": "`ps` prints other processes' command lines",
    "cat /proc/*/cmdline": "`cat` would read another process's /proc directory",
    "grep -rn fake- ~": "`grep` would read a tree that holds a credential store (`~/.claude`)",
    "ls -la ~": "`ls -la` would show the size and times of the credential files",  # Landlock lets stat be
    "echo vars: $AWS_SECRET_ACCESS_KEY $GH_TOKEN $CLAUDE_CODE_OAUTH_REFRESH_TOKEN": "vars:",  # runs, empty
    "ls -a ~": "Permission denied",  # runs: the jail reads no home directory
    "git status --short && echo looked": "looked",
}


@pytest.mark.parametrize("shell", SHELLS, ids=os.path.basename)
async def test_no_credential_reaches_the_model_through_a_coordinators_glances(
    scripted_model: ScriptedModel, workspace: Path, tmp_path: Path, shell: str
) -> None:
    env, values = _secrets(scripted_model, tmp_path / "home")
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    commands = [command.replace("{config}", scripted_model.config_dir) for command in WALL]
    scripted_model.script("main", [*(bash(command) for command in commands), "looked"])
    secret = fake("system-prompt")
    spec = coordinator(
        "lead", f"Goal: look. {secret}", {"helper": worker("Does.", "You do.", tools=["Bash"])}, own_steps=0
    )

    def configure(options: Any) -> Any:
        return scripted_model.attach(dataclasses.replace(options, env={**options.env, **env, "SHELL": shell}))

    result = await Runtime(workspace, configure=configure).run(spec, "Look around.")

    assert result.ok, result.error
    assert leaks(_everything_the_model_saw(scripted_model), values) == []
    results = scripted_model.request("main", -1).tool_results
    assert len(results) == len(commands)
    for (command, expected), seen in zip(WALL.items(), results, strict=True):
        assert expected.replace("{config}", scripted_model.config_dir) in seen.text, (command, seen.text)
    assert not any(secret in seen.text for seen in results)  # the CLI's command line holds its prompt
    assert results[-3].text.split() == ["vars:"]  # the variables were not there to print


JAILED = [  # run as given, the parser bypassed: the jail alone keeps the credentials in
    "env; cat /proc/self/environ; echo ran",
    "cat ~/.claude/.credentials.json {config}/.credentials.json ~/.ssh/id_ed25519 ~/.netrc; echo ran",
    "cat /proc/*/cmdline /proc/*/environ; ps auxww; echo ran",
    "grep -r fake- ~ {config} /etc 2>/dev/null; echo ran",
]


@pytest.mark.parametrize("shell", SHELLS, ids=os.path.basename)
def test_the_jail_alone_keeps_credentials_from_the_model(
    scripted_model: ScriptedModel, workspace: Path, tmp_path: Path, shell: str
) -> None:
    """Each command runs twice: in a PID namespace of its own, then as on a machine without one. Two last
    commands run unjailed, as controls: the CLI did hand its environment and the home to the command."""
    env, values = _secrets(scripted_model, tmp_path / "home")
    commands = [command.replace("{config}", scripted_model.config_dir) for command in JAILED]
    commands += [f"{command} # watcher" for command in commands]
    controls = ["printenv GH_TOKEN # control", "cat ~/.claude/.credentials.json # control"]
    scripted_model.script("main", [*(bash(command) for command in [*commands, *controls]), "done"])
    secret = fake("system-prompt")
    seen: list[dict[str, Any]] = []
    jail = _jailing(seen, slow="")  # no command is slow: each gets the hang guard

    async def hook(data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        command = data["tool_input"]["command"]
        if command.endswith("# control"):
            return {}
        answer = await jail(data, tool_use_id, context)
        if command.endswith("# watcher"):
            answer["hookSpecificOutput"]["updatedInput"]["command"] += " --namespaces '0'"
        return answer

    run = scripted_model.run_sync(
        "look around", cwd=workspace, hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[hook])]},
        env={**env, "SHELL": shell}, system_prompt=f"You look. {secret}",
    )  # fmt: skip

    assert run.text == "done"
    jailed = scripted_model.requests("main")[: len(commands) + 1]  # up to the last jailed command's result
    assert leaks(json.dumps([request.body for request in jailed]), values) == []
    results = scripted_model.request("main", -1).tool_results
    assert all(result.text.rstrip().endswith("ran") for result in results[: len(commands)])
    assert not any(secret in result.text for result in results)  # the CLI's own command line
    assert "Permission denied" in results[1].text and "Permission denied" in results[5].text
    assert env["GH_TOKEN"] in results[-2].text and "claudeAiOauth" in results[-1].text  # the controls
