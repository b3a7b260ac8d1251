"""Tool output shapes (`tool_response` of PostToolUse) as the CLI 2.1.327 produces them.

Bash, Read, Grep and Glob are copied from the measured hook inputs and from runs of the real CLI (Bash's
`persistedOutputPath`/`persistedOutputSize` appear when an output passes 30,000 chars). WebFetch and
WebSearch cannot run offline; their shapes come from the output schemas in the CLI binary (`strings`):
WebFetch `{bytes, code, codeText, result, durationMs, url}`; WebSearch `{query, results: [hits | text],
durationSeconds, searchCount?}` where a hit is `{tool_use_id, content: [{title, url, snippet?}]}`.
"""

from __future__ import annotations

from typing import Any


def bash(stdout: str, stderr: str = "") -> dict[str, Any]:
    return {
        "stdout": stdout,
        "stderr": stderr,
        "interrupted": False,
        "isImage": False,
        "noOutputExpected": False,
    }


def read(content: str, path: str = "/ws/data.txt") -> dict[str, Any]:
    lines = content.count("\n") + 1
    return {
        "type": "text",
        "file": {
            "filePath": path,
            "content": content,
            "numLines": lines,
            "startLine": 1,
            "totalLines": lines,
        },
    }


def grep_content(content: str) -> dict[str, Any]:
    lines = content.count("\n") + 1
    return {
        "mode": "content",
        "numFiles": 0,
        "filenames": [],
        "content": content,
        "numLines": lines,
        "totalLines": lines,
    }


def grep_files(filenames: list[str]) -> dict[str, Any]:
    return {
        "mode": "files_with_matches",
        "filenames": filenames,
        "numFiles": len(filenames),
        "totalFiles": len(filenames),
    }


def glob(filenames: list[str]) -> dict[str, Any]:
    return {
        "filenames": filenames,
        "durationMs": 13,
        "numFiles": len(filenames),
        "truncated": False,
        "totalMatches": len(filenames),
        "countIsComplete": True,
    }


def web_fetch(result: str) -> dict[str, Any]:
    return {
        "bytes": len(result.encode()),
        "code": 200,
        "codeText": "OK",
        "result": result,
        "durationMs": 812,
        "url": "https://example.org/page",
    }


def web_search(commentary: str) -> dict[str, Any]:
    hits = [
        {"title": f"Result {i}", "url": f"https://example.org/{i}", "snippet": "s" * 300} for i in range(20)
    ]
    return {
        "query": "context economy",
        "results": [{"tool_use_id": "srvtoolu_1", "content": hits}, commentary],
        "durationSeconds": 1.5,
        "searchCount": 1,
    }


def read_image() -> dict[str, Any]:
    return {
        "type": "image",
        "file": {"base64": "iVBORw0KGgo" * 2000, "type": "image/png", "originalSize": 16000},
    }


def read_pdf() -> dict[str, Any]:
    return {
        "type": "pdf",
        "file": {"filePath": "/ws/a.pdf", "base64": "JVBERi0x" * 3000, "originalSize": 18000},
    }


def post_tool_use(
    tool: str, response: Any, tool_input: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    """A PostToolUse hook input (as measured), main thread unless `agent_id` is given."""
    return {
        "session_id": "be5a0000-0000-4000-8000-000000000000",
        "transcript_path": "/cfg/projects/ws/be5a.jsonl",
        "cwd": extra.pop("cwd", "/ws"),
        "permission_mode": "bypassPermissions",
        "hook_event_name": "PostToolUse",
        "tool_name": tool,
        "tool_input": tool_input or {},
        "tool_response": response,
        "tool_use_id": "toolu_01",
        **extra,
    }


def same_shape(a: Any, b: Any) -> bool:
    """Same keys in the same order and the same type at every leaf; list lengths may differ."""
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(same_shape(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and all(type(x) is type(y) for x, y in zip(a, b, strict=False))
    return type(a) is type(b)
