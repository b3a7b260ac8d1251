"""The request log's views and the caller classification (pure, no CLI)."""

from __future__ import annotations

import pytest

from flower import SpecError
from flower.testing import RecordedRequest, ScriptedModel
from flower.testing._callers import agent_marker, classify

BILLING_MAIN = {"type": "text", "text": "x-anthropic-billing-header: cc_version=2; cc_entrypoint=sdk-py;"}
BILLING_SUB = {
    "type": "text",
    "text": "x-anthropic-billing-header: cc_version=2; cc_entrypoint=sdk-py; cc_is_subagent=true;",
}


def body(system: list, messages: list, tools: list | None = None) -> dict:
    return {"model": "m", "system": system, "messages": messages, "tools": tools or [], "stream": True}


def recorded(b: dict) -> RecordedRequest:
    return RecordedRequest(
        seq=0, caller="main", index=0, turn=0, body=b, headers={}, path="/v1/messages", received_at=0.0
    )


def test_classify_main_subagent_marker_toolset_and_compact() -> None:
    user = [{"role": "user", "content": "hi"}]
    assert classify(body([BILLING_MAIN], user)) == "main"
    assert (
        classify(body([BILLING_SUB, {"type": "text", "text": "prompt\n\n" + agent_marker("分析员")}], user))
        == "分析员"
    )
    assert classify(body([BILLING_SUB], user)) == "subagent"
    tools = [{"name": "Read"}, {"name": "Glob"}]
    assert classify(body([BILLING_SUB], user, tools), {"reader": frozenset({"Read", "Glob"})}) == "reader"
    compact = [
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "Your task is to create a detailed summary of the conversation so far",
                }
            ],
        }
    ]
    assert classify(body([BILLING_MAIN], compact)) == "compact"


def test_views_over_a_body() -> None:
    b = body(
        [BILLING_MAIN, {"type": "text", "text": "SYSTEM-TEXT"}],
        [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [{"type": "text", "text": "a\nb"}],
                    }
                ],
            },
        ],
        [{"name": "Bash", "input_schema": {}}],
    )
    r = recorded(b)
    (result,) = r.tool_results
    assert (result.tool_use_id, result.text, result.tool_name, result.is_error) == (
        "t1",
        "a\nb",
        "Bash",
        False,
    )
    assert r.tool_result("t1") == result
    with pytest.raises(KeyError, match="present: \\['t1'\\]"):
        r.tool_result("t2")
    assert r.tool_uses[0]["input"] == {"command": "ls"}
    assert "SYSTEM-TEXT" in r.system_text and r.tool_names == ["Bash"]
    assert "a\nb" in r and "absent" not in r and r.count("a") >= 1
    sizes = r.sizes
    assert sizes.tool_results == 3 and sizes.total > sizes.messages > sizes.tool_results
    assert "caller=main" in r.summary()


def test_bad_script_names_and_arguments() -> None:
    model = ScriptedModel()
    with pytest.raises(SpecError):
        model.script("bad]name", [])
    with pytest.raises(SpecError):
        model.script("", [])
    with pytest.raises(SpecError):
        model.script("main", "not a list")  # type: ignore[arg-type]
    with pytest.raises(SpecError):
        model.script("main", [object()])  # type: ignore[list-item]
    with pytest.raises(SpecError):
        model.script("main", [], tools=["Read"])
    with pytest.raises(RuntimeError, match="not running"):
        model.env()
    with pytest.raises(SpecError):
        agent_marker("main")


def test_remaining_and_extend() -> None:
    model = ScriptedModel(main=["a"], agents={"w": ["b", "c"]})
    model.extend("main", ["d"])
    assert model.remaining() == {"main": 2, "w": 2}
    model.script("main", lambda request: "always")
    with pytest.raises(SpecError):
        model.extend("main", ["x"])
    assert model.remaining() == {"w": 2}
