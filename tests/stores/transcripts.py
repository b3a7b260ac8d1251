"""Build transcripts shaped like the CLI's (as measured, and the entries a real session stored).

The shapes copied from real sessions: one assistant entry per content block, chained by `parentUuid`
and sharing `message.id`; one user entry per tool_result whose parent is the entry holding the call;
the chain goes on from the last result; denials carry `toolDenialKind`, interrupts `user-rejected`
without `permissionDecision`; API errors are synthetic assistant entries with `isApiErrorMessage`.

Used by the unit tests, the property tests and `benchmarks/bench_stores.py`.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

SESSION = "5e55a0e0-0000-4000-8000-000000000000"
T0 = 1_795_946_400.0
"""2026-11-29T10:00:00Z: the first timestamp; an entry's is `T0 + its number % 60 + the pauses before`."""
WRITTEN_BY = 1_795_946_460.0
"""2026-11-29T10:01:00Z: every entry's timestamp is within the minute before (`.timestamp` below), unless
the transcript has pauses. A store whose clock says this loads the fixtures as if they were just written:
the prompt cache is still warm."""
COLD = WRITTEN_BY + 600
"""Ten minutes after: the prompt cache (5 minutes) has expired, the idle hour of expiry has not."""
INTERRUPTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
    "edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to "
    "tell you how to proceed. Correction to the text above: this call was stopped while running."
)


