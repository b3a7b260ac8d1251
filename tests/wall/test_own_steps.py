"""Own steps: off by default (the strict wall); opted in, `own_steps` hands-on calls per user turn, each
with a small input, a Bash one run scrubbed and cut, never one that reads credentials (pure: the hook on
plain dicts, and the launcher run for real)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from flower import (
    COORDINATOR_RULES,
    AgentSpec,
    SpecError,
    coordinator,
    coordinator_rules,
    delegate_guard,
    instrument,
    worker,
)
from flower._wall._own import OWN_LAUNCHER, own_command, secret_word
from flower._wall.delegate import DELEGATE_REASON, OWN_STEP_MAX_INPUT, OWN_STEP_MAX_OUTPUT
from tests.wall.delegate_calls import bash, decide, denied, refusal

SERIES = "a one-off step it may take itself, a series of them is a loop, a worker's job"
ROW = "take a second hands-on step in one user turn ({what}): " + SERIES


class Transcript:
    """A session's transcript as the CLI writes it: each turn opens with a user entry with its prompt id."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.write_text("")

    def turn(self, prompt: str, source: str = "sdk") -> str:
        entry = {"type": "user", "promptId": prompt, "promptSource": source, "message": {"content": "x"}}
        with self.path.open("a") as file:
            file.write(json.dumps(entry) + "\n")
        return prompt


def call(tool: str, text: str = "x", session: str = "s1", **extra: str) -> dict:
    field = {"Bash": "command", "Write": "content", "Edit": "new_string", "NotebookEdit": "new_source"}[tool]
    return {"tool_name": tool, "tool_input": {field: text}, "session_id": session, **extra}


def reason(result: dict) -> str:
    return str(result["hookSpecificOutput"]["permissionDecisionReason"])


def runs_own(result: dict) -> bool:
    """The call runs, through the own-step launcher (a Bash) or as written (Write, Edit...)."""
    output = result.get("hookSpecificOutput", {})
    return not denied(result) and (not output or str(OWN_LAUNCHER) in output["updatedInput"]["command"])


def size(chars: int, what: str) -> str:
    return (
        f"take a hands-on step with {chars:,} chars of input ({what}) itself: an input stays in its "
        "context for good, so its own steps take at most 2,000"
    )


def test_the_strict_wall_is_every_default() -> None:
    team = {"w": worker("Counts.", "You count.")}
    assert coordinator("lead", "Goal.", team).own_steps == 0
    assert coordinator("lead", "Goal.", team).rules == COORDINATOR_RULES == coordinator_rules(0)
    guard = delegate_guard()
    for tool in ("Write", "Edit", "NotebookEdit"):
        assert decide(guard, call(tool)) == refusal(f"use {tool} itself")
    for command in ("touch x", "rm x", "sed -i s/a/b/ f"):
        assert reason(decide(guard, call("Bash", command))).startswith(
            f"flower: the coordinator does not run `{command}` itself, as it is not a read-only glance"
        )
    assert denied(decide(delegate_guard(glance=False), call("Bash", "ls")))


def test_instrument_defaults_to_the_strict_wall(tmp_path: Path) -> None:
    from claude_agent_sdk import ClaudeAgentOptions

    options = instrument(ClaudeAgentOptions(cwd=str(tmp_path)), workspace=tmp_path, coordinator=True)
    wall = options.hooks["PreToolUse"][0].hooks[0]  # type: ignore[index]
    assert denied(decide(wall, call("Write")))
    assert denied(decide(wall, call("Bash", "touch x")))


def test_one_step_per_user_turn_and_nothing_gives_it_back(tmp_path: Path) -> None:
    log = Transcript(tmp_path / "s1.jsonl")
    turn = {"prompt_id": log.turn("p1"), "transcript_path": str(log.path)}
    guard = delegate_guard(own_steps=1)
    assert runs_own(decide(guard, call("Bash", "touch x", **turn)))
    assert decide(guard, call("Write", **turn)) == refusal(ROW.format(what="Write"))
    # a glance, a Read, an Agent call, a refusal: none gives the step back
    assert not denied(decide(guard, bash("ls", session_id="s1", **turn)))
    assert decide(guard, {"tool_name": "Read", "tool_input": {}, "session_id": "s1", **turn}) == {}
    assert decide(guard, {"tool_name": "Agent", "tool_input": {}, "session_id": "s1", **turn}) == {}
    assert denied(decide(guard, {"tool_name": "Grep", "tool_input": {}, "session_id": "s1", **turn}))
    assert decide(guard, call("Edit", **turn)) == refusal(ROW.format(what="Edit"))
    # a worker's report starts a turn with a prompt id of its own: not a user turn
    notified = {"prompt_id": log.turn("p2", source="system"), "transcript_path": str(log.path)}
    assert denied(decide(guard, call("Edit", **notified)))
    # the user's next prompt is a new user turn
    user = {"prompt_id": log.turn("p3"), "transcript_path": str(log.path)}
    assert decide(guard, call("Edit", **user)) == {}
    assert denied(decide(guard, call("Edit", **user)))


