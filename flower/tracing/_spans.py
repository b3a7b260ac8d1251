"""The spans of one transcript: a `chat` span per model reply and an `execute_tool` span per tool call.

Pure: slim entries (`_entries.slim`) in, `SpanSpec`s out, with the transcript's own times. A reply is
every assistant entry sharing a `message.id`; the CLI repeats the reply's whole usage on each (CLI
2.1.332 writes the final figures; older CLIs wrote the stream's start values, so output may read low
there). A reply's span runs from the entry that preceded it (the prompt, a tool result) to its last
entry; a tool's, from the entry holding its `tool_use` to the one holding its result.

`ThreadReader` reads a transcript entry by entry and gives each span as soon as the transcript shows it
ended (a reply once the next reply begins, since the transcript marks no end of a reply and a reply's
entries may come between its calls' results; a tool call once its result is there), which is how a live
run exports them while it goes; `thread_spans` reads a whole transcript at once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from .._cost import price
from .._usage import TokenUsage
from . import _names as n
from ._entries import Entry, blocks, cut, ns
from ._messages import chat_content, input_messages, output_message, text_io

AttrValue: TypeAlias = str | bool | int | float | Sequence[str] | Sequence[int] | Sequence[float]
AGENT_TOOLS = ("Agent", "Task")


@dataclass(frozen=True)
class SpanEvent:
    """A timed event on a span (a handoff, a layer-4 rewrite, an API error)."""

    name: str
    time_ns: int
    attributes: Mapping[str, AttrValue] = field(default_factory=dict)


@dataclass(frozen=True)
class SpanSpec:
    """One span to emit. `parent` is another spec's `key`; None for the run's root."""

    key: str
    parent: str | None
    name: str
    kind: Literal["INTERNAL", "CLIENT"]
    start_ns: int
    end_ns: int
    attributes: Mapping[str, AttrValue]
    error: str | None = None
    """The span's status is ERROR with this description (`error.type` is in the attributes)."""
    events: tuple[SpanEvent, ...] = ()


def usage_attributes(usage: TokenUsage) -> dict[str, AttrValue]:
    """The GenAI usage attributes: `input_tokens` counts cached tokens too, as the conventions ask
    (the API's own `input_tokens` does not: it goes to `flower.usage.input_tokens`)."""
    written = usage.cache_creation + usage.cache_creation_1h
    return {
        n.INPUT_TOKENS: usage.context,
        n.OUTPUT_TOKENS: usage.output,
        n.CACHE_READ: usage.cache_read,
        n.CACHE_CREATION: written,
        n.CACHE_WRITE: written,
        n.UNCACHED_INPUT: usage.input,
    }


@dataclass
class AgentCall:
    """An Agent call of a transcript: its span and what the delegation span needs."""

    key: str
    subagent_type: str
    mandate_chars: int
    start_ns: int
    end_ns: int
    agent_id: str | None = None
    background: bool = False


@dataclass
class ThreadSpans:
    """What `thread_spans` found in one transcript."""

    specs: list[SpanSpec] = field(default_factory=list)
    calls: dict[str, AgentCall] = field(default_factory=dict)
    """tool_use id -> its Agent call, for the delegations."""
    usage: TokenUsage = field(default_factory=TokenUsage)
    by_model: dict[str, TokenUsage] = field(default_factory=dict)
    model: str = ""
    first_ns: int | None = None
    last_ns: int | None = None

    @property
    def cost(self) -> float:
        return sum(price([used], model=name).total for name, used in self.by_model.items())


@dataclass
class _Reply:
    message_id: str
    model: str
    start_ns: int
    entries: list[Entry] = field(default_factory=list)
    inputs: list[Entry] = field(default_factory=list)
    """The entries the reply answers (the prompt, the tool results since the previous reply)."""


@dataclass(frozen=True)
class Where:
    """Whose transcript: the span parent and the names its spans carry."""

    parent: str
    agent: str
    conversation: str
    spills: Mapping[str, Mapping[str, Any]]
    content: bool
    requests: bool = True
    """Emit chat and tool spans (False when the CLI's own spans describe them)."""


