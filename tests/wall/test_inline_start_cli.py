"""A coordinator that starts inline (`inline_until`, opt-in) through the real CLI, under bash and zsh:
while its context is small its hands-on calls run (a Bash one scrubbed), a command that reads secrets
is refused all the same, and from the reply whose usage reached the limit on, the strict wall holds for
good. The context the wall judges is the usage the scripted model reports; asserted on what the model
read (the request log) and on the files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ClaudeSDKClient, ResultMessage

from flower import coordinator, instrument
from flower.testing import ScriptedModel, Usage, agent, bash, reply, tool_use
from tests.credentials import leaks
from tests.e2e.glance_secrets import SHELLS, _secrets
from tests.wall.cli_runs import HELPER, WAY, runtime

pytestmark = pytest.mark.cli

LIMIT = 50_000


def small(*blocks: Any, tokens: int = 8_000) -> Any:
    """A reply whose usage says the context holds `tokens` + 10."""
    return reply(*blocks, usage=Usage(input_tokens=10, cache_read_input_tokens=tokens))


@pytest.mark.parametrize("shell", SHELLS, ids=os.path.basename)
async def test_a_small_thread_works_itself_and_a_grown_one_delegates(
    scripted_model: ScriptedModel, workspace: Path, tmp_path: Path, shell: str
) -> None:
    env, values = _secrets(scripted_model, tmp_path / "home")
    (workspace / "keep.txt").write_text("a\n")
    scripted_model.script(
        "main",
        [
            small(tool_use("Write", file_path=str(workspace / "w.txt"), content="hi")),
            small(bash("sed -i s/a/b/ keep.txt && echo SED-RAN")),
            small(bash("printenv GH_TOKEN")),
            small(bash("cat ~/.netrc")),
            small(bash("python3 -c 'import os; print(sorted(os.environ))'; echo OPAQUE-RAN")),
            small(bash("touch long.txt && seq 1 20000 && echo TAIL-VERDICT")),  # 108,894 chars
            small(bash("ls"), tokens=LIMIT + 1_000),  # this reply's usage reaches the limit
            small(bash("touch late.txt")),
            small(tool_use("Write", file_path=str(workspace / "late.txt"), content="no")),
            small(agent("helper", "Create late.txt.")),
            "done",
        ],
    )
    scripted_model.script(
        "helper", [tool_use("Write", file_path=str(workspace / "late.txt"), content="w"), "ok"]
    )
    spec = coordinator("lead", "Goal: tidy up.", {"helper": HELPER}, inline_until=LIMIT)

    result = await runtime(scripted_model, workspace, {**env, "SHELL": shell}).run(spec, "Start.")

    assert result.ok, result.error
    everything = json.dumps([request.body for request in scripted_model.requests()])
    assert leaks(everything, values) == []
    results = scripted_model.request("main", -1).tool_results
    assert not results[0].is_error and (workspace / "w.txt").read_text() == "hi"
    assert "SED-RAN" in results[1].text and (workspace / "keep.txt").read_text() == "b\n"
    for refused in results[2:4]:  # final in every mode
        assert refused.is_error and "no mode lets that through" in refused.text
    assert "OPAQUE-RAN" in results[4].text and "GH_TOKEN" not in results[4].text  # scrubbed
    # the whole output reached spill, which kept its tail in the preview; the launcher cut nothing
    assert "TAIL-VERDICT" in results[5].text and "an own step shows at most" not in results[5].text
    assert len(results[5].text) < 10_000
    assert "keep.txt" in results[6].text  # a glance, as always
    for refused in results[7:9]:
        assert refused.is_error and WAY in refused.text
        assert f"past inline_until={LIMIT:,}" in refused.text and f"{LIMIT + 1_010:,} tokens" in refused.text
    assert "run `touch late.txt` itself any more" in results[7].text
    assert "use Write itself any more" in results[8].text
    assert (workspace / "late.txt").read_text() == "w"  # the worker wrote it
    system = scripted_model.request("main", 0).system_text
    assert f"While your context is under {LIMIT:,} tokens, do the hands-on work yourself" in system


async def test_by_default_the_wall_is_strict_from_the_start(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script("main", [small(bash("touch t.txt"), tokens=10), "done"])
    spec = coordinator("lead", "Goal: tidy up.", {"helper": HELPER})

    result = await runtime(scripted_model, workspace, {}).run(spec, "Start.")

    assert result.ok, result.error
    [refused] = scripted_model.request("main", -1).tool_results
    assert refused.is_error and "run `touch t.txt` itself" in refused.text and WAY in refused.text
    assert "inline_until" not in refused.text
    assert not (workspace / "t.txt").exists()


async def test_an_instrumented_app_starts_inline_too(scripted_model: ScriptedModel, workspace: Path) -> None:
    scripted_model.script(
        "main",
        [
            small(bash("touch early.txt && echo EARLY-RAN")),
            small(bash("touch late.txt"), tokens=LIMIT + 5),  # the reply that reaches it is refused
            "done",
        ],
    )
    options = instrument(
        scripted_model.options(cwd=str(workspace)), workspace=workspace, coordinator=True, inline_until=LIMIT
    )
    async with ClaudeSDKClient(scripted_model.attach(options)) as client:
        await client.query("Start.")
        async for message in client.receive_response():
            if isinstance(message, ResultMessage):
                assert not message.is_error, message.result

    early, late = scripted_model.request("main", -1).tool_results
    assert "EARLY-RAN" in early.text and (workspace / "early.txt").exists()
    assert late.is_error and f"past inline_until={LIMIT:,}" in late.text and WAY in late.text
    assert not (workspace / "late.txt").exists()
