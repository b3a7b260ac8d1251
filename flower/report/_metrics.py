"""The report's measurements, as pure functions over transcript entries.

An entry is one line of the CLI's transcript as the store holds it. What these functions
rely on, all measured with CLI 2.1.327:

- the CLI writes one assistant entry per content block; the blocks of one API reply share `message.id`
  and each entry repeats the reply's usage, so a reply (a *turn*) is counted once per id;
- an entry is written when its block ends, with the usage as it stood then: CLI 2.1.332 writes the
  final count and the reply's `stop_reason` on each, but some CLIs write the output count of the start
  of the stream and no `stop_reason` (real sessions of CLI 2.0.64 to 2.1.42 and of 2.1.44 to 2.1.52:
  "4" output tokens recorded for a reply of thousands). A reply none of whose entries has a
  `stop_reason` has its output counted from its content instead, as a lower bound (`Message`): what
  the entries lack decides, not the CLI's version;
- a failed request leaves a `system` entry `subtype: "api_error"` per retry, and a synthetic assistant
  entry (`model: "<synthetic>"`, `isApiErrorMessage`) when retries run out: not a turn;
- a denied call's result entry carries `toolDenialKind: "permission-rule"` (CLI 2.1.42 and earlier wrote
  the CLI's fixed "Permission to use ... has been denied." instead: `flower.stores._rewrite.denial_kind`);
- a call the CLI refused before the tool ran has an error result wrapped in `<tool_use_error>` (CLI 2.1.332:
  an unknown tool, invalid input, a subagent's Write of a `REPORT*.md`);
- a prompt is a user entry whose content is text, not a tool result;
- the CLI's compaction worker writes its transcript as a subagent's, `subagents/agent-acompact-<id>`
  (measured in real sessions of CLI 2.1.39).

None of these functions does I/O or mutates its input; `flower.report.build_report` composes them. The
script counts live in `flower.report._scripts`, the growth of the context in `flower.report._growth`
(both re-exported here).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from .._usage import TokenUsage
from .._util.content import refused_by_cli
from ._growth import least_squares_slope, pooled_slope, turns_to_wall
from ._scripts import ScriptActivity, script_activity

__all__ = [
    "OUTPUT_CHARS_PER_TOKEN",
    "RESTATE_WORDS",
    "Entry",
    "Message",
    "ScriptActivity",
    "api_error_count",
    "block_chars",
    "body_chars",
    "denial_count",
    "hit_rate",
    "is_compaction",
    "least_squares_slope",
    "mandates",
    "messages",
    "output_floor",
    "pooled_slope",
    "prompts",
    "refused_calls",
    "restated_chars",
    "result_texts",
    "script_activity",
    "tool_uses",
    "turns",
    "turns_to_wall",
    "usage_of",
]

Entry: TypeAlias = Mapping[str, Any]

RESTATE_WORDS = 6
"""A mandate word counts as restating the rules when it lies in a run of this many consecutive words that
also appear, in that order, in the rules (case and punctuation ignored)."""

OUTPUT_CHARS_PER_TOKEN = 4
"""Characters of visible output per output token for the lower bound of a mid-stream reply: real replies
with a final count held 1.55 to 3.85 characters a token (text, thinking, tool inputs), so 4 stays
under the truth."""

_COMPACTION = "agent-acompact-"
_WORD = re.compile(r"[\w'`/.-]+")


@dataclass(frozen=True, kw_only=True)
class Message:
    """One API reply: every assistant entry sharing its `message.id`, merged."""

    id: str
    model: str
    usage: TokenUsage
    blocks: tuple[Mapping[str, Any], ...]
    synthetic: bool
    """A reply the CLI wrote itself (an API error after its retries), not the model's."""
    mid_stream: bool = False
    """No entry of the reply has a `stop_reason`: its usage was recorded as it started streaming (what a
    CLI that records no final count writes), so `usage.output` is a lower bound: the larger of the
    recorded count and the visible output (text, thinking, tool inputs) at `OUTPUT_CHARS_PER_TOKEN`
    characters a token."""
    recorded_output: int = 0
    """The output tokens the transcript recorded for the reply."""


def usage_of(usage: object) -> TokenUsage:
    """A `message.usage` mapping as a `TokenUsage` (missing or malformed counts are 0); the writes to
    the 1-hour cache (`cache_creation.ephemeral_1h_input_tokens`) go to `cache_creation_1h`."""
    return TokenUsage.from_api(usage) if isinstance(usage, Mapping) else TokenUsage()


