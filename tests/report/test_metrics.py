"""The report's measurements as pure functions, over small CLI-shaped transcripts."""

from __future__ import annotations

from typing import Any

import pytest

from flower._wall.rules import WORKER_RULES
from flower.report import _metrics as m
from flower.report._pricing import price_for, window_for
from tests.stores.transcripts import Transcript


def with_usage(entries: list[dict[str, Any]], **usage: int) -> list[dict[str, Any]]:
    for entry in entries:
        entry["message"]["usage"] = dict(usage)
    return entries


def test_a_reply_is_counted_once_whatever_its_blocks() -> None:
    t = Transcript()
    t.prompt("Go")
    blocks = with_usage(
        t.assistant({"type": "text", "text": "Two at once."}, t.bash("ls", "a"), t.bash("pwd", "b")),
        input_tokens=100,
        cache_read_input_tokens=900,
        output_tokens=7,
    )
    t.result("a", "x")
    t.result("b", "y")
    t.api_error()

    (reply,) = m.turns(t.entries)

    assert len(blocks) == 3 and reply.usage.context == 1000 and reply.usage.output == 7
    assert [b.get("id") for b in reply.blocks if b["type"] == "tool_use"] == ["a", "b"]
    assert len(m.messages(t.entries)) == 2  # the synthetic API-error reply is a message, not a turn
    assert m.api_error_count(t.entries) == 2  # its system entry (a retry) and the synthetic reply
    assert [c["id"] for c in m.tool_uses(t.entries)] == ["a", "b"]


def test_body_chars_count_prompts_text_inputs_and_results() -> None:
    t = Transcript()
    t.prompt("Go")  # 2
    t.assistant({"type": "text", "text": "abc"}, t.call("Bash", {"command": "ls"}, "a"))  # 3 + 16
    t.result("a", "12345")  # 5
    t.attachment()

    assert m.body_chars(t.entries) == 2 + 3 + len('{"command":"ls"}') + 5


def test_prompts_are_text_messages_not_results_markers_or_notifications() -> None:
    t = Transcript()
    t.prompt("first")
    t.run("ls", "a.txt", "a")
    t.prompt("[Request interrupted by user for tool use]")
    t.meta("<system-reminder>meta</system-reminder>")
    t.prompt("<task-notification>done</task-notification>")["promptSource"] = "system"
    t.prompt("second")

    assert [text for _, text in m.prompts(t.entries)] == ["first", "second"]


def test_denials_are_read_from_the_structural_marker() -> None:
    t = Transcript()
    t.assistant(t.bash("rm -rf x", "a"))
    t.result("a", "PreToolUse:Bash hook error: no", denial="permission-rule")
    t.assistant(t.bash("ls", "b"))
    t.result("b", "denied by the user", interrupted=True)  # user-rejected: not a denial

    assert m.denial_count(t.entries) == 1


def test_mandates_and_what_they_restate() -> None:
    t = Transcript()
    lean = "Count the lines of data/. Workbench: /w (long outputs in artifacts/)."
    copied = "Scan logs/. Never paste file contents, command output, logs or diffs into the reply."
    t.assistant(t.call("Agent", {"prompt": lean, "subagent_type": "a"}, "a"))
    t.assistant(t.call("Agent", {"prompt": copied, "subagent_type": "a"}, "b"))

    assert m.mandates(t.entries) == [lean, copied]
    assert m.restated_chars(lean, [WORKER_RULES]) == 0
    restated = m.restated_chars(copied, [WORKER_RULES])
    assert restated == len("Never paste file contents, command output, logs or diffs into the reply.")
    paraphrase = "Do not copy the files or the outputs of commands into what you send back."
    assert m.restated_chars(paraphrase, [WORKER_RULES]) == 0  # copying is detected, paraphrase is not
    assert m.restated_chars("one two three", ["one two three"], n=3) == len("one two three")
    with pytest.raises(ValueError):
        m.restated_chars("x", ["x"], n=0)


def test_scripts_written_and_run() -> None:
    calls = [
        {"name": "Write", "input": {"file_path": "/ws/.flower/scripts/count.sh", "content": "wc -l"}},
        {"name": "Edit", "input": {"file_path": "/ws/.flower/scripts/count.sh"}},
        {"name": "Write", "input": {"file_path": "/ws/.flower/artifacts/out.txt"}},
        {"name": "Bash", "input": {"command": "sh .flower/scripts/count.sh a.txt | tee out.txt"}},
        {"name": "Bash", "input": {"command": "bash /ws/.flower/scripts/count.sh b.txt"}},
        {"name": "Bash", "input": {"command": "cat /ws/.flower/scripts/count.sh"}},  # a look, not a run
        {"name": "Bash", "input": {"command": "python3 /elsewhere/scripts/x.py"}},
    ]

    activity = m.script_activity(calls)

    assert activity.written == ("count.sh",) and activity.writes == 2
    assert activity.runs == 2 and activity.run == ("count.sh",)
    assert m.script_activity(calls, ["/elsewhere/scripts"]).run == ("x.py",)


