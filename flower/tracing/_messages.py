"""A span's messages, with `TracingPolicy(content=True)`: in the GenAI conventions' form and in the
OpenInference attributes Arize Phoenix shows.

The GenAI conventions put a model call's messages in `gen_ai.input.messages` / `gen_ai.output.messages`,
each a JSON list of `{"role", "parts": [...]}` (parts: `text`, `tool_call`, `tool_call_response`).
OpenInference (Phoenix) reads `input.value` / `output.value` for a span's input and output panes and
`llm.input_messages.<i>.message.role|content` (and `.tool_calls.<j>.tool_call.function.name|arguments`)
for a model call's messages. A chat span's input is what its reply answers, the prompt or the tool
results since the previous reply, not the whole history again (each earlier reply has its own span).
Every text is already cut at `CONTENT_LIMIT` by `_entries.slim`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from . import _names as n
from ._entries import Entry, blocks, string_content

Message = dict[str, Any]


def input_messages(entries: Sequence[Entry]) -> list[Message]:
    """What a reply answers, as GenAI messages: each user entry's text or tool results."""
    found: list[Message] = []
    for entry in entries:
        text = string_content(entry)
        if text is not None:
            found.append({"role": "user", "parts": [{"type": "text", "content": text}]})
            continue
        parts: list[dict[str, Any]] = []
        for block in blocks(entry):
            if block.get("type") == "tool_result":
                part = {"type": "tool_call_response", "id": block.get("tool_use_id")}
                parts.append({**part, "response": block.get("text", "")})
            elif block.get("type") == "text" and "text" in block:
                parts.append({"type": "text", "content": block["text"]})
        if parts:
            found.append({"role": "user", "parts": parts})
    return found


def output_message(parts: Sequence[Mapping[str, Any]]) -> list[Message]:
    """A reply's parts as the GenAI output messages (one assistant message)."""
    return [{"role": "assistant", "parts": list(parts)}]


def _text(message: Message) -> str:
    texts = [str(p.get("content", "")) for p in message["parts"] if p.get("type") == "text"]
    texts += [str(p.get("response", "")) for p in message["parts"] if p.get("type") == "tool_call_response"]
    return "\n".join(texts)


def openinference(prefix: str, messages: Sequence[Message]) -> dict[str, str]:
    """`messages` flattened as OpenInference attributes under `prefix` (`llm.input_messages`...)."""
    out: dict[str, str] = {}
    for i, message in enumerate(messages):
        base = f"{prefix}.{i}.message"
        out[f"{base}.role"] = str(message["role"])
        out[f"{base}.content"] = _text(message)
        calls = [p for p in message["parts"] if p.get("type") == "tool_call"]
        for j, call in enumerate(calls):
            function = f"{base}.tool_calls.{j}.tool_call.function"
            out[f"{function}.name"] = str(call.get("name", ""))
            out[f"{function}.arguments"] = json.dumps(call.get("arguments") or {}, ensure_ascii=False)
    return out


def chat_content(inputs: Sequence[Message], outputs: Sequence[Message]) -> dict[str, str]:
    """A chat span's messages under the GenAI names and the OpenInference ones."""
    given, said = json.dumps(inputs, ensure_ascii=False), json.dumps(outputs, ensure_ascii=False)
    return {
        n.INPUT_MESSAGES: given,
        n.OUTPUT_MESSAGES: said,
        n.OI_INPUT: given,
        n.OI_INPUT_MIME: "application/json",
        n.OI_OUTPUT: said,
        n.OI_OUTPUT_MIME: "application/json",
        **openinference(n.OI_INPUT_MESSAGES, inputs),
        **openinference(n.OI_OUTPUT_MESSAGES, outputs),
    }


def text_io(given: str | None, said: str | None) -> dict[str, str]:
    """An agent's or a tool's input and output, as the text OpenInference shows (either may be absent)."""
    out: dict[str, str] = {}
    if given is not None:
        out[n.OI_INPUT] = given
        out[n.OI_INPUT_MIME] = "application/json" if given.startswith(("{", "[")) else "text/plain"
    if said is not None:
        out[n.OI_OUTPUT] = said
        out[n.OI_OUTPUT_MIME] = "text/plain"
    return out
