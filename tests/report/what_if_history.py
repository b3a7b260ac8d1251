"""A small Claude Code history laid out as the CLI keeps it, and an independent count of what it holds.

`history(root)` writes `root/projects/<project>/<session>.jsonl` (subagents in `<session>/subagents/`):

- `-home-me-alpha/S1`: a Bash output of 8,000 chars (spilled), a glance (`ls`), then the end: costs
  chosen so the spill's replay can be priced by hand (`S1_*`);
- `-home-me-alpha/S2`: two ephemeral results and two denied calls, a pause of two hours, a resume (cold),
  then another within a minute (warm); writes to the 1-hour cache;
- `-home-me-beta/S3`: a big Read, a compaction, and a worker whose transcript holds a big Bash output
  with a value its final reply quotes.

`independent_counts(path)` counts, from the raw lines and without flower's functions, the outputs a spill
would take, the cold resumes and the compactions of one session.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.stores.transcripts import Transcript

MODEL = "claude-sonnet-4-6"
SECRET_PROMPT = "SECRET-PROMPT-do-not-print"
SECRET_OUTPUT = "SECRET-OUTPUT-do-not-print"
S1 = "11111111-1111-4111-8111-111111111111"
S2 = "22222222-2222-4222-8222-222222222222"
S3 = "33333333-3333-4333-8333-333333333333"
CWD = "/home/me/alpha"
S1_BIG = SECRET_OUTPUT + "\n" + "x" * (8_000 - len(SECRET_OUTPUT) - 1)
S1_USAGE = (  # (input, cache_read, 5-minute write, output) of S1's three replies
    (10, 0, 20_000, 100),
    (10, 20_000, 2_100, 50),
    (10, 22_200, 10, 20),
)
SPILL_TOOLS = ("Bash", "Read", "Grep", "Glob", "WebFetch", "WebSearch")


def _use(entries: list[dict[str, Any]], usage: tuple[int, int, int, int], hour: bool = False) -> None:
    plain, read, written, output = usage
    for entry in entries:
        entry["message"]["model"] = MODEL
        entry["message"]["usage"] = {
            "input_tokens": plain,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written,
            "cache_creation": {
                "ephemeral_5m_input_tokens": 0 if hour else written,
                "ephemeral_1h_input_tokens": written if hour else 0,
            },
            "output_tokens": output,
        }


def _s1() -> Transcript:
    t = Transcript(session_id=S1)
    t.prompt(f"Run the generator. {SECRET_PROMPT}")
    _use(t.assistant(t.bash("python3 gen.py", "b1")), S1_USAGE[0])
    t.result("b1", S1_BIG)
    _use(t.assistant(t.bash("ls", "b2")), S1_USAGE[1])
    t.result("b2", "a.txt")
    _use(t.assistant({"type": "text", "text": "Done."}), S1_USAGE[2])
    for entry in t.entries:
        entry["cwd"] = CWD
    return t


def _s2() -> Transcript:
    t = Transcript(session_id=S2)
    t.prompt("Check the tree.")
    context = 30_000
    for number, command in enumerate(("git status", "git log --oneline -5")):
        _use(t.assistant(t.bash(command, f"g{number}")), (5, context, 500, 40), hour=True)
        t.result(f"g{number}", f"line {number}\n" * 100)
        context += 500
    for number in range(2):
        _use(t.assistant(t.bash("rm -rf build", f"d{number}")), (5, context, 100, 30), hour=True)
        t.result(f"d{number}", "PreToolUse:Bash hook error: delegate", denial="permission-rule")
        context += 100
    _use(t.assistant({"type": "text", "text": "Clean."}), (5, context, 50, 10), hour=True)
    t.pause(7_200)
    t.resume("Go on.")  # a new process two hours later: cold
    _use(t.assistant({"type": "text", "text": "Going on."}), (5, 0, context, 10), hour=True)
    t.pause(30)
    t.resume("And then?")  # another process half a minute later: warm
    _use(t.assistant({"type": "text", "text": "Then this."}), (5, context, 40, 10), hour=True)
    return t


def _s3() -> tuple[Transcript, Transcript]:
    t = Transcript(session_id=S3)
    sub = Transcript(session_id=S3)
    t.prompt("Read the log.")
    _use(t.assistant(t.call("Read", {"file_path": "/home/me/beta/log.txt"}, "r1")), (5, 0, 15_000, 30))
    content = "\n".join(f"log line {i:04d} " + "y" * 40 for i in range(120))
    entry = t.result("r1", "\n".join(f"{i + 1:6d}\t{line}" for i, line in enumerate(content.split("\n"))))
    entry["toolUseResult"] = {
        "type": "text",
        "file": {"filePath": "/home/me/beta/log.txt", "content": content, "numLines": 120, "startLine": 1},
    }
    _use(
        t.assistant(t.call("Agent", {"prompt": "Count the errors.", "subagent_type": "w"}, "a1")),
        (5, 15_000, 2_000, 20),
    )
    t.result("a1", "3 errors.")
    _use(t.assistant({"type": "text", "text": "Three."}), (5, 17_000, 30, 10))
    t.compact_summary("Summary: the log was read and has three errors.")
    t.prompt("Next.")
    _use(t.assistant({"type": "text", "text": "Next done."}), (5, 0, 6_000, 10))
    sub.prompt("Count the errors.")
    _use(sub.assistant(sub.bash("grep -c error log.txt && cat log.txt", "s1")), (5, 0, 4_000, 20))
    sub.result("s1", "E" * 2_500 + " ERR-4711=disk " + "E" * 2_500)  # a value the preview hides
    _use(sub.assistant({"type": "text", "text": "3 errors, one is ERR-4711=disk."}), (5, 4_000, 1_300, 10))
    return t, sub


def _write(path: Path, entries: Iterable[dict[str, Any]], damaged: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(e) for e in entries]
    if damaged is not None:
        lines.insert(damaged, '{"type": "user", "message": {"role": "us')  # cut short: not JSON
    path.write_text("\n".join(lines) + "\n")


def history(root: Path, *, damaged: bool = True) -> Path:
    """Write the history under `root/projects`; return that directory. S2's file has a damaged line 3."""
    projects = root / "projects"
    alpha, beta = projects / "-home-me-alpha", projects / "-home-me-beta"
    _write(alpha / f"{S1}.jsonl", _s1().entries)
    _write(alpha / f"{S2}.jsonl", _s2().entries, damaged=2 if damaged else None)
    main, sub = _s3()
    for entry in main.entries:  # a day later than the others, for --since
        if isinstance(entry.get("timestamp"), str):
            entry["timestamp"] = entry["timestamp"].replace("2026-11-29", "2026-11-30")
    _write(beta / f"{S3}.jsonl", main.entries)
    _write(beta / S3 / "subagents" / "agent-a1.jsonl", sub.entries)
    return projects


