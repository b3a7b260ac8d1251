"""docs/interrupting.md, claim by claim, through the real CLI: what each way of stopping a run leaves behind.

- a cancelled `run()` (what Ctrl-C does to a script): no CLI left, the workbench's files kept, the session
  found in the store and resumed from it;
- a SIGINT that reaches the CLI alone: a failed step with its session id, the whole turn in the store;
- `ClaudeSDKClient.interrupt()` on instrumented options: the client goes on, the store keeps every turn;
- Ctrl-C on `flower demo` (SIGINT to its process group): "interrupted", status 130, no CLI left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from claude_agent_sdk import ClaudeSDKClient, ResultMessage, list_sessions_from_store
from claude_agent_sdk._internal.sessions import project_key_for_directory

from flower import FailureReason, Runtime, coordinator, instrument, worker
from flower.events import Event, ToolResult
from flower.testing import ScriptedModel, bash, hang_guard, reply
from tests.e2e.processes import cli_processes

pytestmark = pytest.mark.cli

LEAD = coordinator("lead", "Answer the user.", {"helper": worker("Runs commands.", "You run commands.")})


async def test_a_cancelled_run_leaves_no_cli_and_resumes_from_the_store(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    (workspace / "big.txt").write_text("line of a big file\n" * 400)
    scripted_model.script("main", [bash("cat big.txt"), reply("never sent", delay=hang_guard())])
    rt = Runtime(workspace, configure=scripted_model.attach)

    with anyio.CancelScope() as scope:  # a KeyboardInterrupt in run_sync cancels the run the same way

        def on_event(event: Event) -> None:
            if isinstance(event, ToolResult):
                scope.cancel()

        await rt.run(LEAD, "Survey the big file.", on_event=on_event)

    assert scope.cancelled_caught and cli_processes() == []
    assert (
        len(list((workspace / ".flower" / "spill").glob("*-bash.txt"))) == 1
    )  # the workbench keeps its spill

    latest = (await list_sessions_from_store(rt.store.inner, directory=str(rt.workspace), limit=1))[0]
    scripted_model.script("main", ["Resumed."])
    result = await rt.run(LEAD, "Go on.", resume=latest.session_id)

    assert result.ok and result.session_id == latest.session_id
    assert "Survey the big file." in scripted_model.request("main", -1)  # the interrupted run's prompt


# where the signal finds the CLI decides which (measured with a coordinator: the first on an idle machine,
# sometimes the second on a busy one)
ENDED_BY_SIGINT = {
    "the CLI ended without a result": FailureReason.CLI_FAILED,
    "the CLI ended with an error result (error_during_execution)": FailureReason.INTERRUPTED,
}


async def test_a_sigint_to_the_cli_alone_fails_the_step_and_keeps_the_turn(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", [bash("echo FIRST-OUTPUT"), reply("never sent", delay=hang_guard())])
    rt = Runtime(workspace, configure=scripted_model.attach)

    def on_event(event: Event) -> None:
        if isinstance(event, ToolResult):
            for pid in cli_processes():
                os.kill(pid, signal.SIGINT)

    result = await rt.run(LEAD, "Go.", on_event=on_event)

    assert not result.ok and result.error in ENDED_BY_SIGINT and result.session_id, result.error
    assert result.reason is ENDED_BY_SIGINT[result.error]
    scripted_model.script("main", ["Resumed."])
    again = await rt.run(LEAD, "Go on.", resume=result.session_id)
    assert again.ok and "FIRST-OUTPUT" in scripted_model.request("main", -1)  # the whole turn was stored


async def test_a_client_interrupt_stops_the_turn_and_the_store_keeps_every_turn(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script(
        "main", [bash("echo FIRST-OUTPUT"), reply("never sent", delay=hang_guard()), "Second answer."]
    )
    options = scripted_model.attach(instrument(scripted_model.options(cwd=workspace), workspace=workspace))
    results: list[ResultMessage] = []
    async with ClaudeSDKClient(options) as client:
        await client.query("Go.")
        async for message in client.receive_response():
            if "FIRST-OUTPUT" in str(getattr(message, "content", "")):
                with anyio.fail_after(hang_guard()):  # the request the delayed reply answers has arrived
                    while len(scripted_model.requests("main")) < 2:
                        await anyio.sleep(0.05)
                await client.interrupt()  # while the model's reply is on its way
            if isinstance(message, ResultMessage):
                results.append(message)
        await client.query("Second.")
        async for message in client.receive_response():
            if isinstance(message, ResultMessage):
                results.append(message)

    first, second = results
    assert first.subtype == "error_during_execution" and first.is_error
    assert second.result == "Second answer." and second.session_id == first.session_id  # the client went on
    key = {"project_key": project_key_for_directory(workspace), "session_id": first.session_id}
    stored = str(await options.session_store.inner.load(key))  # type: ignore[union-attr, arg-type]
    await options.session_store.aclose()  # type: ignore[union-attr]
    assert all(text in stored for text in ("Go.", "FIRST-OUTPUT", "Request interrupted", "Second answer."))


_AS_FROM_A_TERMINAL = (
    "import runpy, signal, sys; "
    "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}); "
    "signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.argv[0] = 'flower'; runpy.run_module('flower._cli', run_name='__main__')"
)
"""`python -m flower._cli` as a terminal starts it: Ctrl-C neither ignored nor blocked, whatever the test
process inherited (a suite started in the background has SIGINT ignored, and its children with it)."""


def test_ctrl_c_on_flower_demo_says_interrupted_and_leaves_no_cli(tmp_path: Path) -> None:
    demo = subprocess.Popen(
        [sys.executable, "-c", _AS_FROM_A_TERMINAL, "demo"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the terminal's Ctrl-C reaches the whole group
        cwd=tmp_path,
    )
    try:
        assert demo.stdout is not None
        for line in demo.stdout:  # the first delegation: the CLI is running
            if line.startswith("  [01]"):
                break
        os.killpg(demo.pid, signal.SIGINT)
        out, err = demo.communicate(timeout=hang_guard())
    finally:
        if demo.poll() is None:
            os.killpg(demo.pid, signal.SIGKILL)
            demo.wait()

    assert demo.returncode == 130 and err.rstrip().endswith("flower demo: interrupted"), err
    assert "== verdict" not in out
    assert clis_in_group(demo.pid) == []  # the demo shut its CLI down before it exited


def clis_in_group(group: int) -> list[int]:
    """The processes of process group `group` that run the bundled CLI."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            if (
                entry.isdigit()
                and int(fields[2]) == group
                and b"claude" in Path(f"/proc/{entry}/cmdline").read_bytes()
            ):
                found.append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    return found
