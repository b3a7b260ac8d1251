"""The span tree of one run, from its transcripts, its `StepResult` and its events. Pure.

::

    invoke_agent lead                the run (root): StepResult's usage and cost, flower.* figures
      chat claude-…                  each reply of the main thread (and each keep-warm ping)
      execute_tool Agent             each tool call
        invoke_agent counter         the delegation, over the worker's own transcript
          chat … / execute_tool …    the worker's replies and calls
      …

A background worker's span hangs under the Agent call that launched it, and outlives it. Every span
carries the session's id as its `gen_ai.conversation.id` (and OpenInference's `session.id`), a worker's
too: a worker is part of the session that delegated to it (its own id is `gen_ai.agent.id`). A handoff's
sessions all belong to the run: their spans sit under the same root, each with its own session's id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .._result import StepResult
from .._usage import TokenUsage
from ..events import ApiError, Event, HandoffDone, KeepWarmPing, StoreReport, SubagentFinished
from . import _names as n
from ._entries import Entry, blocks, messages_json, string_content
from ._messages import text_io
from ._spans import AttrValue, SpanEvent, SpanSpec, ThreadSpans, Where, thread_spans, usage_attributes

ROOT = "run"
_FAILED = ("failed", "killed", "stopped")
_MAX_DEPTH = 8  # a worker's worker's ...: the CLI allows a few levels; a loop in bad data stops here


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    """What one run left behind, as the builder reads it."""

    agent: str
    """The main thread's agent name."""
    start_ns: int
    end_ns: int
    sessions: Sequence[tuple[str, Sequence[Entry]]]
    """(session id, slim main-transcript entries of this run), oldest first: more than one after a handoff."""
    workers: Mapping[str, Sequence[Entry]]
    """The CLI's agent id -> that worker's slim entries."""
    spills: Sequence[Mapping[str, object]] = ()
    """Rows of the workbench's spill manifest."""
    result: StepResult | None = None
    """The run's result (live); None after the fact, when the figures come from the transcripts."""
    events: Sequence[tuple[int, Event]] = ()
    """(time in ns, event) of the run, live."""
    content: bool = False
    requests: bool = True
    """chat and execute_tool spans; False when the CLI traces its requests and tools itself."""


@dataclass
class _Totals:
    usage: TokenUsage
    cost: float
    delegations: int = 0


def build_run_spans(run: RunRecord) -> list[SpanSpec]:
    """Every span of the run, the root first, then parents before their children."""
    spills = {str(r.get("tool_use_id")): r for r in run.spills if r.get("tool_use_id")}
    specs: list[SpanSpec] = []
    main_totals = _Totals(TokenUsage(), 0.0)
    worker_totals = _Totals(TokenUsage(), 0.0)
    model = ""
    by_tool = _workers_by_tool(run.workers)
    for session_id, entries in run.sessions:
        where = Where(ROOT, run.agent, session_id, spills, run.content, run.requests)
        thread = thread_spans(entries, where)
        specs.extend(thread.specs)
        main_totals.usage = main_totals.usage + thread.usage
        main_totals.cost += thread.cost
        model = model or thread.model
        _delegations(run, thread, session_id, by_tool, spills, specs, worker_totals, depth=1)
    root = _root(run, specs, main_totals, worker_totals, model, spills)
    return [root, *specs, *_pings(run)]


def _pings(run: RunRecord) -> list[SpanSpec]:
    """A chat span per keep-warm ping (`KeepWarmPing`), under the root: it is no entry of the session."""
    specs = []
    for i, (at, ping) in enumerate((at, e) for at, e in run.events if isinstance(e, KeepWarmPing)):
        attrs: dict[str, AttrValue] = {
            n.OPERATION: n.CHAT,
            n.PROVIDER_NAME: n.PROVIDER,
            n.REQUEST_MODEL: ping.model,
            n.CONVERSATION: ping.session_id,
            **usage_attributes(ping.usage),
            n.COST: ping.cost_usd,
            n.KEEP_WARM: True,
            n.KEEP_WARM_NUMBER: ping.number,
            n.KEEP_WARM_WAITED: ping.waited_s,
        }
        error = None if ping.ok else (ping.error or "the ping failed")[:500]
        if error is not None:
            attrs[n.ERROR_TYPE] = "cancelled" if ping.cancelled else "keep_warm_failed"
        start = at - int(ping.duration_s * 1e9)
        name = f"{n.CHAT} {ping.model}".strip()
        specs.append(SpanSpec(f"warm:{i}", ROOT, name, "CLIENT", start, at, attrs, error))
    return specs


def _workers_by_tool(workers: Mapping[str, Sequence[Entry]]) -> dict[str, str]:
    """tool_use id of the Agent call -> agent id, from each worker's own metadata entry."""
    found: dict[str, str] = {}
    for agent_id, entries in workers.items():
        for entry in entries:
            if entry.get("type") == "agent_metadata" and isinstance(entry.get("toolUseId"), str):
                found.setdefault(entry["toolUseId"], agent_id)
    return found