def _lines(path: Path) -> list[dict[str, Any]]:
    found = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def _big(value: Any, tool: str, top: bool = True) -> bool:
    """A string of 4,000 chars or more anywhere in the output (lists left alone, as by default)."""
    if isinstance(value, str):
        return len(value) >= 4_000
    if not isinstance(value, dict):
        return False
    if top and (
        (tool == "Read" and value.get("type") != "text") or (tool == "Bash" and value.get("isImage"))
    ):
        return False
    size = value.get("persistedOutputSize")
    if top and tool == "Bash" and isinstance(size, int) and size >= 4_000:
        return True
    return any(_big(v, tool, False) for k, v in value.items() if k != "base64")


def _spillable(entries: list[dict[str, Any]]) -> int:
    names = {
        block["id"]: block["name"]
        for e in entries
        if e.get("type") == "assistant"
        for block in e["message"].get("content", [])
        if isinstance(block, dict) and block.get("type") == "tool_use"
    }
    count = 0
    for e in entries:
        content = (e.get("message") or {}).get("content") if e.get("type") == "user" else None
        results = [b for b in content or [] if isinstance(b, dict) and b.get("type") == "tool_result"]
        for block in results if isinstance(content, list) else []:
            tool = names.get(block.get("tool_use_id"), "")
            if tool not in SPILL_TOOLS or block.get("is_error"):
                continue
            output = e.get("toolUseResult") if len(results) == 1 else None
            if not isinstance(output, dict | str):
                text = block.get("content")
                output = text if isinstance(text, str) else "\n".join(p.get("text", "") for p in text or [])
            count += _big(output, tool)
    return count