def test_when_it_cannot_tell_a_user_turn_the_count_goes_on(tmp_path: Path) -> None:
    guard = delegate_guard(own_steps=1)
    assert decide(guard, call("Write", prompt_id="p1")) == {}  # no transcript to read
    assert denied(decide(guard, call("Write", prompt_id="p2", transcript_path=str(tmp_path / "none"))))
    (tmp_path / "t.jsonl").write_text(json.dumps({"type": "user", "promptId": "p3"}) + "\n")
    assert denied(decide(guard, call("Write", prompt_id="p3", transcript_path=str(tmp_path / "t.jsonl"))))
    assert denied(decide(guard, call("Write")))  # no prompt id at all


def test_sessions_count_apart_and_a_workers_calls_never_count() -> None:
    guard = delegate_guard(own_steps=1)
    assert decide(guard, call("Write", session="s1")) == {}
    assert decide(guard, call("Write", session="s2")) == {}
    for _ in range(3):
        assert decide(guard, call("Write", session="s1", agent_id="a1")) == {}
    assert denied(decide(guard, call("Write", session="s1")))
    assert denied(decide(guard, call("Write", session="s2")))


@pytest.mark.parametrize("tool", ["Bash", "Write", "Edit", "NotebookEdit"])
def test_an_input_of_2000_chars_passes_2001_is_refused(tool: str) -> None:
    assert OWN_STEP_MAX_INPUT == 2_000
    guard = delegate_guard(own_steps=1)
    big = "touch " + "y" * 1_995  # 2,001 chars, not a glance
    what = f"`{big[:117]}...`" if tool == "Bash" else tool
    assert decide(guard, call(tool, big)) == refusal(size(2_001, what))
    assert runs_own(decide(guard, call(tool, big[:2_000])))  # a refused step did not count
    assert denied(decide(guard, call(tool, "z")))


SECRETS = [
    "printenv GITHUB_TOKEN",
    "env",
    "set",
    "export -p",
    "cat ~/.netrc",
    "cat ~/.aws/credentials",
    "cat ~/.claude/.credentials.json",
    "cat /proc/self/environ",
    "touch x && cat ~/.netrc",  # the parser stops at `touch`; the words are checked too
    'cat "$HOME/.netrc"',
    "ls; printenv | grep TOKEN",
]


@pytest.mark.parametrize("command", SECRETS)
@pytest.mark.parametrize("glance", [True, False])
def test_a_command_that_reads_secrets_is_never_an_own_step(command: str, glance: bool) -> None:
    guard = delegate_guard(own_steps=3, glance=glance)
    for _ in range(2):
        result = decide(guard, call("Bash", command))
        assert denied(result), command
    assert runs_own(decide(guard, call("Bash", "touch x")))  # the refusals took no step


def test_the_parser_says_which_refusals_are_for_secrets() -> None:
    from flower import glance_verdict

    for command in ("printenv X", "env", "cat ~/.netrc", "set", "export -p", "cat /proc/1/environ"):
        assert glance_verdict(command).secret, command
    for command in ("touch x", "rm x", "sed -i s/a/b/ f", "ls", "python3 -c 'print(1)'"):
        assert not glance_verdict(command).secret, command
    assert secret_word("git status && touch notes.txt", "/") == ""
    assert "credential store" in secret_word("cp ~/.ssh/id_rsa .", None)


def test_a_bash_step_runs_through_the_launcher_and_keeps_the_apps_permissions() -> None:
    guard = delegate_guard(own_steps=1, artifacts="/ws/.flower/artifacts")
    result = decide(guard, call("Bash", "touch x", permission_mode="default"))
    output = result["hookSpecificOutput"]
    assert output["updatedInput"]["command"] == own_command("touch x", spill="/ws/.flower/artifacts")
    assert "permissionDecision" not in output  # the CLI's permissions still decide on an own step


def test_a_deny_rule_is_final_for_an_own_step(tmp_path: Path) -> None:
    from flower._glance import BashRules

    guard = delegate_guard(own_steps=2, rules=BashRules(disallowed=("Bash(rm:*)",)))
    assert "permission rule `Bash(rm:*)`" in reason(decide(guard, call("Bash", "rm -rf build")))
    assert runs_own(decide(guard, call("Bash", "touch x")))


def launch(command: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    line = own_command(command, spill=tmp_path / "artifacts")
    return subprocess.run(
        ["/bin/bash", "-c", line],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), **env},
        check=False,
    )


