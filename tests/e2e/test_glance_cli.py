"""Glance through the real CLI: a git glance runs hardened, and the audit's exploits stay outside.

The workspace is a git repository whose files look changed to git (so that `git status` and `git diff`
would rewrite the index), whose `core.fsmonitor` names a hook that leaves a mark, and which holds a
bare repository `sub/` with a hook of its own. The coordinator's glances must leave all of it as it
was, while the model still reads git's answer and its own command as it wrote it.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from flower import Runtime, coordinator, worker
from flower.testing import ScriptedModel, bash
from tests.facts import fact

pytestmark = pytest.mark.cli

HOOK = '#!/bin/sh\ntouch "$0.RAN"\n'
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def booby_trapped_repository(path: Path) -> list[Path]:
    """A repository whose read-only commands would write or run hooks; returns the hooks' marks."""
    (path / "README").write_text("hello\n")
    git(path, "init", "-q")
    git(path, "add", ".")
    git(path, "commit", "-qm", "first")
    (path / ".git" / "hook").write_text(HOOK)
    (path / ".git" / "hook").chmod(0o755)
    git(path, "config", "core.fsmonitor", ".git/hook")
    git(path, "init", "-q", "--bare", "sub")
    (path / "sub" / "hook").write_text(HOOK)
    (path / "sub" / "hook").chmod(0o755)
    for key, value in (("core.bare", "false"), ("core.worktree", ".."), ("core.fsmonitor", "sub/hook")):
        git(path, "--git-dir", "sub", "config", key, value)
    earlier = time.time() - 1000
    os.utime(path / "README", (earlier, earlier))  # stat-dirty: git refreshes the index when it may
    return [path / ".git" / "hook.RAN", path / "sub" / "hook.RAN"]


async def test_git_glances_run_hardened_and_the_exploits_are_refused(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    marks = booby_trapped_repository(workspace)
    index = workspace / ".git" / "index"
    before = index.stat().st_mtime_ns
    commands = [
        "git status && git diff --stat",
        "git -C sub status",
        "ls {a['$(touch PWNED)']}>/dev/null",
        "echo $HOME['$(touch PWNED)']",
        "cat //dev/zero",
    ]
    scripted_model.script("main", [*(bash(command) for command in commands), "looked"])
    helper = worker("Does anything.", "You do things.", tools=["Bash"])
    spec = coordinator("lead", "Goal: look at the repository.", {"helper": helper}, own_steps=0)

    result = await Runtime(workspace, configure=scripted_model.attach).run(spec, "Look around.")

    assert result.ok, result.error
    last = scripted_model.request("main", -1)
    status, *refused = [view.text for view in last.tool_results]
    assert "On branch" in status and "README" not in status  # git's answer, content unchanged
    assert index.stat().st_mtime_ns == before  # no index refresh
    assert not any(mark.exists() for mark in marks)  # no fsmonitor hook ran
    assert not (workspace / "PWNED").exists()
    for text in refused:
        assert "the coordinator does not run" in text, text
    assert "changes how git runs" in refused[0] and "{name}" in refused[1]
    assert "subscript" in refused[2] and "device" in refused[3]
    sent = [use["input"]["command"] for use in last.tool_uses]
    fact(
        sent == commands,
        "§2 later",
        "a PreToolUse `updatedInput` changes what runs, not the tool_use the model sees in its history",
    )
    git(workspace, "status")  # as typed, the same command rewrites the index and runs the hook
    assert index.stat().st_mtime_ns != before and marks[0].exists()
