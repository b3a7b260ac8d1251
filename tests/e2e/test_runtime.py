"""The Runtime through the real CLI: the delegation wall, glance, workers, events, clean shutdown."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from claude_agent_sdk import HookMatcher

from flower import (
    COORDINATOR_PROMPT,
    CredentialsError,
    FailureReason,
    PruningSessionStore,
    Runtime,
    SpecError,
    StepResult,
    TrimmingSessionStore,
    coordinator,
    worker,
)
from flower.events import (
    Result,
    SubagentFinished,
    SubagentStarted,
    TaskFinished,
    TaskStarted,
    ToolCall,
    ToolResult,
)
from flower.testing import ScriptedModel, agent, bash, hang_guard, reply, tool_use
from tests.e2e.processes import cli_processes
from tests.facts import fact

pytestmark = pytest.mark.cli

ANALYST = worker(
    "Analyse files: counts, searches, comparisons. Give it any job that reads files or runs commands.",
    "You do text analysis. Use the command line; never estimate by hand.",
    tools=["Read", "Write", "Bash", "Glob", "Grep"],
)


def lead(**kwargs) -> object:  # type: ignore[no-untyped-def]
    return coordinator("主控", "Goal: measure the size of data/.", {"分析员": ANALYST}, **kwargs)


def git_repo(path: Path) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "first"]):
        subprocess.run(["git", *args], cwd=path, check=True, env=env)


async def test_the_seed_example_end_to_end(scripted_model: ScriptedModel, workspace: Path) -> None:
    (workspace / "data").mkdir()
    (workspace / "data" / "a.txt").write_text("x\n" * 10)
    scripted_model.script("main", [agent("分析员", "Count the lines under data/."), "data/ holds 10 lines."])
    scripted_model.script("分析员", [bash("wc -l data/*.txt"), "10 lines in data/a.txt"])
    events: list[object] = []

    result = await Runtime(workspace, configure=scripted_model.attach).run(
        lead(), "Start.", on_event=events.append
    )

    assert result.ok and result.text == "data/ holds 10 lines." and result.error is None
    assert result.reason is None
    assert result.session_id and result.num_turns >= 2 and result.peak_context > 0
    assert scripted_model.callers() == ["main", "分析员"]
    assert "10 lines in data/a.txt" in scripted_model.request("main", 1).tool_results[0].text
    started = [e for e in events if isinstance(e, SubagentStarted)]
    finished = [e for e in events if isinstance(e, SubagentFinished)]
    assert [e.agent for e in started] == ["分析员"] and [e.agent for e in finished] == ["分析员"]
    assert any(isinstance(e, ToolCall) and e.agent == "分析员" and e.name == "Bash" for e in events)
    system = scripted_model.request("main", 0).system_text
    assert system.count(COORDINATOR_PROMPT) == 1 and "You are Claude Code" not in system  # flower's, lean
    assert "Goal: measure the size of data/." in system and "Workbench" in system
    worker_system = scripted_model.request("分析员", 0).system_text
    fact(
        "You are Claude Code" not in worker_system and len(worker_system) < 5_000,
        "§1",
        "the CLI gives a subagent no claude_code preset: its agent prompt and a short frame",
    )


async def test_a_command_in_the_background_is_a_task_not_a_subagent(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    """A Bash command the CLI runs in the background is a task of its own (`TaskStarted`, `TaskFinished`),
    which the run waits for; only the Agent tool starts subagents."""
    go = workspace / "go"
    command = f"while [ ! -e {go} ]; do sleep 0.1; done; echo slow"  # it ends once the turn has ended
    job = tool_use("Bash", command=command, run_in_background=True, description="a slow job")
    scripted_model.script("main", [job, "Started it.", "The job printed slow."])
    events: list[object] = []

    def on_event(event: object) -> None:
        events.append(event)
        if isinstance(event, Result):
            go.touch()

    steps = worker("Runs steps.", "You run the steps.", tools=["Bash"])
    result = await Runtime(workspace, configure=scripted_model.attach).run(steps, "Go.", on_event=on_event)

    assert result.ok and result.text == "The job printed slow.", result.error
    assert not [e for e in events if isinstance(e, SubagentStarted | SubagentFinished)]
    (started,) = [e for e in events if isinstance(e, TaskStarted)]
    (finished,) = [e for e in events if isinstance(e, TaskFinished)]
    assert (started.agent, started.kind, started.description) == (None, "local_bash", "a slow job")
    assert started.tool_use_id == scripted_model.request("main", 1).tool_uses[0]["id"]
    assert (finished.task_id, finished.status) == (started.task_id, "completed")
    assert "a slow job" in finished.summary


async def test_the_wall_refuses_hands_on_tools_with_a_guiding_reason(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    target = workspace / "written.txt"
    existing = workspace / "existing.txt"
    existing.write_text("x")
    scripted_model.script(
        "main",
        [
            reply(
                tool_use("Write", file_path=str(target), content="x"),
                tool_use("Edit", file_path=str(existing), old_string="x", new_string="y"),
                bash("rm -rf data && echo gone"),
            ),
            "ok, delegating instead",
        ],
    )

    editor = worker("Edits files.", "You edit files.", tools=["Read", "Edit", "Write"])
    spec = coordinator("主控", "Goal: tidy up.", {"分析员": ANALYST, "editor": editor}, own_steps=0)

    result = await Runtime(workspace, configure=scripted_model.attach).run(spec, "Start.")

    assert not target.exists() and existing.read_text() == "x"
    refusals = scripted_model.request("main", 1).tool_results
    assert [r.tool_name for r in refusals] == ["Write", "Edit", "Bash"]
    artifacts = str(workspace.resolve() / ".flower" / "artifacts")
    for refusal in refusals:
        fact(
            refusal.is_error and "hook error" in refusal.text,
            "§2",
            f"a PreToolUse deny reaches the model as an error result: {refusal}",
        )
        assert "Delegate it: call the Agent tool" in refusal.text and artifacts in refusal.text
    assert "`rm` is not a read-only command" in refusals[2].text
    assert sorted(result.denials) == ["Bash", "Edit", "Write"]


async def test_a_specs_own_denial_and_the_walls_both_reach_the_model(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    async def no_secrets(data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        if "secret" not in str(data.get("tool_input")):
            return {}
        decision = {"permissionDecision": "deny", "permissionDecisionReason": "OWN-POLICY: no secrets"}
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", **decision}}

    scripted_model.script(
        "main", [tool_use("Write", file_path=str(workspace / "s.txt"), content="secret"), "ok"]
    )
    spec = coordinator(
        "lead",
        "Go.",
        {"分析员": ANALYST},
        hooks={"PreToolUse": [HookMatcher(matcher=None, hooks=[no_secrets])]},
        own_steps=0,
    )
    result = await Runtime(workspace, configure=scripted_model.attach).run(spec, "Start.")
    assert result.ok, result.error
    (refusal,) = scripted_model.request("main", -1).tool_results
    assert (
        "OWN-POLICY: no secrets" in refusal.text
        and "flower: the coordinator does not use Write" in refusal.text
    )


async def test_glance_runs_a_read_only_compound_on_the_main_thread(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "README").write_text("hello\n")
    git_repo(workspace)
    command = 'git status -s && echo "--- LOG ---" && git log --oneline -3'
    scripted_model.script("main", [bash(command), "looked"])

    result = await Runtime(workspace, configure=scripted_model.attach).run(lead(), "Look around.")

    (looked,) = scripted_model.request("main", 1).tool_results
    assert not looked.is_error and "--- LOG ---" in looked.text and "first" in looked.text
    assert result.ok and result.denials == ()


async def test_a_workers_bash_runs(scripted_model: ScriptedModel, workspace: Path) -> None:
    scripted_model.script("main", [agent("分析员", "Create out.txt."), "done"])
    scripted_model.script(
        "分析员", [bash("echo made-by-worker > out.txt && git init -q sub"), "out.txt written"]
    )

    result = await Runtime(workspace, configure=scripted_model.attach).run(lead(), "Go.")

    assert result.ok
    assert (workspace / "out.txt").read_text() == "made-by-worker\n"
    assert scripted_model.request("分析员", 1).tool_results[0].is_error is False


async def test_background_subagents_are_waited_for(scripted_model: ScriptedModel, workspace: Path) -> None:
    scripted_model.script("main", [agent("分析员", "Count.", background=True), "waiting", "final answer"])

    waiting = threading.Event()

    async def once_the_main_thread_waits(request: object) -> str:
        while not waiting.is_set():  # the worker reports after the main thread's turn ended, however slow
            await anyio.sleep(0.01)
        return "REPORT"

    def on_event(event: object) -> None:
        if isinstance(event, Result) and event.agent is None:
            waiting.set()

    scripted_model.script("分析员", [once_the_main_thread_waits])

    result = await Runtime(workspace, configure=scripted_model.attach).run(lead(), "Go.", on_event=on_event)

    assert result.ok and result.results == 2 and result.text == "final answer"


async def test_an_error_result_is_a_failed_step_not_an_exception(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    from flower.testing import http_error

    scripted_model.script("main", [http_error(500), http_error(500)])
    rt = Runtime(workspace, env={"CLAUDE_CODE_MAX_RETRIES": "1"}, configure=scripted_model.attach)

    result = await rt.run(lead(), "Go.")

    assert not result.ok and "API Error: 500" in (result.error or "") and result.text == ""
    assert result.reason is FailureReason.API_ERROR
    assert rt.results == [result]


async def test_no_cli_is_left_after_an_exception_or_a_cancellation(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    never = hang_guard()  # replies held until the test is over
    scripted_model.script("main", [reply("never seen", delay=never), reply("never seen either", delay=never)])
    rt = Runtime(workspace, configure=scripted_model.attach)

    class Abort(BaseException):
        """Not an Exception: the event-callback guard lets it through, as it would a bug in the loop."""

    def explode(event: object) -> None:
        raise Abort

    async with anyio.create_task_group() as group:  # cancellation while the CLI waits on the model
        group.start_soon(rt.run, lead(), "Go.")
        await scripted_model.wait_for(1, caller="main")
        group.cancel_scope.cancel()
    assert cli_processes() == []

    scripted_model.script("main", [bash("echo hi"), reply("never seen", delay=never)])
    with pytest.raises(Abort):
        await rt.run(lead(), "Go.", on_event=explode)
    assert cli_processes() == []
    scripted_model.script("main", [])  # the delayed replies were never delivered; nothing is left to check


async def test_the_store_is_closed_when_the_last_run_ends(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", ["fine"])
    key = {"project_key": "p", "session_id": "s"}
    async with Runtime(workspace, configure=scripted_model.attach) as rt:
        database = rt.store.inner._db  # type: ignore[attr-defined]
        assert (await rt.run(lead(), "Go.")).ok
        assert database._conn is None  # closed by the end of the run: nothing left for Python 3.13 to warn of
        assert await rt.store.load(key) is None and database._conn is not None  # reopened on use
    assert database._conn is None  # closed by the end of the block

    ended: list[str] = []
    release = anyio.Event()

    async def execute(spec: object, prompt: str, *args: object) -> StepResult:
        await rt.store.load(key)  # each run uses the store
        if prompt == "long":
            await release.wait()
        ended.append(prompt)
        return StepResult(session_id=None, ok=True, text=prompt)

    rt._execute = execute  # type: ignore[method-assign]  # two runs at once, the second ending first
    async with anyio.create_task_group() as tg:
        tg.start_soon(rt.run, lead(), "long")
        await rt.run(lead(), "short")
        assert ended == ["short"] and database._conn is not None  # the long run still holds it open
        release.set()
    assert ended == ["short", "long"] and database._conn is None


async def test_a_broken_event_callback_does_not_break_the_run(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", ["fine"])

    def broken(event: object) -> None:
        raise ValueError("UI bug")

    result = await Runtime(workspace, configure=scripted_model.attach).run(lead(), "Go.", on_event=broken)

    assert result.ok and result.text == "fine"


async def test_tool_results_are_streamed(scripted_model: ScriptedModel, workspace: Path) -> None:
    scripted_model.script("main", [bash("echo visible"), "ok"])
    events: list[object] = []

    await Runtime(workspace, configure=scripted_model.attach).run(lead(), "Go.", on_event=events.append)

    (result,) = [e for e in events if isinstance(e, ToolResult)]
    assert result.text == "visible" and result.agent is None


def test_clear_errors_for_bad_input(workspace: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    a_file = workspace / "file.txt"
    a_file.write_text("x")
    with pytest.raises(SpecError, match="not a directory"):
        Runtime(a_file).run_sync(lead(), "Go.")
    with pytest.raises(SpecError, match=r"workspace .*missing does not exist: create it"):
        Runtime(workspace / "missing")  # refused when made (a stat), not when it runs
    with pytest.raises(SpecError, match="prompt"):
        Runtime(workspace).run_sync(lead(), "  ")
    with pytest.raises(SpecError, match="resume must be a str or None"):
        Runtime(workspace).run_sync(lead(), "Go.", resume=42)  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="fork=True needs resume"):
        Runtime(workspace, check_credentials=False).options(lead(), fork=True)
    with pytest.raises(SpecError, match="AgentSpec"):
        Runtime(workspace).run_sync("lead", "Go.")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="report_limit must be a positive int, 0 or None"):
        Runtime(workspace, report_limit=-1)
    for layered in (
        PruningSessionStore(tmp_path / "s.db"),
        TrimmingSessionStore(tmp_path / "s.db", trim=False),
    ):
        with pytest.raises(
            SpecError, match=r"Runtime: store is already a flower layer-4 store .*store\.inner"
        ):
            Runtime(workspace, store=layered)
    assert Runtime(workspace, store=PruningSessionStore(tmp_path / "s.db").inner).store.inner is not None
    for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "empty-config"))
    with pytest.raises(CredentialsError, match="ANTHROPIC_API_KEY"):
        Runtime(workspace).run_sync(lead(), "Go.")