def test_slopes_and_the_wall() -> None:
    assert m.least_squares_slope([10, 12, 14, 16]) == pytest.approx(2.0)
    assert m.least_squares_slope([5]) is None
    # a handoff restarts low: pooled within sessions, the sawtooth does not flatten the growth
    assert m.pooled_slope([[100, 110, 120], [20, 30]]) == pytest.approx(10.0)
    assert m.least_squares_slope([100, 110, 120, 20, 30]) < 0
    # the original design's run: 28.7K, 2.2K per turn, a 1M window -> about 440 turns
    assert m.turns_to_wall(28_700, 2_200, 1_000_000) == pytest.approx(441.5, abs=0.1)
    assert m.turns_to_wall(1_000, 0.0, 200_000) is None


def test_hit_rate_and_usage() -> None:
    usage = m.usage_of({"input_tokens": 10, "cache_read_input_tokens": 90, "output_tokens": "x"})
    assert usage.context == 100 and usage.output == 0
    assert m.hit_rate(usage) == pytest.approx(0.9)
    assert m.hit_rate(m.TokenUsage()) is None
    assert (usage + usage).cache_read == 180


def test_prices_and_windows_per_model() -> None:
    opus, known = price_for("claude-opus-5-5")
    assert (
        known and opus.measured and opus.cost(input=1_000_000, output=0, cache_read=0, cache_creation=0) == 4
    )
    sonnet, _ = price_for("claude-sonnet-4-6")
    assert sonnet.cost(input=0, output=1_000_000, cache_read=1_000_000, cache_creation=0) == pytest.approx(
        15.3
    )
    assert price_for("fake-model-x") == (opus, False)  # priced like the CLI's default, and said so
    assert window_for("claude-sonnet-4-6") == 200_000 and window_for("claude-haiku-4-5") == 200_000
    assert window_for("claude-opus-5-5") == 1_000_000 and window_for("claude-sonnet-4-5[1m]") == 1_000_000
    assert window_for("fake-model-x") == 1_000_000


def test_a_reply_recorded_mid_stream_is_counted_from_its_content() -> None:
    """The shape of CLI 2.1.42 and earlier: the output count of the start of the stream and no
    `stop_reason` on any entry of the reply. A reply with one is taken as recorded."""
    t = Transcript()
    t.prompt("Go")
    streamed = with_usage(
        t.assistant({"type": "text", "text": "x" * 4000}, t.bash("ls", "a")), output_tokens=1
    )
    for entry in streamed:
        del entry["message"]["stop_reason"]
    t.result("a", "a.txt")
    with_usage(t.assistant({"type": "text", "text": "y" * 4000}), output_tokens=3)

    first, second = m.turns(t.entries)

    floor = m.output_floor(first.blocks)
    assert floor == (4000 + len('{"command":"ls","description":"ls"}') + 3) // 4
    assert (first.mid_stream, first.recorded_output, first.usage.output) == (True, 1, floor)
    assert (second.mid_stream, second.usage.output) == (False, 3), "a stop_reason: the count is final"


def test_one_hour_cache_writes_are_told_apart() -> None:
    usage = m.usage_of(
        {
            "input_tokens": 5,
            "cache_creation_input_tokens": 1000,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 1000},
        }
    )
    assert (usage.cache_creation, usage.cache_creation_1h, usage.context) == (0, 1000, 1005)


def test_subagent_runs_are_counted_from_calls_whose_transcript_is_missing() -> None:
    from flower.report._gaps import Runs, subagent_runs

    t = Transcript()
    t.prompt("Go")
    for ident, agent in (("t1", "a1"), ("t2", "a2"), ("t3", None)):
        t.assistant(t.call("Task", {"prompt": "Do it.", "subagent_type": "x"}, ident))
        t.result(ident, "done")["toolUseResult"] = {"status": "completed", "agentId": agent} if agent else {}
    t.assistant(t.call("Task", {"prompt": "Again.", "subagent_type": "x"}, "t4"))
    t.result("t4", "The user doesn't want to proceed with this tool use.", is_error=True)

    assert subagent_runs(t.entries, ["subagents/agent-a1"]) == Runs(transcripts=1, from_calls=2)
    assert subagent_runs(t.entries, ["subagents/agent-a1", "subagents/agent-b9"]) == Runs(1 + 1, 1)
    assert subagent_runs(t.entries, []).total == 3, "a refused call ran no worker"