def _delegations(
    run: RunRecord,
    caller: ThreadSpans,
    session_id: str,
    by_tool: Mapping[str, str],
    spills: Mapping[str, Mapping[str, object]],
    specs: list[SpanSpec],
    totals: _Totals,
    depth: int,
) -> None:
    for tool_id, call in caller.calls.items():
        agent_id = call.agent_id or by_tool.get(tool_id)
        entries = run.workers.get(agent_id or "")
        if agent_id is None or entries is None or depth > _MAX_DEPTH:
            continue
        name = call.subagent_type or _agent_type(entries) or "subagent"
        parent = call.key if run.requests else ROOT
        key = f"agent:{agent_id}"
        thread = thread_spans(entries, Where(key, name, session_id, spills, run.content, run.requests))
        totals.usage = totals.usage + thread.usage
        totals.cost += thread.cost
        totals.delegations += 1
        background = call.background or any(e.get("requestShape") == "background" for e in entries)
        attrs: dict[str, AttrValue] = {
            n.OPERATION: n.INVOKE_AGENT,
            n.PROVIDER_NAME: n.PROVIDER,
            n.AGENT_NAME: name,
            n.AGENT_ID: agent_id,
            n.CONVERSATION: session_id,
            n.OI_KIND: "AGENT",
            n.OI_SESSION: session_id,
            n.REQUEST_MODEL: thread.model,
            **usage_attributes(thread.usage),
            n.COST: thread.cost,
            n.CLI_AGENT_ID: agent_id,
            n.TOOL_CALL_ID: tool_id,
            n.BACKGROUND: background,
            n.MANDATE_CHARS: call.mandate_chars,
        }
        finished = [
            e
            for _, e in run.events
            if isinstance(e, SubagentFinished) and (e.tool_use_id == tool_id or e.task_id == agent_id)
        ]
        error = None
        if finished:
            attrs[n.STATUS] = finished[-1].status
            attrs[n.REPORT_CHARS] = len(finished[-1].summary)
            if finished[-1].status in _FAILED:
                error = attrs[n.ERROR_TYPE] = finished[-1].status
        start = thread.first_ns if thread.first_ns is not None else call.start_ns
        end = thread.last_ns if thread.last_ns is not None else call.end_ns
        name_span = f"{n.INVOKE_AGENT} {name}"
        specs.append(SpanSpec(key, parent, name_span, "INTERNAL", start, max(end, start), attrs, error))
        specs.extend(thread.specs)
        _delegations(run, thread, session_id, by_tool, spills, specs, totals, depth + 1)


def _agent_type(entries: Sequence[Entry]) -> str:
    for entry in entries:
        if entry.get("type") == "agent_metadata" and isinstance(entry.get("agentType"), str):
            return str(entry["agentType"])
    return ""