class ThreadReader:
    """One transcript, read entry by entry: `feed()` returns the spans an entry ended, `close()` the rest."""

    def __init__(self, where: Where) -> None:
        self.where = where
        self.out = ThreadSpans()
        self._reply: _Reply | None = None  # the latest reply: it ends when something else follows it
        self._pending: dict[str, tuple[Mapping[str, Any], int]] = {}  # tool_use id -> (block, start)
        self._last_input: int | None = None
        self._inputs: list[Entry] = []  # with content: what the next reply answers
        self._ended: set[str] = set()
        self._count = 0

    def feed(self, entry: Entry) -> list[SpanSpec]:
        """The spans `entry` ended (in order), after reading it."""
        before = len(self.out.specs)
        self._read(entry)
        return self.out.specs[before:]

    def close(self) -> list[SpanSpec]:
        """The spans still open at the end: the last reply, and calls without a result (the run ended)."""
        before = len(self.out.specs)
        self._end_reply()
        for block, start in self._pending.values():
            _tool(self.out, self.where, block, None, None, start, start)
            if self.where.requests:
                self.out.specs[-1] = _unfinished(self.out.specs[-1])
        self._pending.clear()
        return self.out.specs[before:]

    def _end_reply(self) -> None:
        if self._reply is not None:
            _chat(self.out, self.where, self._reply)
            self._ended.add(self._reply.message_id)  # a late entry of it is not a second reply
            self._reply = None

    def _read(self, entry: Entry) -> None:
        index, self._count = self._count, self._count + 1
        out, where = self.out, self.where
        stamp = ns(entry.get("timestamp"))
        if stamp is not None:
            out.first_ns = stamp if out.first_ns is None else min(out.first_ns, stamp)
            out.last_ns = stamp if out.last_ns is None else max(out.last_ns, stamp)
        kind = entry.get("type")
        message = entry.get("message")
        if kind == "assistant" and isinstance(message, Mapping):
            if entry.get("isApiErrorMessage") is True or message.get("model") == "<synthetic>":
                return
            ident = str(message.get("id") or entry.get("uuid") or f"#{index}")
            if (self._reply is None or self._reply.message_id != ident) and ident not in self._ended:
                self._end_reply()
                start = self._last_input if self._last_input is not None else stamp or 0
                self._reply = _Reply(ident, str(message.get("model") or ""), start, inputs=self._inputs)
                self._inputs = []
            if self._reply is not None and self._reply.message_id == ident:
                self._reply.entries.append(entry)
            start = self._reply.start_ns if self._reply is not None else 0
            for block in blocks(entry):
                if block.get("type") == "tool_use" and block.get("id"):
                    self._pending[str(block["id"])] = (block, stamp if stamp is not None else start)
        elif kind in ("user", "attachment", "system") and stamp is not None:
            # a reply's entries may come between its own calls' results (a call runs while the reply
            # streams on): only the next reply, or the end, says that a reply ended
            self._last_input = stamp
            if where.content and kind == "user":
                self._inputs.append(entry)
            for block in blocks(entry):
                call = (
                    self._pending.pop(str(block.get("tool_use_id")), None)
                    if block.get("type") == "tool_result"
                    else None
                )
                if call is not None:
                    _tool(out, where, call[0], block, entry, call[1], stamp)


def thread_spans(entries: Sequence[Entry], where: Where) -> ThreadSpans:
    """The chat and execute_tool spans of one transcript (main thread or a worker), under `where.parent`."""
    reader = ThreadReader(where)
    for entry in entries:
        reader.feed(entry)
    reader.close()
    return reader.out


def _chat(out: ThreadSpans, where: Where, reply: _Reply) -> None:
    last = reply.entries[-1]
    message: Mapping[str, Any] = last["message"]
    usage = TokenUsage.from_api(message.get("usage") if isinstance(message.get("usage"), Mapping) else None)
    out.usage = out.usage + usage
    out.by_model[reply.model] = out.by_model.get(reply.model, TokenUsage()) + usage
    out.model = out.model or reply.model
    if not where.requests:
        return
    end = max(ns(last.get("timestamp")) or reply.start_ns, reply.start_ns)
    attrs: dict[str, AttrValue] = {
        n.OPERATION: n.CHAT,
        n.PROVIDER_NAME: n.PROVIDER,
        n.REQUEST_MODEL: reply.model,
        n.RESPONSE_MODEL: reply.model,
        n.RESPONSE_ID: reply.message_id,
        n.CONVERSATION: where.conversation,
        n.AGENT_NAME: where.agent,
        **usage_attributes(usage),
        n.COST: price([usage], model=reply.model).total,
        n.OI_KIND: "LLM",
        n.OI_SESSION: where.conversation,
        n.OI_MODEL: reply.model,
        n.OI_PROVIDER: n.PROVIDER,
        n.OI_SYSTEM: n.PROVIDER,
        n.OI_PROMPT_TOKENS: usage.context,
        n.OI_COMPLETION_TOKENS: usage.output,
        n.OI_TOTAL_TOKENS: usage.context + usage.output,
        n.OI_CACHE_READ: usage.cache_read,
        n.OI_CACHE_WRITE: usage.cache_creation + usage.cache_creation_1h,
    }
    stop = message.get("stop_reason")
    if isinstance(stop, str) and stop:
        attrs[n.FINISH_REASONS] = [stop]
    if isinstance(last.get("requestId"), str):
        attrs[n.REQUEST_ID] = last["requestId"]
    if where.content:
        parts = [part for part in (_part(b) for e in reply.entries for b in blocks(e)) if part]
        attrs.update(chat_content(input_messages(reply.inputs), output_message(parts)))
    name = f"{n.CHAT} {reply.model}".strip()
    out.specs.append(
        SpanSpec(f"chat:{reply.message_id}", where.parent, name, "CLIENT", reply.start_ns, end, attrs)
    )


