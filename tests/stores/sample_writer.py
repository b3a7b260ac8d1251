"""Writing a transcript the way the CLI writes one: the tool `sample_corpus.py` builds its sessions with.

One assistant entry per content block, sharing the reply's `message.id`, `requestId` and usage; a result's
parent the entry holding its call; queue operations before a prompt; hook entries, `mode` marks, API
errors and compactions in the CLI's shapes; a subagent's transcript of sidechain entries with its
`agentId`. Ids are derived from the session's name and a counter, so the same session is written the
same, byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import math
import uuid as uuidlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["FOR_TOOL_USE", "OLD_REJECTION", "TAKE_ACTION", "Writer"]

_NAMESPACE = uuidlib.UUID("2f8d7c1e-5b3a-4e6f-9a0b-1c2d3e4f5a6b")
_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
OLD_REJECTION = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
    "edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to "
    "tell you how to proceed."
)
TAKE_ACTION = (
    "The user doesn't want to take this action right now. STOP what you are doing and wait for the user to "
    "tell you how to proceed."
)
FOR_TOOL_USE = "[Request interrupted by user for tool use]"


def _stamp(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Writer:
    """One transcript being written, as a CLI of `version` writes it."""

    def __init__(
        self,
        name: str,
        *,
        version: str,
        model: str,
        start: float,
        cache: str = "5m",
        final_counts: bool = True,
        session_id: str | None = None,
        agent: str | None = None,
    ) -> None:
        self.name = name
        self.version = version
        self.model = model
        self.time = start
        self.cache = cache
        self.final_counts = final_counts  # later CLIs: the final output count and `stop_reason` on each entry
        self.session_id = session_id or str(uuidlib.uuid5(_NAMESPACE, name))
        self.agent = agent  # a subagent's transcript: every entry is a sidechain entry with its agentId
        self.entries: list[dict[str, Any]] = []
        self.tip: str | None = None
        self.joined: set[int] = set()  # indices of entries written on the previous entry's line
        self._serial = 0
        self._holders: dict[str, str] = {}
        self._context = 12_000  # tokens of the cached prefix (tools, system) before any message

    # -- ids and time --------------------------------------------------------------------------------

    def _hash(self, kind: str) -> str:
        self._serial += 1
        return hashlib.sha256(f"{self.name}:{kind}:{self._serial}".encode()).hexdigest()

    def _id(self, prefix: str) -> str:
        number = int(self._hash(prefix), 16)
        chars = []
        for _ in range(24):
            number, digit = divmod(number, len(_ALPHABET))
            chars.append(_ALPHABET[digit])
        return prefix + "".join(chars)

    def uuid(self) -> str:
        return str(uuidlib.uuid5(_NAMESPACE, self._hash("uuid")))

    def call_id(self) -> str:
        return self._id("toolu_01")

    def wait(self, seconds: float) -> None:
        self.time += seconds

    # -- entries --------------------------------------------------------------------------------------

    def _base(self, kind: str, parent: str | None) -> dict[str, Any]:
        entry: dict[str, Any] = {"parentUuid": parent, "isSidechain": self.agent is not None}
        if self.agent is not None:
            entry["agentId"] = self.agent
        entry.update(
            userType="external",
            cwd="/home/user/project",
            sessionId=self.session_id,
            version=self.version,
            gitBranch="main",
            type=kind,
            uuid=self.uuid(),
            timestamp=_stamp(self.time),
        )
        return entry

    def _add(self, entry: dict[str, Any], *, tip: bool = True) -> dict[str, Any]:
        self.entries.append(entry)
        if tip:
            self.tip = entry["uuid"]
        return entry

    def queued(self, text: str) -> None:
        """The queue operations the CLI writes before a prompt (no uuid, no parent)."""
        for operation in ("enqueue", "dequeue"):
            entry = {"type": "queue-operation", "operation": operation, "timestamp": _stamp(self.time)}
            if operation == "enqueue":
                entry["content"] = text
            entry["sessionId"] = self.session_id
            self.entries.append(entry)

    def prompt(self, text: str, *, parent: str | None = "tip", queue: bool = True) -> dict[str, Any]:
        """A typed prompt (or a command line the CLI wrote as one)."""
        if queue and self.agent is None:
            self.queued(text)
        self.wait(0.02)
        entry = self._base("user", self.tip if parent == "tip" else parent)
        entry["message"] = {"role": "user", "content": text}
        return self._add(entry)

    def reply(self, *blocks: dict[str, Any], think: float = 4.0) -> list[dict[str, Any]]:
        """One API reply: an entry per block, sharing the message id and the usage."""
        self.wait(think)
        chars = sum(len(json.dumps(b, separators=(",", ":"))) for b in blocks)
        added = 40 + chars // 4
        written = {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}
        written["ephemeral_1h_input_tokens" if self.cache == "1h" else "ephemeral_5m_input_tokens"] = added
        final = max(1, math.ceil(chars / 3))
        usage = {
            "input_tokens": 3,
            "cache_creation_input_tokens": added,
            "cache_read_input_tokens": self._context,
            "cache_creation": written,
            "output_tokens": final if self.final_counts else 4,
            "service_tier": "standard",
        }
        self._context += added
        message_id, request_id = self._id("msg_01"), self._id("req_011C")
        stop = "tool_use" if any(b.get("type") == "tool_use" for b in blocks) else "end_turn"
        made = []
        for block in blocks:
            entry = self._base("assistant", self.tip)
            entry["message"] = {
                "model": self.model,
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": stop if self.final_counts else None,
                "stop_sequence": None,
                "usage": usage,
            }
            entry["requestId"] = request_id
            if self.final_counts:
                entry["promptCacheRequested"] = self.cache
            self._add(entry)
            if block.get("type") == "tool_use":
                self._holders[block["id"]] = entry["uuid"]
            made.append(entry)
        return made

    def say(self, text: str) -> list[dict[str, Any]]:
        return self.reply({"type": "text", "text": text})

    def call(self, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        return {"type": "tool_use", "id": self.call_id(), "name": name, "input": tool_input}

    def result(
        self, call: dict[str, Any], content: Any, *, is_error: bool = False, record: Any = None, **fields: Any
    ) -> dict[str, Any]:
        """The entry answering one call; its parent is the entry holding the call."""
        self.wait(1.5)
        holder = self._holders[call["id"]]
        entry = self._base("user", holder)
        block: dict[str, Any] = {"tool_use_id": call["id"], "type": "tool_result", "content": content}
        if is_error or self.version.startswith("2.0"):
            block["is_error"] = is_error
        entry["message"] = {"role": "user", "content": [block]}
        entry["toolUseResult"] = (
            record if record is not None else (f"Error: {content}" if is_error else content)
        )
        entry["sourceToolAssistantUUID"] = holder
        entry.update(fields)
        return self._add(entry)

    def tool(self, name: str, tool_input: dict[str, Any], content: Any, **result: Any) -> dict[str, Any]:
        """A call in a reply of its own, and the entry answering it (`result`'s keywords)."""
        call = self.call(name, tool_input)
        self.reply(call)
        return self.result(call, content, **result)

    def bash(self, command: str, output: str, **fields: Any) -> dict[str, Any]:
        """A Bash call in a reply of its own, and its output."""
        record = {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}
        return self.tool(
            "Bash", {"command": command, "description": command[:40]}, output, record=record, **fields
        )

    def read(self, path: str, lines: list[str]) -> dict[str, Any]:
        """A Read of the whole file."""
        (entry,) = self.reply(self.call("Read", {"file_path": path}))
        numbered = "\n".join(f"{n:>6}\u2192{line}" for n, line in enumerate(lines, 1))
        file = {"filePath": path, "content": "\n".join(lines), "numLines": len(lines), "startLine": 1}
        file["totalLines"] = len(lines)
        return self.result(entry["message"]["content"][0], numbered, record={"type": "text", "file": file})

    def task(
        self, prompt: str, agent: str, report: str, *, kind: str = "Explore", until: float = 0.0
    ) -> None:
        """A Task call, and its result once the worker `agent` is done (at `until`, if later): the
        report, then the `agentId:` line the CLI adds, and the record naming the worker."""
        call = self.call("Task", {"description": prompt[:30], "prompt": prompt, "subagent_type": kind})
        self.reply(call)
        self.time = max(self.time, until)
        text = f"{report}\nagentId: {agent} (for resuming to continue this agent's work if needed)"
        record = {"status": "completed", "agentId": agent, "totalTokens": 600 + len(report)}
        self.result(call, [{"type": "text", "text": text}], record=record)

    def subagent(self, agent: str, model: str, mandate: str) -> Writer:
        """The transcript of a worker this session starts now, its mandate written."""
        worker = Writer(
            f"{self.name}-{agent}",
            version=self.version,
            model=model,
            start=self.time,
            session_id=self.session_id,
            agent=agent,
        )
        worker.prompt(mandate, parent=None)
        return worker

    def hook(self, source: str, *, shape: str = "progress") -> dict[str, Any]:
        """A SessionStart hook entry: a `progress` entry (CLI 2.1.42 and earlier) or an `attachment`."""
        entry = self._base(shape, self.tip)
        record = {"hookEvent": "SessionStart", "hookName": f"SessionStart:{source}", "command": "setup.sh"}
        if shape == "progress":
            entry["data"] = {"type": "hook_progress", **record}
            entry["parentToolUseID"] = entry["toolUseID"] = str(uuidlib.uuid5(_NAMESPACE, entry["uuid"]))
        else:
            entry["attachment"] = {
                "type": "hook_success",
                **record,
                "exitCode": 0,
                "stdout": "",
                "stderr": "",
            }
        return self._add(entry)

    def mode(self) -> None:
        """The `mode` metadata line the CLI re-appends (at exit, at a resume, beside prompts): no mark."""
        self.entries.append({"type": "mode", "mode": "normal", "sessionId": self.session_id})

    def api_error(self, retries: int = 3) -> dict[str, Any]:
        """The retries' `system` entries, then the synthetic reply the CLI writes when they run out."""
        for attempt in range(1, retries + 1):
            self.wait(2.0 * attempt)
            entry = self._base("system", self.tip)
            entry.update(subtype="api_error", level="error", retryAttempt=attempt, maxRetries=retries)
            entry["error"] = {"status": 529, "error": {"type": "overloaded_error", "message": "Overloaded"}}
            self._add(entry)
        entry = self._base("assistant", self.tip)
        entry["message"] = {
            "id": str(uuidlib.uuid5(_NAMESPACE, entry["uuid"])),
            "model": "<synthetic>",
            "role": "assistant",
            "type": "message",
            "content": [{"type": "text", "text": "API Error: 529 Overloaded. Try again later."}],
            "stop_reason": "stop_sequence",
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }
        entry.update(isApiErrorMessage=True, error="overloaded")
        return self._add(entry)

    def compact(self, summary: str) -> dict[str, Any]:
        """A compaction: the boundary (a new root) and the summary, which the CLI replays in place of all
        that came before."""
        self.wait(30)
        boundary = self._base("system", None)
        boundary.update(
            subtype="compact_boundary",
            content="Conversation compacted",
            level="info",
            logicalParentUuid=self.tip,
            compactMetadata={"trigger": "auto", "preTokens": self._context},
        )
        self._add(boundary)
        entry = self._base("user", boundary["uuid"])
        entry["message"] = {"role": "user", "content": summary}
        entry.update(isCompactSummary=True, isVisibleInTranscriptOnly=True)
        self._context = 12_000 + len(summary) // 4
        return self._add(entry)

    def write(self, path: Path) -> None:
        """One entry a line, but for the entries written on their predecessor's line (a lost newline)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        lines: list[str] = []
        for index, entry in enumerate(self.entries):
            line = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
            if index in self.joined and lines:
                lines[-1] += line
            else:
                lines.append(line)
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
