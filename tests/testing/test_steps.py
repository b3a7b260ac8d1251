"""Script steps: shorthand, validation and the wire encoding (pure, no CLI)."""

from __future__ import annotations

import json

import pytest

from flower import SpecError
from flower.testing import Reply, Text, ToolUse, Usage, agent, bash, http_error, reply, tool_use
from flower.testing._steps import HttpError, StreamError, as_concrete
from flower.testing._wire import message_json, sse_events, stream_error_events


def test_reply_shorthand_and_stop_reason() -> None:
    r = reply("Running both.", bash("ls"), bash("pwd"), thinking="hmm")
    assert [type(b).__name__ for b in r.content] == ["Thinking", "Text", "ToolUse", "ToolUse"]
    assert r.effective_stop_reason == "tool_use"
    assert reply("just text").effective_stop_reason == "end_turn"
    assert as_concrete("hi") == reply("hi")
    assert as_concrete(bash("ls")).content == (bash("ls"),)


@pytest.mark.parametrize(
    "build",
    [
        lambda: reply(),
        lambda: Text(3),  # type: ignore[arg-type]
        lambda: ToolUse("", {}),
        lambda: ToolUse("Bash", {"x": object()}),
        lambda: Usage(input_tokens=-1),
        lambda: Usage(output_tokens=True),  # type: ignore[arg-type]
        lambda: http_error(200),
        lambda: http_error(503, delay=-1),
        lambda: reply("x", delay=-0.5),
        lambda: bash("   "),
        lambda: agent("", "prompt"),
        lambda: reply(bash("a", id="same"), bash("b", id="same")),
        lambda: as_concrete(42),
    ],
)
def test_bad_steps_fail_early_with_a_spec_error(build) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SpecError):
        build()


def test_http_error_defaults() -> None:
    assert http_error(529).resolved_type == "overloaded_error"
    assert http_error(418).resolved_type == "api_error"
    assert HttpError(status=429).resolved_message == "scripted 429 rate_limit_error"


def test_agent_call_shapes() -> None:
    assert agent("a", "p").input == {
        "description": "delegated task",
        "prompt": "p",
        "subagent_type": "a",
        "run_in_background": False,
    }
    assert "run_in_background" not in agent("a", "p", background=None).input
    assert tool_use("Grep", {"pattern": "x"}, path=".").input == {"pattern": "x", "path": "."}


def _events(raw: list[bytes]) -> list[tuple[str, dict]]:
    out = []
    for chunk in raw:
        name, data = chunk.decode().strip().split("\n", 1)
        out.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return out


def test_stream_reassembles_to_the_json_message() -> None:
    step = reply(
        "héllo wörld, a longer text",
        bash("echo 1", id="toolu_1"),
        thinking="think",
        usage=Usage(input_tokens=7),
    )
    message = message_json(step, "m", 100)
    events = _events(list(sse_events(step, "m", 100)))
    assert events[0][0] == "message_start" and events[-1][0] == "message_stop"
    blocks: dict[int, dict] = {}
    partial: dict[int, str] = {}
    for name, data in events:
        if name == "content_block_start":
            blocks[data["index"]] = dict(data["content_block"])
        elif name == "content_block_delta":
            delta = data["delta"]
            block = blocks[data["index"]]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            elif delta["type"] == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] = delta["signature"]
            else:
                partial[data["index"]] = partial.get(data["index"], "") + delta["partial_json"]
    for index, text in partial.items():
        blocks[index]["input"] = json.loads(text)
    assert [blocks[i] for i in sorted(blocks)] == message["content"]
    (delta,) = [d for n, d in events if n == "message_delta"]
    assert delta["delta"]["stop_reason"] == "tool_use"
    assert delta["usage"]["input_tokens"] == 7


def test_estimated_usage_grows_with_the_request() -> None:
    small = message_json(reply("x"), "m", 4_000)["usage"]["input_tokens"]
    large = message_json(reply("x"), "m", 400_000)["usage"]["input_tokens"]
    assert (small, large) == (1_000, 100_000)


def test_stream_error_ends_with_an_error_event() -> None:
    names = [n for n, _ in _events(list(stream_error_events(StreamError(), "m", 10)))]
    assert names[0] == "message_start" and names[-1] == "error"


def test_reply_is_immutable() -> None:
    r = reply("x")
    with pytest.raises(AttributeError):
        r.delay = 3  # type: ignore[misc]
    assert isinstance(r, Reply)