def _part(block: Mapping[str, Any]) -> dict[str, Any] | None:
    if block.get("type") == "text" and "text" in block:
        return {"type": "text", "content": block["text"]}
    if block.get("type") == "tool_use":
        return {
            "type": "tool_call",
            "id": block.get("id"),
            "name": block.get("name"),
            "arguments": block.get("input"),
        }
    return None


def _tool(
    out: ThreadSpans,
    where: Where,
    block: Mapping[str, Any],
    result: Mapping[str, Any] | None,
    entry: Entry | None,
    start: int,
    end: int,
) -> None:
    ident, name = str(block.get("id")), str(block.get("name"))
    if name in AGENT_TOOLS:
        raw = block.get("input")
        tool_input: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        call = AgentCall(
            f"tool:{ident}", str(tool_input.get("subagent_type") or ""), 0, start, max(end, start)
        )
        call.mandate_chars = int(block.get("prompt_chars") or 0)
        found = entry.get("toolUseResult") if entry is not None else None
        if isinstance(found, Mapping):
            call.agent_id = str(found["agentId"]) if found.get("agentId") else None
            call.background = found.get("isAsync") is True
            call.subagent_type = str(found.get("agentType") or call.subagent_type)
        out.calls[ident] = call
    if not where.requests:
        return
    attrs: dict[str, AttrValue] = {
        n.OPERATION: n.EXECUTE_TOOL,
        n.TOOL_NAME: name,
        n.TOOL_CALL_ID: ident,
        n.TOOL_TYPE: "function",
        n.CONVERSATION: where.conversation,
        n.AGENT_NAME: where.agent,
        n.OI_KIND: "TOOL",
        n.OI_TOOL_NAME: name,
        n.OI_SESSION: where.conversation,
    }
    error: str | None = None
    events: tuple[SpanEvent, ...] = ()
    said: str | None = None
    if result is not None and entry is not None:
        chars = attrs[n.RESULT_CHARS] = int(result.get("chars") or 0)
        denied = entry.get("toolDenialKind") == "permission-rule" or result.get("denied") is True
        if result.get("is_error") is True and entry.get("toolDenialKind") == "user-rejected":
            # stopped by the session's interrupt (flower's handoff, or the app's): on purpose, not an error
            attrs[n.INTERRUPTED] = True
            events = (SpanEvent(n.INTERRUPTED, max(end, start), {n.TOOL_NAME: name}),)
        elif result.get("is_error") is True and denied:  # the wall (or a rule) at work: not an error
            attrs[n.DENIED] = True
            detail: dict[str, AttrValue] = {n.TOOL_NAME: name, n.DENIAL_REASON_CHARS: chars}
            if where.content and "text" in result:
                detail[n.DENIAL_REASON] = str(result["text"])
            events = (SpanEvent(n.DENIED, max(end, start), detail),)
        elif result.get("is_error") is True:
            error = "refused" if result.get("refused") else "tool_error"
            attrs[n.ERROR_TYPE] = error
            attrs[n.TOOL_REFUSED] = result.get("refused") is True
        if where.content and "text" in result:
            said = attrs[n.TOOL_RESULT] = str(result["text"])
    spill = where.spills.get(ident)
    if spill is not None:
        attrs[n.SPILL_CHARS] = int(spill.get("chars") or 0)
        attrs[n.SPILL_PATH] = f"spill/{spill.get('file')}"
    if where.content:
        given = attrs[n.TOOL_ARGUMENTS] = cut(json.dumps(block.get("input") or {}, ensure_ascii=False))
        attrs.update(text_io(given, said))
    spec = SpanSpec(
        f"tool:{ident}",
        where.parent,
        f"{n.EXECUTE_TOOL} {name}",
        "INTERNAL",
        start,
        max(end, start),
        attrs,
        error,
        events,
    )
    out.specs.append(spec)


def _unfinished(spec: SpanSpec) -> SpanSpec:
    attrs = {**spec.attributes, n.ERROR_TYPE: "no_result"}
    return SpanSpec(
        spec.key, spec.parent, spec.name, spec.kind, spec.start_ns, spec.end_ns, attrs, "no result"
    )
