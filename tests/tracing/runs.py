"""A run's transcripts for the tracing tests: a main thread with a denial, a refusal and a delegation,
and the worker's own transcript, each entry as the CLI writes it (times one second apart)."""

from __future__ import annotations

from typing import Any

from flower.tracing._build import RunRecord
from flower.tracing._entries import slim_all


def at(second: float) -> str:
    return f"2026-12-01T15:43:{second:06.3f}Z"


def usage(output: int, read: int, write: int = 0, fresh: int = 2) -> dict[str, int]:
    return {
        "input_tokens": fresh,
        "output_tokens": output,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
    }


def reply(
    second: float, ident: str, blocks: list[dict[str, Any]], used: dict[str, int], stop: str
) -> dict[str, Any]:
    message = {"id": ident, "model": "claude-opus-5-5", "stop_reason": stop, "usage": used, "content": blocks}
    return {"type": "assistant", "uuid": f"u-{ident}-{second}", "timestamp": at(second), "message": message}


def result(second: float, tool_id: str, text: str, **extra: Any) -> dict[str, Any]:
    block = {
        "type": "tool_result",
        "tool_use_id": tool_id,
        "content": text,
        "is_error": extra.pop("is_error", False),
    }
    entry = {"type": "user", "uuid": f"r-{tool_id}", "timestamp": at(second), "message": {"content": [block]}}
    return {**entry, **extra}


SECRET = "the api key is sk-secret"
MAIN = [
    {"type": "user", "uuid": "p1", "timestamp": at(1), "promptSource": "sdk", "message": {"content": SECRET}},
    reply(
        2,
        "m1",
        [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "rm -rf /"}}],
        usage(10, 100),
        "tool_use",
    ),
    result(3, "t1", "Permission denied by a hook.", is_error=True, toolDenialKind="permission-rule"),
    reply(
        4,
        "m2",
        [
            {
                "type": "tool_use",
                "id": "t2",
                "name": "Agent",
                "input": {"subagent_type": "w", "prompt": SECRET},
            }
        ],
        usage(20, 200, 50),
        "tool_use",
    ),
    result(9, "t2", "REPORT: done", toolUseResult={"agentId": "a1", "agentType": "w", "prompt": SECRET}),
    reply(10, "m3", [{"type": "text", "text": "All " + SECRET}], usage(30, 300), "end_turn"),
]
WORKER = [
    {"type": "agent_metadata", "agentType": "w", "toolUseId": "t2", "requestShape": "foreground"},
    {"type": "user", "uuid": "w0", "timestamp": at(5), "message": {"content": SECRET}},
    reply(
        6,
        "w1",
        [{"type": "tool_use", "id": "t3", "name": "Write", "input": {"file_path": "REPORT.md"}}],
        usage(5, 50),
        "tool_use",
    ),
    result(7, "t3", "<tool_use_error>no</tool_use_error>", is_error=True),
    reply(8, "w2", [{"type": "text", "text": "REPORT: done"}], usage(6, 60), "end_turn"),
]


def record(content: bool = False, requests: bool = True, **extra: Any) -> RunRecord:
    return RunRecord(
        agent="lead",
        start_ns=1_000,
        end_ns=10**20,
        sessions=[("s1", slim_all(MAIN, content))],
        workers={"a1": slim_all(WORKER, content)},
        spills=[{"tool_use_id": "t3", "chars": 9000, "file": "abc-write.txt", "session_id": "s1"}],
        content=content,
        requests=requests,
        **extra,
    )


def by_key(specs: list[Any]) -> dict[str, Any]:
    return {s.key: s for s in specs}