def output_floor(blocks: Iterable[Mapping[str, Any]]) -> int:
    """The fewest output tokens that can have produced these blocks: their visible characters (text,
    thinking, tool inputs as compact JSON; not signatures) at `OUTPUT_CHARS_PER_TOKEN` a token."""
    chars = 0
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            chars += len(str(block.get("text", "")))
        elif kind == "thinking":
            chars += len(str(block.get("thinking", "")))
        elif kind == "tool_use":
            chars += len(json.dumps(block.get("input", {}), ensure_ascii=False, separators=(",", ":")))
    return math.ceil(chars / OUTPUT_CHARS_PER_TOKEN)


def _message(entry: Entry) -> Mapping[str, Any] | None:
    message = entry.get("message")
    return message if isinstance(message, Mapping) else None


def _blocks(entry: Entry) -> list[Mapping[str, Any]]:
    message = _message(entry)
    content = message.get("content") if message is not None else None
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


def messages(entries: Iterable[Entry]) -> list[Message]:
    """The assistant replies in order of first appearance, one per `message.id` (the last usage wins)."""
    merged: dict[str, dict[str, Any]] = {}
    for index, entry in enumerate(entries):
        if entry.get("type") != "assistant":
            continue
        message = _message(entry)
        if message is None:
            continue
        key = message.get("id") or entry.get("uuid") or f"#{index}"
        slot = merged.setdefault(
            str(key), {"model": "", "usage": None, "blocks": [], "synthetic": False, "stopped": False}
        )
        slot["model"] = str(message.get("model") or slot["model"])
        if isinstance(message.get("usage"), Mapping):
            slot["usage"] = message["usage"]
        slot["blocks"].extend(_blocks(entry))
        slot["synthetic"] |= entry.get("isApiErrorMessage") is True or message.get("model") == "<synthetic>"
        slot["stopped"] |= isinstance(message.get("stop_reason"), str) and bool(message["stop_reason"])
    return [_merged(key, slot) for key, slot in merged.items()]


def _merged(key: str, slot: Mapping[str, Any]) -> Message:
    usage = usage_of(slot["usage"])
    mid_stream = slot["usage"] is not None and not slot["stopped"] and not slot["synthetic"]
    recorded = usage.output
    if mid_stream:
        usage = dataclasses.replace(usage, output=max(recorded, output_floor(slot["blocks"])))
    return Message(
        id=key,
        model=slot["model"],
        usage=usage,
        blocks=tuple(slot["blocks"]),
        synthetic=slot["synthetic"],
        mid_stream=mid_stream,
        recorded_output=recorded,
    )


def turns(entries: Iterable[Entry]) -> list[Message]:
    """The model's replies (synthetic API-error replies left out)."""
    return [m for m in messages(entries) if not m.synthetic]


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping) and part.get("type") == "text"
        )
    return ""


def block_chars(block: Mapping[str, Any]) -> int:
    """Characters of one content block as `body_chars` counts them (text, thinking, tool input as
    compact JSON, a tool result's text)."""
    kind = block.get("type")
    if kind == "text":
        return len(str(block.get("text", "")))
    if kind == "thinking":
        return len(str(block.get("thinking", "")))
    if kind == "tool_use":
        return len(json.dumps(block.get("input", {}), ensure_ascii=False, separators=(",", ":")))
    if kind == "tool_result":
        return len(_text_of(block.get("content")))
    return 0


def body_chars(entries: Iterable[Entry]) -> int:
    """Characters of the message bodies: prompts, text, thinking, tool inputs (JSON) and tool results."""
    total = 0
    for entry in entries:
        if entry.get("type") not in ("user", "assistant") or entry.get("isApiErrorMessage") is True:
            continue
        message = _message(entry)
        content = message.get("content") if message is not None else None
        if isinstance(content, str):
            total += len(content)
        else:
            total += sum(block_chars(block) for block in _blocks(entry))
    return total


def tool_uses(entries: Iterable[Entry]) -> list[Mapping[str, Any]]:
    """Every `tool_use` block of the model's replies, in order, once per call id."""
    seen: set[str] = set()
    found = []
    for message in turns(entries):
        for block in message.blocks:
            if block.get("type") != "tool_use":
                continue
            call_id = str(block.get("id", ""))
            if call_id and call_id in seen:
                continue
            seen.add(call_id)
            found.append(block)
    return found


