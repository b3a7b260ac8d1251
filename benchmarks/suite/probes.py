"""Where is a fact, from the point of view of one request? Pure functions over a request body.

The request is the context (docs/testing.md): a fact is *visible* if its `key=value` text is in it; else
a *pointer* may be: a spill pointer or the CLI's persisted-output path in the result of the call that
printed it, a line naming the output's label next to a path (a worker's report, a handoff document), or
the CLI's "read the full transcript at" line after a compaction. The probe policy:
answer at once if visible, spend one call on a pointer, else re-run the tool if it is idempotent, else
fail.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from flower._util.content import string_leaves as strings  # every string leaf of a JSON value

SPILL_POINTER = re.compile(r"moved out of the conversation to `?([^`]+?)`? \(Read it")
CLI_POINTER = re.compile(r"Full output saved to: (\S+)")
TRANSCRIPT_POINTER = re.compile(r"read the full transcript at: (\S+?\.jsonl)")
EXPIRED = re.compile(r"\[result of `[^`]*` expired")
STATE = re.compile(r"STATE v (\d+)")
DENIAL_NOTE = "[also refused earlier (not shown): "


def block_text(content: Any) -> str:
    """The text of a tool_result or message `content` (a str or a list of blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and "text" in b)
    return ""


@dataclass(frozen=True)
class Pair:
    """A tool call and its result as one request holds them (result "" when it has none yet)."""

    id: str
    name: str
    input: Mapping[str, Any]
    result: str
    is_error: bool

    @property
    def command(self) -> str:
        """The Bash command of the call ("" for other tools)."""
        value = self.input.get("command", "")
        return value if isinstance(value, str) else ""


class View:
    """One request body, indexed for the questions the player asks."""

    def __init__(self, body: Mapping[str, Any]) -> None:
        self.body = body
        self.strings = list(strings(dict(body)))
        uses: dict[str, Pair] = {}
        order: list[str] = []
        for message in body.get("messages", []) or []:
            content = message.get("content") if isinstance(message, dict) else None
            if not isinstance(content, list):
                continue
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use":
                    ident = str(block.get("id"))
                    uses[ident] = Pair(ident, str(block.get("name")), block.get("input") or {}, "", False)
                    order.append(ident)
                elif block.get("type") == "tool_result":
                    ident = str(block.get("tool_use_id"))
                    if ident in uses:
                        use = uses[ident]
                        text = block_text(block.get("content"))
                        uses[ident] = Pair(ident, use.name, use.input, text, bool(block.get("is_error")))
        self.pairs = [uses[i] for i in order]

    def has(self, needle: str) -> bool:
        """Whether any string of the request contains `needle`."""
        return any(needle in s for s in self.strings)

    @property
    def chars(self) -> int:
        """Size of the request body as JSON."""
        return len(json.dumps(self.body, ensure_ascii=False))


def runs_label(command: str, label: str) -> bool:
    """Whether a command is the one that prints `label` (`python3 gen.py <label>`, any options)."""
    return re.search(rf"(?<![\w-]){re.escape(label)}(?![\w-])", command) is not None


def prints(pair: Pair, label: str) -> bool:
    """Whether a call printed output `label`: a command that runs it, or a Read of the file `label`."""
    if pair.command:
        return runs_label(pair.command, label)
    path = pair.input.get("file_path")
    return isinstance(path, str) and (path == label or path.endswith("/" + label))


def pointers(view: View, label: str) -> list[str]:
    """Paths that should hold output `label`, best first (see the module docstring)."""
    found: list[str] = []
    for pair in reversed(view.pairs):
        if prints(pair, label):
            for pattern in (SPILL_POINTER, CLI_POINTER):
                match = pattern.search(pair.result)
                if match:
                    found.append(match.group(1))
    named = re.compile(rf"(?<![\w-]){re.escape(label)}(?![\w-])[^\n]*?(/[\w./-]+\.(?:txt|md))")
    for text in view.strings:
        if label in text:
            found += [m.group(1) for m in named.finditer(text)]
    for text in view.strings:
        match = TRANSCRIPT_POINTER.search(text)
        if match:
            found.append(match.group(1))
    return list(dict.fromkeys(found))


Decision = Literal["answered", "grep", "rerun", "failed"]


@dataclass(frozen=True)
class Next:
    """What a probe does now: answered, grep `path`, re-run the tool, or give up."""

    decision: Decision
    path: str = ""


def decide(
    view: View, fact_text: str, label: str, *, idempotent: bool, tried: tuple[str, ...], reran: bool
) -> Next:
    """The probe policy: visible -> answered; an untried pointer -> grep it; else re-run once; else fail."""
    if view.has(fact_text):
        return Next("answered")
    if label:
        for path in pointers(view, label):
            if path not in tried:
                return Next("grep", path)
    if label and idempotent and not reran:
        return Next("rerun")
    return Next("failed")


def grep_command(key: str, path: str) -> str:
    """The one-line retrieval a pointer costs: a fixed-string grep for the fact's key."""
    return f"grep -n -F '{key}=' {path}"


def denial_visible(view: View, command: str) -> bool:
    """Whether the request shows that `command` is denied: its own refused call, a report saying so, or
    the note of layer 4 naming the refused calls it dropped."""
    for pair in view.pairs:
        if pair.command == command and pair.is_error and "denied" in pair.result:
            return True
        if pair.is_error and DENIAL_NOTE in pair.result and f"`{command}`" in pair.result:
            return True
    return view.has(f"denied: `{command}`")


def latest_state(view: View) -> int | None:
    """The state version the agent would trust: the last `STATE v N` in a tool result it can see.

    None when there is none, or when a later result says a read of the state expired (flower's expiry
    note asks to re-run it): the agent then reads the state again.
    """
    seen: int | None = None
    for pair in view.pairs:
        versions = STATE.findall(pair.result)
        if versions:
            seen = int(versions[-1])
        elif EXPIRED.search(pair.result) and "state/" in str(pair.input.get("command", "")):
            seen = None
    return seen


def stale_snapshots(view: View, current: int) -> int:
    """Resident state snapshots (tool results) older than the current version: staleness."""
    count = 0
    for pair in view.pairs:
        versions = [int(m.group(1)) for m in STATE.finditer(pair.result)]
        if versions and max(versions) < current:
            count += 1
    return count


def residue(view: View) -> int:
    """Chars resident from failed calls: denials, failing commands, refused writes (input + result)."""
    return sum(
        len(json.dumps(dict(p.input), ensure_ascii=False)) + len(p.result) for p in view.pairs if p.is_error
    )