@dataclass
class Transcript:
    """An append-only transcript under construction; `entries` is the list a store would hold."""

    session_id: str = SESSION
    entries: list[dict[str, Any]] = field(default_factory=list)
    _count: int = 0
    _offset: float = 0.0
    _tip: str | None = None
    _holders: dict[str, str] = field(default_factory=dict)  # tool_use id -> uuid of the entry holding it

    def _uuid(self) -> str:
        self._count += 1
        return f"00000000-0000-4000-8000-{self._count:012d}"

    def _base(self, kind: str, parent: str | None) -> dict[str, Any]:
        return {
            "parentUuid": parent,
            "isSidechain": False,
            "type": kind,
            "uuid": self._uuid(),
            "timestamp": _stamp(T0 + self._offset + self._count % 60),
            "sessionId": self.session_id,
            "cwd": "/projects/demo",
            "version": "2.1.327",
        }

    def _add(self, entry: dict[str, Any], *, tip: bool = True) -> dict[str, Any]:
        self.entries.append(entry)
        if tip:
            self._tip = entry["uuid"]
        return entry

    def prompt(self, text: str) -> dict[str, Any]:
        """A user prompt (plain-text content)."""
        entry = self._base("user", self._tip)
        entry["message"] = {"role": "user", "content": text}
        return self._add(entry)

    def pause(self, seconds: float) -> None:
        """Nothing happens for `seconds`: later entries are that much later."""
        self._offset += seconds

    def resume(self, text: str) -> dict[str, Any]:
        """A new process loads the session and sends `text`: the prompt, then the `mode` metadata line a
        CLI of 2.1.327 or later re-appends when a resumed process exits (a history mirrored into a store
        keeps no `cost-state`, so the mode line marks the prompt before it)."""
        entry = self.prompt(text)
        self.entries.append({"type": "mode", "mode": "normal", "sessionId": self.session_id})
        return entry

    @property
    def last_time(self) -> float:
        """The epoch seconds of the newest timestamp (T0 when there is none)."""
        stamps = [e["timestamp"] for e in self.entries if isinstance(e.get("timestamp"), str)]
        return max((datetime.fromisoformat(x).timestamp() for x in stamps), default=T0)

    def attachment(self, kind: str = "date") -> dict[str, Any]:
        """An attachment in the chain (the CLI writes several per turn)."""
        entry = self._base("attachment", self._tip)
        entry["attachment"] = {"type": kind}
        return self._add(entry)

    def marker(self, kind: str = "last-prompt") -> dict[str, Any]:
        """A non-message entry without uuid or parent (last-prompt, cost-state ...)."""
        entry: dict[str, Any] = {"type": kind, "sessionId": self.session_id}
        if kind == "last-prompt" and self._tip is not None:
            entry["leafUuid"] = self._tip
        self.entries.append(entry)
        return entry

    def assistant(self, *blocks: dict[str, Any], merged: bool = False) -> list[dict[str, Any]]:
        """One API message: one entry per block (as the CLI writes it), or all blocks in one entry."""
        message_id = f"msg_{self._count:06d}"
        groups = [list(blocks)] if merged else [[block] for block in blocks]
        stop = "tool_use" if any(block.get("type") == "tool_use" for block in blocks) else "end_turn"
        made = []
        for group in groups:
            entry = self._base("assistant", self._tip)
            entry["message"] = {
                "id": message_id,
                "role": "assistant",
                "model": "claude-x",
                "content": group,
                "stop_reason": stop,  # CLI 2.1.332 writes the reply's stop reason (and final usage) on each
            }
            self._add(entry)
            for block in group:
                if block.get("type") == "tool_use":
                    self._holders[block["id"]] = entry["uuid"]
            made.append(entry)
        return made

    def result(
        self,
        tool_use_id: str,
        content: Any,
        *,
        is_error: bool = False,
        denial: str | None = None,
        interrupted: bool = False,
    ) -> dict[str, Any]:
        """The user entry answering one call; its parent is the entry that holds the call."""
        holder = self._holders.get(tool_use_id, self._tip)
        entry = self._base("user", holder)
        block = {"tool_use_id": tool_use_id, "type": "tool_result", "content": content, "is_error": is_error}
        entry["message"] = {"role": "user", "content": [block]}
        entry["sourceToolAssistantUUID"] = holder
        if denial is not None:
            block["is_error"] = True
            entry["toolUseResult"] = f"Error: {content}"
            entry["toolDenialKind"] = denial
            entry["permissionDecision"] = {"decision": "reject", "source": "hook", "reasonType": "hook"}
        elif interrupted:
            block["is_error"] = True
            block["content"] = INTERRUPTED
            entry["toolUseResult"] = "User rejected tool use"
            entry["toolDenialKind"] = "user-rejected"
        else:
            entry["toolUseResult"] = {"stdout": content if isinstance(content, str) else "", "stderr": ""}
        return self._add(entry)

    def api_error(self) -> dict[str, Any]:
        """The system api_error entry, then the synthetic assistant entry the CLI writes when retries end."""
        system = self._base("system", self._tip)
        system.update(subtype="api_error", level="error", retryAttempt=1)
        self._add(system)
        entry = self._base("assistant", self._tip)
        entry["message"] = {
            "id": f"synthetic-{self._count}",
            "model": "<synthetic>",
            "role": "assistant",
            "content": [{"type": "text", "text": "API Error: 500 scripted 500 api_error. Try again."}],
        }
        entry.update(error="server_error", isApiErrorMessage=True, apiErrorStatus=500)
        return self._add(entry)

    def meta(self, text: str) -> dict[str, Any]:
        """An `isMeta` user entry (never rewritten)."""
        entry = self.prompt(text)
        entry["isMeta"] = True
        return entry

    def compact_summary(self, text: str) -> dict[str, Any]:
        """A compaction boundary and its summary entry (the summary is never rewritten)."""
        boundary = self._base("system", None)
        boundary.update(
            subtype="compact_boundary", content="Conversation compacted", logicalParentUuid=self._tip
        )
        self._add(boundary)
        entry = self._base("user", boundary["uuid"])
        entry["message"] = {"role": "user", "content": text}
        entry.update(isCompactSummary=True, isVisibleInTranscriptOnly=True)
        return self._add(entry)

    def call(self, name: str, tool_input: dict[str, Any], tool_use_id: str) -> dict[str, Any]:
        """A tool_use block (use inside `assistant(...)`)."""
        return {"type": "tool_use", "id": tool_use_id, "name": name, "input": tool_input}

    def bash(self, command: str, tool_use_id: str) -> dict[str, Any]:
        """A Bash tool_use block."""
        return self.call("Bash", {"command": command, "description": command[:40]}, tool_use_id)

    def run(self, command: str, output: Any, tool_use_id: str, **result: Any) -> None:
        """One Bash call in its own message, then its result."""
        self.assistant(self.bash(command, tool_use_id))
        self.result(tool_use_id, output, **result)

    def snapshot(self) -> list[dict[str, Any]]:
        """A deep copy of the entries (what a store's load would return)."""
        return copy.deepcopy(self.entries)


def age_stored(entries_by_key: dict[str, list[dict[str, Any]]], seconds: float) -> None:
    """Make every entry of a store's dict (the SDK's `InMemorySessionStore._store`) `seconds` older, as
    a real pause before the next resume would (the store's clock alone cannot: the history's own
    timestamps tell where the prompt cache was cold)."""
    for entries in entries_by_key.values():
        for entry in entries:
            if isinstance(entry.get("timestamp"), str):
                moment = datetime.fromisoformat(entry["timestamp"]).timestamp() - seconds
                entry["timestamp"] = _stamp(moment)