def _when(entry: dict[str, Any]) -> float | None:
    stamp = entry.get("timestamp")
    return (
        datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() if isinstance(stamp, str) else None
    )


def _cold_resumes(entries: list[dict[str, Any]]) -> int:
    """Prompts the CLI marked as a new process (a SessionStart:resume hook entry before them, as a
    `progress` entry or an `attachment`; or, in a history without `cost-state` lines, a `mode` line of a
    CLI 2.1.327 or later after them), after the cache's lifetime (1 hour when the last reply wrote 1-hour
    cache, else 5 min) since the last request (a reply the CLI wrote itself, `<synthetic>`, was none)."""
    prompts: list[tuple[float, float, bool]] = []  # (idle, lifetime, marked) of each prompt after a request
    last_message: dict[str, Any] | None = None
    lifetime = 300.0
    hooked = False
    last_version: object = None
    for e in entries:
        kind = e.get("type")
        record = (e.get("data") if kind == "progress" else e.get("attachment")) or {}
        hooked = hooked or (
            kind in ("progress", "attachment") and record.get("hookName") == "SessionStart:resume"
        )
        content = (e.get("message") or {}).get("content")
        prompt = (
            kind == "user"
            and not e.get("isMeta")
            and not e.get("isCompactSummary")
            and not e.get("isSidechain")
            and "toolUseResult" not in e
            and (isinstance(content, str) or not any(b.get("type") == "tool_result" for b in content or []))
        )
        version = [int(part) for part in str(last_version).split(".") if part.isdigit()]
        if kind == "mode" and prompts and version >= [2, 1, 327]:
            prompts[-1] = (prompts[-1][0], prompts[-1][1], True)
        if prompt:
            last_version = e.get("version")
        if prompt and last_message is not None:
            idle = (_when(e) or 0) - (_when(last_message) or 0)
            prompts.append((idle, lifetime, hooked))
            hooked = False
        synthetic = (e.get("message") or {}).get(
            "model"
        ) == "<synthetic>"  # no request: "No response requested."
        if kind in ("user", "assistant") and not e.get("isApiErrorMessage") and not synthetic:
            last_message = e
            usage = (e.get("message") or {}).get("usage") or {}
            if kind == "assistant" and (usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens"):
                lifetime = 3_600.0
            elif kind == "assistant" and (usage.get("cache_creation") or {}).get("ephemeral_5m_input_tokens"):
                lifetime = 300.0
    return sum(1 for idle, life, marked in prompts if marked and idle >= life)


def independent_counts(main: Path) -> dict[str, int]:
    """`{"spilled", "cold_resumes", "compactions"}` of the session whose main transcript is `main`."""
    entries = _lines(main)
    spilled = _spillable(entries)
    for sub in sorted((main.with_suffix("") / "subagents").glob("*.jsonl")):
        if not sub.name.startswith("agent-acompact"):
            spilled += _spillable(_lines(sub))
    return {
        "spilled": spilled,
        "cold_resumes": _cold_resumes(entries),
        "compactions": sum(
            1 for e in entries if e.get("type") == "system" and e.get("subtype") == "compact_boundary"
        ),
    }
