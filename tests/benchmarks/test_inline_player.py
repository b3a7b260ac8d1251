"""The player of `coordinator(inline_until=T)`: hands-on until T, then the coordinator of the rest,
partitioned as a coordinator partitions a workload. In a session that offers the Agent tool (the wall's
latch) the first request at or over T is the coordinator's; in the inline session (no Agent tool) the
call at T is stopped, the session hands off, and the next session's first request is the coordinator's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks.suite.actions import Action, Fact, Probe, Reuse, Run, Subtask, Workload, WriteFile
from benchmarks.suite.delegate import Coordinator, partition
from benchmarks.suite.inline import Inline, context
from benchmarks.suite.play import MOVE, Play
from benchmarks.suite.player import usage_for
from flower.testing import RecordedRequest

FINDING = Fact("s1 finding", "s1 is fine", "d")
ACTIONS: tuple[Action, ...] = (
    Run("a", "python3 gen.py a"),
    Run("b", "python3 gen.py b"),
    Subtask("s1", (Run("c", "python3 gen.py c"), Run("d", "python3 gen.py d")), FINDING),
    Run("look", "ls", glance=True),
    Run("e", "python3 gen.py e"),
    WriteFile("f", "out/f.txt", 200),
)
PAD = 1_000
"""The residue each turn adds to the context the player reports: the context grows by turn."""


def _play(root: Path, workload: Workload, until: int) -> Play:
    return Play(
        workload,
        root,
        delegated=True,
        pointers_in_handoff=True,
        scripts=".flower/scripts",
        chunk=MOVE,
        fold=True,
        inline_until=until,
    )


AGENT = [{"name": "Agent"}, {"name": "Bash"}]
"""The tools of a session that can delegate (a resumed one): the wall's latch switches it."""