def result_texts(entries: Iterable[Entry]) -> dict[str, str]:
    """`tool_use_id -> the text of its result` as the transcript holds it (what stayed resident)."""
    texts: dict[str, str] = {}
    for entry in entries:
        if entry.get("type") != "user":
            continue
        for block in _blocks(entry):
            if block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
                texts[block["tool_use_id"]] = _text_of(block.get("content"))
    return texts


def denial_count(entries: Iterable[Entry], kinds: Sequence[str] = ("permission-rule",)) -> int:
    """Calls refused by a hook or a rule: `toolDenialKind`, or the CLI's fixed sentence in an old-format
    entry that names its own call (`flower.stores._rewrite.denial_kind`)."""
    from ..stores._rewrite import denial_kind, tool_calls

    listed = [dict(entry) for entry in entries]
    calls = tool_calls(listed)
    return sum(1 for entry in listed if denial_kind(entry, calls) in kinds)


def is_compaction(subpath: str) -> bool:
    """Whether a subagent transcript is the CLI's compaction worker (`subagents/agent-acompact-*`)."""
    return subpath.rsplit("/", 1)[-1].startswith(_COMPACTION)


def refused_calls(entries: Iterable[Entry]) -> set[str]:
    """Ids of the calls the CLI refused before the tool ran (their result is a `<tool_use_error>`)."""
    refused = set()
    for entry in entries:
        if entry.get("type") != "user":
            continue
        for block in _blocks(entry):
            if block.get("type") != "tool_result" or not isinstance(block.get("tool_use_id"), str):
                continue
            if refused_by_cli(block.get("is_error"), block.get("content")):
                refused.add(block["tool_use_id"])
    return refused


def api_error_count(entries: Iterable[Entry]) -> int:
    """Failed API requests: an `api_error` system entry per retry, a synthetic reply when retries ran out."""
    return sum(1 for entry in entries if _is_api_error(entry))


def _is_api_error(entry: Entry) -> bool:
    if entry.get("type") == "system":
        return entry.get("subtype") == "api_error"
    return entry.get("type") == "assistant" and entry.get("isApiErrorMessage") is True


def prompts(entries: Sequence[Entry]) -> list[tuple[int, str]]:
    """`(index, text)` of each prompt of a main transcript: a user entry holding text, not tool results.

    Compaction summaries, meta entries, subagent entries, the CLI's own messages (`promptSource:
    "system"`, e.g. a background subagent's task notification) and its "[Request interrupted by user]"
    marker are not prompts (`flower.stores._rewrite.is_prompt`).
    """
    from ..stores._rewrite import is_prompt

    found = []
    for index, entry in enumerate(entries):
        if not is_prompt(dict(entry)):
            continue
        message = _message(entry)
        found.append((index, _text_of(message.get("content") if message is not None else "")))
    return found


def mandates(entries: Iterable[Entry]) -> list[str]:
    """The `prompt` of every Agent call: the mandates, which stay in the caller's context for good."""
    return [
        str(block.get("input", {}).get("prompt", ""))
        for block in tool_uses(entries)
        if block.get("name") in ("Agent", "Task") and isinstance(block.get("input"), Mapping)
    ]


def _words(text: str) -> list[tuple[str, int, int]]:
    return [(m.group().lower().strip(".`'"), m.start(), m.end()) for m in _WORD.finditer(text)]


def restated_chars(mandate: str, rules: Iterable[str], n: int = RESTATE_WORDS) -> int:
    """Characters of `mandate` covered by runs of `n`+ words that also appear, in order, in `rules`.

    It detects restating by copying, not paraphrase: a lower bound of what a mandate repeats.
    """
    if n < 1:
        raise ValueError("n must be >= 1")
    shingles: set[tuple[str, ...]] = set()
    for rule in rules:
        words = [w for w, _, _ in _words(rule)]
        shingles.update(tuple(words[i : i + n]) for i in range(len(words) - n + 1))
    found = _words(mandate)
    covered = [False] * len(found)
    for i in range(len(found) - n + 1):
        if tuple(w for w, _, _ in found[i : i + n]) in shingles:
            for j in range(i, i + n):
                covered[j] = True
    chars = 0
    span_start: int | None = None
    for index, (_, start, end) in enumerate(found):
        if covered[index]:
            span_start = start if span_start is None else span_start
            if index + 1 == len(found) or not covered[index + 1]:
                chars += end - span_start
                span_start = None
    return chars


def hit_rate(usage: TokenUsage) -> float | None:
    """Cache reads over all context tokens (input + cache read + cache creation); None with no context."""
    return usage.cache_read / usage.context if usage.context else None