def _root(
    run: RunRecord,
    specs: Sequence[SpanSpec],
    main: _Totals,
    workers: _Totals,
    model: str,
    spills: Mapping[str, Mapping[str, object]],
) -> SpanSpec:
    result = run.result
    usage = result.usage.total if result is not None else main.usage + workers.usage
    cost = result.cost_usd if result is not None else main.cost + workers.cost
    calls = {
        str(s.attributes.get(n.TOOL_CALL_ID))
        for s in specs
        if s.attributes.get(n.OPERATION) == n.EXECUTE_TOOL
    }
    if not run.requests:  # no tool spans: the spills of the run's own calls, from its transcripts
        calls = {
            str(b.get("id"))
            for _, es in run.sessions
            for e in es
            for b in blocks(e)
            if b.get("type") == "tool_use"
        }
        calls |= {
            str(b.get("id"))
            for es in run.workers.values()
            for e in es
            for b in blocks(e)
            if b.get("type") == "tool_use"
        }
    spilled = [spills[c] for c in sorted(calls) if c in spills]
    last_session = run.sessions[-1][0] if run.sessions else ""
    session = (result.session_id if result is not None else None) or last_session
    attrs: dict[str, AttrValue] = {
        n.OPERATION: n.INVOKE_AGENT,
        n.PROVIDER_NAME: n.PROVIDER,
        n.AGENT_NAME: run.agent,
        n.CONVERSATION: session,
        n.OI_KIND: "AGENT",
        n.OI_SESSION: session,
        n.REQUEST_MODEL: model,
        **usage_attributes(usage),
        n.COST: cost,
        n.DELEGATIONS: workers.delegations,
        n.SPILLS: len(spilled),
        n.SPILL_CHARS: sum(int(str(r.get("chars") or 0)) for r in spilled),
        n.SPILL_PATHS: [f"spill/{r.get('file')}" for r in spilled],
    }
    denials = _denials(run, specs)
    attrs[n.DENIALS] = len(denials)
    attrs[n.DENIED_TOOLS] = denials
    error: str | None = None
    if result is not None:
        attrs.update(
            {
                n.RUN_OK: result.ok,
                n.CLI_COST: result.cli_cost_usd,
                n.TURNS: result.num_turns,
                n.PEAK_CONTEXT: result.peak_context,
                n.HANDOFFS: len(result.retired),
                n.RETIRED: list(result.retired),
            }
        )
        if not result.ok:
            attrs[n.ERROR_TYPE] = "run_failed"
            error = (result.error or "the run failed")[:500]
        if run.content and result.text:
            attrs[n.OUTPUT_MESSAGES] = messages_json("assistant", [{"type": "text", "content": result.text}])
            attrs.update(text_io(None, result.text))
    else:
        attrs[n.HANDOFFS] = max(0, len(run.sessions) - 1)
    if run.content:
        prompt = next((string_content(e) for _, es in run.sessions for e in es if _is_prompt(e)), None)
        if prompt:
            attrs[n.INPUT_MESSAGES] = messages_json("user", [{"type": "text", "content": prompt}])
            attrs.update(text_io(prompt, None))
        if result is None:  # after the fact: the run's last reply is its answer
            answer = _last_text(run)
            if answer:
                attrs[n.OUTPUT_MESSAGES] = messages_json("assistant", [{"type": "text", "content": answer}])
                attrs.update(text_io(None, answer))
    attrs.update(_store_attributes(run.events))
    errors = [e for _, e in run.events if isinstance(e, ApiError)]
    if errors:
        attrs[n.API_ERRORS] = len(errors)
    name = f"{n.INVOKE_AGENT} {run.agent}"
    return SpanSpec(
        ROOT, None, name, "INTERNAL", run.start_ns, max(run.end_ns, run.start_ns), attrs, error, _events(run)
    )


def _last_text(run: RunRecord) -> str:
    """The text of the main thread's last reply that has some (the run's answer)."""
    for _, entries in reversed(run.sessions):
        for entry in reversed(entries):
            if entry.get("type") != "assistant":
                continue
            texts = [str(b.get("text")) for b in blocks(entry) if b.get("type") == "text" and "text" in b]
            if texts:
                return "\n".join(texts)
    return ""


def _is_prompt(entry: Entry) -> bool:
    return (
        entry.get("type") == "user"
        and entry.get("promptSource") != "system"
        and string_content(entry) is not None
    )


def _denials(run: RunRecord, specs: Sequence[SpanSpec]) -> list[str]:
    if run.result is not None:
        return list(run.result.denials)
    return [str(s.attributes.get(n.TOOL_NAME)) for s in specs if s.attributes.get(n.DENIED) is True]


def _store_attributes(events: Sequence[tuple[int, Event]]) -> dict[str, AttrValue]:
    reports = [e.report for _, e in events if isinstance(e, StoreReport)]
    if not reports:
        return {}
    return {
        n.RESUMED: True,
        n.STORE_EXPIRED: sum(len(r.expired) for r in reports),
        n.STORE_TRIMMED: sum(len(r.trimmed) for r in reports),
        n.STORE_PRUNED: sum(len(r.pruned) for r in reports),
        n.STORE_SAVED: sum(r.chars_saved for r in reports),
    }


def _events(run: RunRecord) -> tuple[SpanEvent, ...]:
    found: list[SpanEvent] = []
    for at, event in run.events:
        if isinstance(event, HandoffDone):
            attrs: dict[str, AttrValue] = {
                "flower.handoff.generation": event.generation,
                "flower.handoff.retired": event.retired,
                "flower.handoff.reason": event.reason,
                "flower.handoff.degraded": event.degraded,
                "flower.handoff.context": event.context,
            }
            found.append(SpanEvent("flower.handoff", at, attrs))
        elif isinstance(event, StoreReport):
            report = event.report
            attrs = {
                "flower.store.subpath": report.subpath or "",
                "flower.store.entries_in": report.entries_in,
                "flower.store.entries_out": report.entries_out,
                n.STORE_EXPIRED: len(report.expired),
                n.STORE_TRIMMED: len(report.trimmed),
                n.STORE_PRUNED: len(report.pruned),
                n.STORE_SAVED: report.chars_saved,
                "flower.store.warm": report.warm,
            }
            found.append(SpanEvent("flower.store.rewrite", at, attrs))
        elif isinstance(event, ApiError):
            attrs = {"flower.api_error.retrying": event.retrying}
            if event.status is not None:
                attrs["http.response.status_code"] = event.status
            found.append(SpanEvent("flower.api_error", at, attrs))
    return tuple(found)