def _drive(
    play: Play, replies: int, tools: list[dict[str, str]] | None = None
) -> tuple[list[Any], list[int]]:
    """`replies` main-thread requests offering `tools` (`AGENT` unless given), each answering the last call
    with "ok": the calls made and the context each request reported."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Go."}]
    calls: list[Any] = []
    contexts: list[int] = []
    for turn in range(replies):
        body = {"messages": messages, "tools": AGENT if tools is None else tools}
        request = RecordedRequest(turn, "main", turn, turn, body, {}, "/v1/messages", 0.0)
        contexts.append(context(usage_for(request, play.workload.pad)))
        (call,) = [b for b in play.on_main(request).content if type(b).__name__ == "ToolUse"]
        calls.append(call)
        use = {"type": "tool_use", "id": f"t{turn}", "name": call.name, "input": call.input}
        done = {"type": "tool_result", "tool_use_id": f"t{turn}", "content": "ok"}
        messages += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [done]}]
    return calls, contexts


def _at_turn(tmp_path: Path, workload: Workload, turn: int) -> int:
    """The context the player reports at `turn` of `workload` (the same requests, whatever it answers)."""
    _, contexts = _drive(_play(tmp_path, workload, 10**9), turn + 1)
    return contexts[turn]


def test_the_main_thread_works_hands_on_until_the_first_request_at_the_threshold_then_delegates_the_rest(
    tmp_path: Path,
) -> None:
    workload = Workload("w9", "test", "Do it.", ACTIONS, pad=PAD)
    until = _at_turn(tmp_path, workload, 3)  # exactly the context of the fourth request: "at" switches
    play = _play(tmp_path, workload, until)
    assert isinstance(play.main, Inline)
    calls, contexts = _drive(play, 6)
    assert all(c < until for c in contexts[:3]) and contexts[3] == until
    hands_on = [c.input["command"] for c in calls[:3]]
    assert [c.name for c in calls[:3]] == ["Bash"] * 3
    assert hands_on == ["python3 gen.py a", "python3 gen.py b", "python3 gen.py c"]  # inside s1
    assert play.ledger.took_over == 3 and isinstance(play.main, Coordinator)
    rest: tuple[Action, ...] = (
        Subtask("s1", (Run("d", "python3 gen.py d"),), FINDING),  # the open subtask's rest
        *ACTIONS[3:],
    )
    assert play.main.actions == partition(rest, MOVE, fold=True)  # as a coordinator partitions it
    assert [c.name for c in calls[3:]] == ["Agent", "Bash", "Agent"]
    first = calls[3].input["prompt"]
    assert "[task c0] s1:" in first and "gen.py d" in first and "gen.py c" not in first
    assert "report s1 finding" in first
    assert calls[4].input["command"] == "ls"  # a glance: the coordinator's own
    last = calls[5].input["prompt"]
    assert "gen.py e" in last and "out/f.txt" in last  # one mandate for the move


def test_a_threshold_never_reached_is_flowers_inline_run_and_a_script_written_at_the_switch_is_delegated(
    tmp_path: Path,
) -> None:
    workload = Workload("w9", "test", "Do it.", ACTIONS, pad=PAD)
    calls, _ = _drive(_play(tmp_path / "never", workload, 10**9), 7)
    assert [c.name for c in calls] == ["Bash"] * 6 + ["Write"]  # every action hands-on, like -delegation

    reuse = (Run("a", "python3 gen.py a"), Reuse("scripts/an.py", 300), Run("e", "python3 gen.py e"))
    workload = Workload("w8", "test", "Do it.", reuse, pad=PAD)
    play = _play(tmp_path, workload, _at_turn(tmp_path, workload, 2))
    calls, _ = _drive(play, 3)
    assert [c.name for c in calls] == ["Bash", "Write", "Agent"]  # its run was due when T was reached
    assert "run the analysis script" in calls[2].input["prompt"] and "gen.py e" in calls[2].input["prompt"]
    assert play.ledger.runs == 0 and play.ledger.writes == 1  # the worker counts the run it does
    assert isinstance(play.main, Coordinator)
    assert play.main.actions == partition(reuse[1:], MOVE, fold=True)


def test_a_probe_under_way_at_the_switch_goes_on_with_the_coordinator(tmp_path: Path) -> None:
    fact = Fact("the code", "code=77", "a")
    actions: tuple[Action, ...] = (Run("a", "python3 gen.py a"), Probe(fact), Run("e", "python3 gen.py e"))
    workload = Workload("w7", "test", "Do it.", actions, pad=PAD)
    play = _play(tmp_path, workload, _at_turn(tmp_path, workload, 2))
    calls, _ = _drive(play, 3)  # "ok" never shows the fact: the inline actor reruns `a`, then T
    assert [c.name for c in calls[:2]] == ["Bash", "Bash"]
    assert play.ledger.probes and isinstance(play.main, Coordinator)
    assert calls[2].name == "Agent" and "gen.py e" in calls[2].input["prompt"]


def test_flower_inline_tells_the_wall_and_the_player_the_same_threshold_and_flower_stays_strict() -> None:
    from benchmarks.suite.runs import INLINE_SWEEP, INLINE_UNTIL, ablations, inline_name, named
    from benchmarks.suite.workloads import workload

    w = workload("w1", quick=True)
    mine = named(w, "flower +inline")
    assert mine.spec == {"inline_until": INLINE_UNTIL} and mine.inline_until == INLINE_UNTIL
    assert mine.delegated and mine.own_steps == 0
    assert named(w, "flower").inline_until is None and named(w, "flower").spec == {}
    for tokens in INLINE_SWEEP:
        assert named(w, inline_name(tokens)).inline_until == tokens
    assert "flower +inline" in {s.name for s in ablations(w)}  # the full suite runs the named variant
    assert not any(s.name.startswith("flower +inline ") for s in ablations(w))  # the sweep only on request


@pytest.mark.parametrize(
    "said",
    [
        "The user doesn't want to proceed with this tool use.",  # the CLI's words for an interrupt
        "flower: this session does not run `python3 gen.py d` itself any more (...)",  # the wall's latch
    ],
)
def test_the_inline_session_hands_off_at_the_threshold_and_every_later_session_is_the_coordinator(
    tmp_path: Path, said: str
) -> None:
    from benchmarks.suite.play import HANDOFF_ASK

    workload = Workload("w9", "test", "Do it.", ACTIONS, pad=PAD)
    play = _play(tmp_path, workload, _at_turn(tmp_path, workload, 3))
    calls, _ = _drive(play, 4, tools=[{"name": "Bash"}])  # the inline session: no Agent tool
    assert isinstance(play.main, Inline) and [c.name for c in calls] == ["Bash"] * 4  # at T: `gen.py d`
    assert calls[3].input["command"] == "python3 gen.py d"
    stopped = {"type": "tool_result", "tool_use_id": "t3", "content": said, "is_error": True}
    use = {"type": "tool_use", "id": "t3", "name": "Bash", "input": calls[3].input}
    ask = {"role": "user", "content": [stopped, {"type": "text", "text": HANDOFF_ASK + "."}]}
    history = [{"role": "user", "content": "Go."}, {"role": "assistant", "content": [use]}, ask]
    request = RecordedRequest(4, "main", 4, 4, {"messages": history}, {}, "", 0.0)
    assert type(play.on_main(request).content[-1]).__name__ != "ToolUse"  # the handoff document
    messages: list[dict[str, Any]] = [{"role": "user", "content": "The handoff document. Go on."}]
    seen = []
    for turn in range(5, 8):  # the coordinator's session: a small context, and the Agent tool
        body = {"messages": messages, "tools": AGENT}
        request = RecordedRequest(turn, "main", turn, turn - 5, body, {}, "/v1/messages", 0.0)
        (call,) = [b for b in play.on_main(request).content if type(b).__name__ == "ToolUse"]
        seen.append(call)
        use = {"type": "tool_use", "id": f"t{turn}", "name": call.name, "input": call.input}
        done = {"type": "tool_result", "tool_use_id": f"t{turn}", "content": "ok"}
        messages += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [done]}]
    assert play.ledger.took_over == 5 and isinstance(play.main, Coordinator)
    assert [c.name for c in seen] == ["Agent", "Bash", "Agent"]  # the stopped call's rest goes to a worker
    assert "gen.py d" in seen[0].input["prompt"] and "gen.py c" not in seen[0].input["prompt"]
    assert seen[1].input["command"] == "ls"


def test_after_a_coordinators_handoff_its_successor_starts_inline_again_with_the_coordinators_rest(
    tmp_path: Path,
) -> None:
    from benchmarks.suite.play import HANDOFF_ASK, LATCH

    workload = Workload("w9", "test", "Do it.", ACTIONS, pad=PAD)
    play = _play(tmp_path, workload, _at_turn(tmp_path, workload, 3))
    calls, _ = _drive(play, 4)  # one session offering the Agent tool: the wall's latch switches it
    assert isinstance(play.main, Coordinator) and calls[3].name == "Agent"  # c0: the rest of s1
    ask = {"role": "user", "content": HANDOFF_ASK + "."}
    request = RecordedRequest(
        4, "main", 4, 4, {"messages": [{"role": "user", "content": "Go."}, ask]}, {}, "", 0.0
    )
    assert type(play.on_main(request).content[-1]).__name__ != "ToolUse"  # the handoff document
    messages: list[dict[str, Any]] = [{"role": "user", "content": "The handoff document. Go on."}]
    seen = []
    for turn in range(5, 8):  # the coordinator's successor: a small context, its rules say it may work
        asked = turn - 5  # the assistant messages of the new session so far
        body = {"messages": messages, "tools": AGENT, "system": f"{LATCH} 60,000 tokens, ..."}
        request = RecordedRequest(turn, "main", turn, asked, body, {}, "/v1/messages", 0.0)
        (call,) = [b for b in play.on_main(request).content if type(b).__name__ == "ToolUse"]
        seen.append(call)
        use = {"type": "tool_use", "id": f"t{turn}", "name": call.name, "input": call.input}
        done = {"type": "tool_result", "tool_use_id": f"t{turn}", "content": "ok"}
        messages += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [done]}]
    assert play.ledger.turned_back == [5] and play.ledger.took_over == 3
    assert [c.name for c in seen] == ["Bash", "Bash", "Write"]  # the delegated move's actions, hands-on
    assert [c.input.get("command") for c in seen[:2]] == ["ls", "python3 gen.py e"]
    assert isinstance(play.main, Inline)
