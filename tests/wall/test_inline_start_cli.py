"""A coordinator that starts inline (`inline_until`, opt-in) through the real CLI, under bash and zsh:
while its context is small its hands-on calls run (a Bash one scrubbed), a command that reads secrets
is refused all the same. Under a `Runtime` that hands off, the run starts in an inline session (no Agent
tool, flower's short inline prompt), which hands off at the limit to the coordinator, strict from its
first call. In one session (no handoff, or an instrumented app), the strict wall holds for good from the
reply whose usage reached the limit. The context judged is the usage the scripted model reports;
asserted on what the model read (the request log) and on the files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ClaudeSDKClient, ResultMessage

from flower import HandoffPolicy, Runtime, coordinator, instrument
from flower.testing import ScriptedModel, Usage, agent, bash, reply, tool_use
from tests.credentials import leaks
from tests.e2e.glance_secrets import SHELLS, _secrets
from tests.wall.cli_runs import HELPER, WAY, runtime

pytestmark = pytest.mark.cli

LIMIT = 50_000


def small(*blocks: Any, tokens: int = 8_000) -> Any:
    """A reply whose usage says the context holds `tokens` + 10."""
    return reply(*blocks, usage=Usage(input_tokens=10, cache_read_input_tokens=tokens))


def lead_with_helper(scripted_model: ScriptedModel, workspace: Path) -> Any:
    """The coordinator under test (`inline_until=LIMIT`); its helper, when started, writes `late.txt`."""
    scripted_model.script(
        "helper", [tool_use("Write", file_path=str(workspace / "late.txt"), content="w"), "ok"]
    )
    return coordinator("lead", "Goal: tidy up.", {"helper": HELPER}, inline_until=LIMIT)


@pytest.mark.parametrize("shell", SHELLS, ids=os.path.basename)
async def test_in_one_session_a_small_thread_works_itself_and_a_grown_one_delegates(
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
    spec = lead_with_helper(scripted_model, workspace)
    one_session = runtime(scripted_model, workspace, {**env, "SHELL": shell})
    one_session = Runtime(workspace, configure=one_session.configure, handoff=False)

    result = await one_session.run(spec, "Start.")

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


DOCUMENT = (
    "## Doing now\nTidying.\n## Decided\nnone\n## Dead ends\nnone\n## Next step\nCreate late.txt.\n"
    "## Where things are\n-"
)


async def test_a_runtime_starts_an_inline_session_that_hands_off_to_the_strict_coordinator(
    scripted_model: ScriptedModel, workspace: Path, tmp_path: Path
) -> None:
    env, values = _secrets(scripted_model, tmp_path / "home")
    scripted_model.script(
        "main",
        [
            small(tool_use("Write", file_path=str(workspace / "w.txt"), content="hi")),
            small(bash("printenv GH_TOKEN")),
            small(bash("touch big.txt"), tokens=LIMIT + 1_000),  # this reply reaches the limit: stopped
            DOCUMENT,  # the inline session's handoff document
            small(bash("touch late.txt")),  # the coordinator's session: strict from its first call
            small(tool_use("Write", file_path=str(workspace / "late.txt"), content="no")),
            small(agent("helper", "Create late.txt.")),
            "done",
        ],
    )
    spec = lead_with_helper(scripted_model, workspace)

    result = await runtime(scripted_model, workspace, env).run(spec, "Start.")

    assert result.ok, result.error
    assert len(result.retired) == 1 and result.session_id not in result.retired
    everything = json.dumps([request.body for request in scripted_model.requests()])
    assert leaks(everything, values) == []
    main = [r for r in scripted_model.requests() if r.caller == "main"]
    asked = next(i for i, r in enumerate(main) if "inline_until=50,000" in r.last_user_text)
    inline, lead = main[: asked + 1], main[asked + 1 :]
    assert all("Agent" not in r.tool_names for r in inline)  # no Agent schema, no coordinator prompt
    assert "Once your context reaches 50,000 tokens" in inline[0].system_text
    assert "coordinator of a small team" not in inline[0].system_text
    wrote, secret, stopped = inline[-1].tool_results[-3:]
    assert not wrote.is_error and (workspace / "w.txt").read_text() == "hi"
    assert secret.is_error and "no mode lets that through" in secret.text
    assert stopped.is_error and not (workspace / "big.txt").exists()  # interrupted, or the wall's latch
    assert "Write the handoff document now" in inline[-1].last_user_text
    assert all("Agent" in r.tool_names for r in lead)
    assert "Hands-on tools are refused to you" in lead[0].system_text
    assert "Create late.txt." in lead[0].last_user_text  # the takeover carries the document
    touch, write = lead[-1].tool_results[:2]
    for refused in (touch, write):
        assert refused.is_error and WAY in refused.text and "inline_until" not in refused.text
    assert (workspace / "late.txt").read_text() == "w"  # the worker wrote it


async def test_the_coordinators_own_successor_works_hands_on_again_while_it_is_small(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script(
        "main",
        [
            small(bash("touch big.txt"), tokens=LIMIT),  # the inline session reaches the limit
            DOCUMENT,
            small(bash("touch strict.txt")),  # the coordinator: strict
            small(bash("ls"), tokens=80_000),  # past the handoff line of a 100k window
            DOCUMENT,
            small(bash("touch again.txt")),  # its successor: small, so hands-on again
            "done",
        ],
    )
    spec = coordinator("lead", "Goal: tidy up.", {"helper": HELPER}, inline_until=LIMIT)
    model = runtime(scripted_model, workspace, {})
    run = Runtime(workspace, configure=model.configure, handoff=HandoffPolicy(window=100_000, reserve=0))

    result = await run.run(spec, "Start.")

    assert result.ok, result.error
    assert len(result.retired) == 2
    assert not (workspace / "big.txt").exists() and not (workspace / "strict.txt").exists()
    assert (workspace / "again.txt").exists()
    main = [r for r in scripted_model.requests() if r.caller == "main"]
    asks = [i for i, r in enumerate(main) if "Write the handoff document now" in r.last_user_text]
    assert len(asks) == 2 and "inline_until=50,000" in main[asks[0]].last_user_text
    assert "Hands-on tools are refused to you" in main[asks[0] + 1].system_text
    assert f"While your context is under {LIMIT:,} tokens" in main[asks[1] + 1].system_text


async def test_a_resumed_inline_session_goes_on_inline_and_hands_off_at_the_limit(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script(
        "main",
        [
            small(bash("touch one.txt")),
            "first done",  # a small task: the inline session ends under the limit, no handoff
            small(bash("touch two.txt")),  # resumed by the runtime that started it: inline again
            small(bash("touch three.txt"), tokens=LIMIT),  # stopped: the session hands off
            DOCUMENT,
            "second done",
        ],
    )
    spec = coordinator("lead", "Goal: tidy up.", {"helper": HELPER}, inline_until=LIMIT)
    run = runtime(scripted_model, workspace, {})

    first = await run.run(spec, "Start.")
    second = await run.run(spec, "Go on.", resume=first.session_id)

    assert first.ok and second.ok, (first.error, second.error)
    assert not first.retired and list(second.retired) == [first.session_id]
    assert (workspace / "one.txt").exists() and (workspace / "two.txt").exists()
    assert not (workspace / "three.txt").exists()
    main = [r for r in scripted_model.requests() if r.caller == "main"]
    assert ["Agent" in r.tool_names for r in main] == [False] * 5 + [True]
    assert "Hands-on tools are refused to you" in main[-1].system_text


async def test_a_session_resumed_elsewhere_is_the_coordinator_whose_wall_judges_the_size(
    scripted_model: ScriptedModel, workspace: Path
) -> None:
    scripted_model.script(
        "main",
        [
            small(bash("touch one.txt")),
            "first done",
            small(bash("touch two.txt")),  # resumed by another runtime (another process): one session
            small(bash("touch three.txt"), tokens=LIMIT),
            "second done",
        ],
    )
    spec = coordinator("lead", "Goal: tidy up.", {"helper": HELPER}, inline_until=LIMIT)

    first = await runtime(scripted_model, workspace, {}).run(spec, "Start.")
    second = await runtime(scripted_model, workspace, {}).run(spec, "Go on.", resume=first.session_id)

    assert first.ok and second.ok, (first.error, second.error)
    assert not second.retired and second.session_id == first.session_id
    assert (workspace / "two.txt").exists() and not (workspace / "three.txt").exists()
    main = [r for r in scripted_model.requests() if r.caller == "main"]
    assert "Agent" not in main[0].tool_names and "Agent" in main[-1].tool_names
    # the CLI keeps the system prompt a session started with: the inline one, which names the limit
    assert f"Once your context reaches {LIMIT:,} tokens" in main[-1].system_text
    refused = main[-1].tool_results[-1]
    assert refused.is_error and f"past inline_until={LIMIT:,}" in refused.text and WAY in refused.text


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
