"""Layer 3 replayed: which recorded tool outputs `spill_guard` would have spilled, and how much shorter.

The hook sees a tool's output as the CLI hands it over (`tool_response`), which is what the transcript keeps
beside the result (`toolUseResult`). So the same functions decide: `find_candidates` picks the string
fields at or over the threshold of the policy's tools (a Read of the workbench passes, an error never
reaches the hook), `spilled_as` names the file the text would go to without writing it, and `preview_for`
builds the pointer and preview exactly as the hook writes them. What the model read shrinks by what each
field lost (for a Read, in proportion: the CLI numbers its lines); the spilled output is replaced from the
request after it, until a compaction drops it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._util.content import text_of
from ...spill import SpillPolicy
from ...spill._files import label_of, spilled_as
from ...spill._preview import preview_for
from ...spill._shape import find_candidates, get_at
from ...spill.guard import _reads_inside
from .replay import Saving, Thread

__all__ = ["SpillHit", "boundaries", "read_backs", "spill_hits", "spill_savings", "spilled_entries"]

_WORKBENCH = ".flower"


@dataclass(frozen=True)
class SpillHit:
    """One recorded output `spill_guard` would have spilled."""

    entry: int
    """Index of the user entry holding the result."""
    tool_use_id: str
    tool: str
    chars: int
    """The result's text as the model read it."""
    saved: int
    """Characters the pointer and preview would have saved."""
    quoted_at: int | None = None
    """The first later reply of the thread (its first entry's index) whose text or tool input holds a
    value found only in the part the preview hides: a model that saw the preview alone would have read
    the file back for it. None when no reply does."""

    @property
    def quoted_later(self) -> bool:
        """A later reply quotes the hidden part (`quoted_at`)."""
        return self.quoted_at is not None


def _size(value: object) -> int:
    if isinstance(value, list):
        return sum(len(str(item)) for item in value) + max(0, len(value) - 1)
    return len(value) if isinstance(value, str) else 0


def _calls(thread: Thread) -> dict[str, Mapping[str, Any]]:
    return {
        str(block.get("id")): block
        for request in thread.requests
        for block in request.blocks
        if block.get("type") == "tool_use"
    }