def _stamp(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def text(block: dict[str, Any]) -> str:
    """A tool_result's text."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or [])


def results(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """tool_use id -> tool_result block, over the whole history."""
    found = {}
    for entry in entries:
        content = (entry.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found[block["tool_use_id"]] = block
    return found


def calls(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """tool_use id -> tool_use block, over the whole history."""
    found = {}
    for entry in entries:
        content = (entry.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                found[block["id"]] = block
    return found


def dumps(entries: list[dict[str, Any]]) -> list[str]:
    """Each entry serialised the way the SDK materialises a resume."""
    return [json.dumps(entry, separators=(",", ":")) for entry in entries]


def ancestors(entries: list[dict[str, Any]], uuid: str) -> list[str]:
    """The parent chain of an entry, nearest first, as far as it is present."""
    parents = {e["uuid"]: e.get("parentUuid") for e in entries if isinstance(e.get("uuid"), str)}
    chain = []
    current = parents.get(uuid)
    while isinstance(current, str) and current in parents and current not in chain:
        chain.append(current)
        current = parents[current]
    return chain


def cli_would_add(changes: Any) -> int:
    """The characters the CLI would have added itself in the place of these changes: the result it gives
    an orphan call of the history's last message (`flower.stores._rewrite.CLI_ORPHAN_NOTE`), which a heal
    replaces and counts in its `chars_saved`. What the entries lost is `chars_saved` less this."""
    total = 0
    for change in changes:
        found = re.fullmatch(r"instead of the CLI's own result \((\d+) chars\)", change.detail)
        if change.kind == "orphan" and found:
            total += int(found.group(1))
    return total


def unnamed(before: list[dict[str, Any]], after: list[dict[str, Any]], changes: Any) -> list[str]:
    """What a rewrite changed without a change naming it: for each entry returned changed, dropped or
    added, one of `changes` must name its uuid or a call it holds (a `tool_use` id, a result's
    `tool_use_id`); an entry whose only difference is a reference re-pointed over a dropped entry is named
    by that entry's drop. Returns a line per unnamed entry (empty: all named). Entries whose uuid occurs
    more than once in the history are compared by position only when unchanged."""
    reference = ("parentUuid", "logicalParentUuid", "leafUuid")
    named = {c.uuid for c in changes} | {c.tool_use_id for c in changes}

    def held(entry: dict[str, Any]) -> set[str]:
        content = (
            (entry.get("message") or {}).get("content") if isinstance(entry.get("message"), dict) else None
        )
        blocks = content if isinstance(content, list) else []
        return {str(b.get("id") or b.get("tool_use_id")) for b in blocks if isinstance(b, dict)} - {"None"}

    def names(entry: dict[str, Any]) -> bool:
        return entry.get("uuid") in named or bool(held(entry) & named)

    counts: dict[str, int] = {}
    for entry in before + after:
        if isinstance(entry.get("uuid"), str):
            counts[entry["uuid"]] = counts.get(entry["uuid"], 0) + 1
    old = {e["uuid"]: e for e in before if isinstance(e.get("uuid"), str)}
    new = {e["uuid"]: e for e in after if isinstance(e.get("uuid"), str)}
    dropped = set(old) - set(new)
    found = []
    for uuid in dropped | (set(new) - set(old)):
        if not names(old.get(uuid) or new[uuid]):
            found.append(f"{uuid}: {'dropped' if uuid in dropped else 'added'} without a change naming it")
    for uuid in set(old) & set(new):
        a, b = old[uuid], new[uuid]
        if a == b or names(a) or counts[uuid] > 2:
            continue
        moved = {k for k in set(a) | set(b) if a.get(k) != b.get(k)}
        if moved <= set(reference) and all(a.get(k) in dropped and names(old[a[k]]) for k in moved):
            continue
        found.append(f"{uuid}: {sorted(moved)} changed without a change naming it")
    return sorted(found)


def around_the_body(fixed: int) -> list[tuple[str, str, bool]]:
    """Bodies and note templates around the rule "a body is replaced only when its note is shorter, as
    text and in JSON": `(body, template's text, replaced)`; `fixed` is what the template's fields add
    (the template is the text, then the fields). A quote counts one char as text and two in JSON, a
    newline too."""
    plain, lines = "b" * 400, "b\n" * 200  # 400 chars; 400 and 600 in JSON
    return [
        (plain, '"' * 300, False),  # shorter as text, longer in JSON
        (plain, '"' * 100 + "x" * (200 - fixed), False),  # as long in JSON: saves nothing
        (plain, '"' * 100 + "x" * (199 - fixed), True),  # one char shorter in JSON
        (lines, "x" * (400 - fixed), False),  # as long as text, shorter in JSON
        (lines, "x" * (399 - fixed), True),
    ]