def test_the_launcher_scrubs_the_environment_and_cuts_the_output(tmp_path: Path) -> None:
    leak = "python3 -c 'import os; print(sorted(os.environ))'; echo \"[$GH_TOKEN]\"; touch made.txt"
    done = launch(leak, tmp_path, GH_TOKEN="ghp-PLANTED", AWS_SECRET_ACCESS_KEY="aws-PLANTED")
    assert done.returncode == 0, done.stderr
    assert "PLANTED" not in done.stdout and "GH_TOKEN" not in done.stdout and "[]" in done.stdout
    assert (tmp_path / "made.txt").exists()  # an own step may write
    big = launch("seq 1 5000; exit 3", tmp_path)
    assert big.returncode == 3
    head, _, note = big.stdout.partition("\n[flower: ")
    assert len(head) == OWN_STEP_MAX_OUTPUT
    (spilled,) = (tmp_path / "artifacts").iterdir()
    assert f"the whole output ({len(spilled.read_bytes()):,} bytes) is in {spilled}" in note
    assert spilled.read_text().split() == [str(n) for n in range(1, 5001)]
    small = launch("echo small", tmp_path)
    assert small.stdout == "small\n" and len(list((tmp_path / "artifacts").iterdir())) == 1
    assert shlex.split(own_command("x", spill=None))[-2:] == ["--b64", "eA=="]


def test_a_custom_reason_carries_the_own_step_action() -> None:
    guard = delegate_guard(reason="no: {action}", own_steps=1)
    assert decide(guard, call("Write")) == {}
    assert reason(decide(guard, call("Write"))) == "no: " + ROW.format(what="Write")
    assert "{action}" in DELEGATE_REASON


def test_the_rules_say_what_the_wall_does() -> None:
    strict = coordinator_rules()
    assert COORDINATOR_RULES == strict == coordinator_rules(0)
    assert "- Hands-on tools are refused to you, every call at once" in strict
    assert "one-off" not in strict and "per user turn" not in strict
    one = (
        "- One hands-on step per user turn (one command, one small edit) you may take yourself; a second "
        "one, a step with over 2,000 characters of input (a large write), and any command that reads "
        "credentials or the environment are refused by the wall"
    )
    assert one in coordinator_rules(1)
    assert "- Up to 3 hands-on steps per user turn (one command, one small edit)" in coordinator_rules(3)
    assert "output is cut at 2,000 characters" in coordinator_rules(2)
    team = {"w": worker("Counts.", "You count.")}
    assert coordinator("lead", "Goal.", team, own_steps=1).rules == coordinator_rules(1)
    assert coordinator("lead", "Goal.", team, own_steps=0, rules="mine").rules == "mine"


def test_bad_own_steps_are_named() -> None:
    with pytest.raises(SpecError, match=r"^delegate_guard: own_steps must be 0 or more, got -1$"):
        delegate_guard(own_steps=-1)
    with pytest.raises(SpecError, match=r"own_steps must be an int"):
        delegate_guard(own_steps="1")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match=r"own_steps must be an int"):
        delegate_guard(own_steps=True)
    with pytest.raises(SpecError, match=r"^coordinator_rules: own_steps must be 0 or more, got -2$"):
        coordinator_rules(-2)
    team = {"w": worker("Counts.", "You count.")}
    with pytest.raises(SpecError, match=r"^coordinator 'lead': own_steps must be 0 or more, got -1$"):
        coordinator("lead", "Goal.", team, own_steps=-1)
    with pytest.raises(SpecError, match=r"own_steps only makes sense with delegate_only"):
        AgentSpec(instructions="Do it.", own_steps=1)
    with pytest.raises(SpecError, match=r"^worker: own_steps must be 0 or more, got -1$"):
        AgentSpec(instructions="Do it.", own_steps=-1, delegate_only=True)


async def test_of_parallel_calls_that_open_a_turn_one_runs(tmp_path: Path) -> None:
    """The calls of one message reach the hook at once; the first waits for the CLI to write the entry that
    opened the turn (here a moment later), the others for its answer: the count is never reset after a
    step was taken."""
    import anyio

    log = Transcript(tmp_path / "s1.jsonl")
    guard = delegate_guard(own_steps=1)
    turn = {"prompt_id": "p1", "transcript_path": str(log.path)}
    answers: list[dict] = []

    async def one(text: str) -> None:
        answers.append(await guard(call("Write", text, **turn), "toolu_1", {}))  # type: ignore[arg-type]

    async with anyio.create_task_group() as group:
        for text in ("a", "b", "c"):
            group.start_soon(one, text)
        await anyio.sleep(0.2)
        log.turn("p1")
    assert sorted(denied(answer) for answer in answers) == [False, True, True]