def _results(entry: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    if entry.get("type") != "user":
        return []
    message = entry.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    return (
        [b for b in content or () if isinstance(b, Mapping) and b.get("type") == "tool_result"]
        if isinstance(content, list)
        else []
    )


def _saved(tool: str, output: object, text: str, policy: SpillPolicy, cwd: Path) -> int | None:
    """Characters of `text` the spill of `output` saves; None when nothing would be spilled."""
    assert policy.threshold is not None
    found = find_candidates(tool, output, threshold=policy.threshold, lists=policy.lists)
    if not found:
        return None
    label = label_of(tool)
    directory = cwd / _WORKBENCH / "spill"
    whole = left = 0
    for candidate in found:
        value = get_at(output, candidate.path)
        if not isinstance(value, str | list):
            continue
        spilled = spilled_as(
            directory, "\n".join(value) if isinstance(value, list) else value, label, tail=policy.tail
        )
        whole += _size(value)
        left += _size(preview_for(tool, output, candidate, value, spilled, policy)[candidate.path])
    if len(text) < whole:  # the CLI showed less (a Bash output it saved to a file): ours replaces it
        return max(0, len(text) - left)
    lost = whole - left
    if tool == "Read" and whole:  # the CLI numbers a Read's lines: what it shows shrinks in proportion
        lost = round(lost * len(text) / whole)
    return max(0, min(lost, len(text)))


_VALUE = re.compile(r"[A-Za-z0-9_./=:+-]{6,}")


def _values(text: str) -> set[str]:
    """The identifier-like words of `text` (with a digit or one of `=_/.:`): values an agent copies."""
    words = (w.strip(".:/=+-") for w in _VALUE.findall(text))
    return {w for w in words if len(w) >= 6 and any(c.isdigit() or c in "=_/.:" for c in w)}


def _later(thread: Thread) -> list[tuple[int, set[str]]]:
    """`(entry index, values)` of each reply of the thread: its text and its tool inputs."""
    found = []
    for request in thread.requests:
        parts = [
            str(b.get("text", "")) if b.get("type") == "text" else json.dumps(b.get("input", {}))
            for b in request.blocks
            if b.get("type") in ("text", "tool_use")
        ]
        found.append((request.entry, _values("\n".join(parts))))
    return found


def _quoted(
    text: str, call: Mapping[str, Any], index: int, later: list[tuple[int, set[str]]], policy: SpillPolicy
) -> int | None:
    hidden = _values(text[policy.head : len(text) - policy.tail])
    if not hidden:
        return None
    hidden -= _values(text[: policy.head] + "\n" + text[len(text) - policy.tail :])
    hidden -= _values(json.dumps(call.get("input", {})))
    return next((at for at, values in later if at > index and hidden & values), None)


def spill_hits(thread: Thread, policy: SpillPolicy) -> list[SpillHit]:
    """Every output of `thread` the policy spills, in order."""
    if not policy.enabled:
        return []
    calls = _calls(thread)
    later = _later(thread)
    hits = []
    for index, entry in enumerate(thread.entries):
        results = _results(entry)
        for block in results:
            call = calls.get(str(block.get("tool_use_id")))
            tool = str(call.get("name")) if call is not None else ""
            if tool not in policy.tools or block.get("is_error") is True:
                continue
            cwd = Path(str(entry.get("cwd") or "."))
            if tool == "Read" and _reads_inside(
                {"tool_input": call.get("input") if call else None, "cwd": str(cwd)}, cwd / _WORKBENCH
            ):
                continue
            text = text_of(block.get("content"))
            output = entry.get("toolUseResult") if len(results) == 1 else None
            if not isinstance(output, Mapping | str):
                output = text
            saved = _saved(tool, output, text, policy, cwd)
            if saved is not None and call is not None:
                quoted = _quoted(text, call, index, later, policy)
                hits.append(SpillHit(index, str(block.get("tool_use_id")), tool, len(text), saved, quoted))
    return hits


def boundaries(entries: Sequence[Mapping[str, Any]]) -> list[int]:
    """Indices of the compaction boundaries of a transcript (the context restarts after each)."""
    return [
        i
        for i, e in enumerate(entries)
        if e.get("type") == "system" and e.get("subtype") == "compact_boundary"
    ]


def until_compacted(thread: Thread, index: int, cuts: Sequence[int]) -> int:
    """The first request that no longer holds what entry `index` added (after the next compaction)."""
    after = next((cut for cut in cuts if cut > index), None)
    return len(thread.requests) if after is None else thread.first_after(after)


def spill_savings(thread: Thread, hits: Sequence[SpillHit], rate: float) -> list[Saving]:
    """Each hit as a `Saving`, from the request that first carried it until a compaction."""
    cuts = boundaries(thread.entries)
    savings = []
    for hit in hits:
        start = thread.first_after(hit.entry)
        end = until_compacted(thread, hit.entry, cuts)
        if start < end and hit.saved:
            at = thread.end_of(start - 1)
            savings.append(Saving(start, end, at, hit.chars * rate, hit.saved * rate))
    return savings


def read_backs(thread: Thread, hits: Sequence[SpillHit], rate: float) -> tuple[list[Saving], list[int]]:
    """The pessimistic end of a spill: every output quoted later read back whole by the reply that
    first quotes it. Its text comes back from the request after that reply (a `Saving` that adds it) until
    a compaction; the read itself is one request more, taken as that reply's request again (the requests
    to repeat, by index)."""
    cuts = boundaries(thread.entries)
    added, again = [], []
    for hit in hits:
        if hit.quoted_at is None:
            continue
        start = thread.first_after(hit.quoted_at)
        end = until_compacted(thread, hit.quoted_at, cuts)
        if start < end:
            added.append(Saving(start, end, thread.end_of(start - 1), hit.chars * rate, -hit.chars * rate))
        again.append(start - 1)
    return added, again


def spilled_entries(
    entries: Sequence[Mapping[str, Any]], hits: Sequence[SpillHit]
) -> list[Mapping[str, Any]]:
    """`entries` with each hit's result as short as the spill leaves it (only its length is kept
    faithfully; the input is not modified), for layer 4 to rewrite what layer 3 left."""
    by_entry: dict[int, dict[str, SpillHit]] = {}
    for hit in hits:
        by_entry.setdefault(hit.entry, {})[hit.tool_use_id] = hit
    out: list[Mapping[str, Any]] = list(entries)
    for index, found in by_entry.items():
        entry = entries[index]
        message = dict(entry["message"])
        content = []
        for block in message["content"]:
            shortened = found.get(str(block.get("tool_use_id"))) if isinstance(block, Mapping) else None
            if shortened is not None:
                text = text_of(block.get("content"))
                block = {**block, "content": text[: max(0, len(text) - shortened.saved)]}
            content.append(block)
        message["content"] = content
        out[index] = {**entry, "message": message}
    return out
