"""Superseded reads: an older Read of a file, when the conversation holds a newer whole copy of it.

Interactive sessions read the same files again and again: a Read result was the largest kind of content
in the requests of real resumed sessions (a quarter of their characters). Once a later Read of the whole
file, or a Write of it, is on the replayed branch, the older result only shows the file as it was: the
newer copy is what the model should trust, and the older one is replaced by a note naming the newer.

What counts as a newer whole copy, read structurally:

- a later Read of the same `file_path` whose record (`toolUseResult.file`) starts at line 1 and holds
  every line (`numLines == totalLines`), whose result is no error, and is not one of the CLI's stubs
  (CLI 2.1.332 may answer a re-read with "File unchanged since last read. The content from the earlier
  Read tool_result … is still current": then the older result is the only copy, and it stays);
- a later Write of the same `file_path` whose result is no error (its input holds the whole file).

An Edit never supersedes (its result holds a snippet), and neither does a partial Read. Only results on
the replayed branch are touched, only text results, and only when the note is shorter, in text and in
JSON. The call, its `toolUseResult` (the CLI rebuilds what a Read saw from it, for the next Edit) and
every other block stay. Like every rewrite here it is decided at cold loads only: a warm load repeats
what the last cold load decided (`CachePolicy`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from .._policies import Change, PrunePolicy
from ._outputs import output_entries
from ._transcript import (
    Entry,
    Rewritten,
    block_size,
    check_entries,
    content_blocks,
    filled,
    iter_blocks,
    result_text,
    with_blocks,
    with_result_text,
)
from .denials import tool_calls

__all__ = ["READ_STUBS", "supersede_reads"]

READ_STUBS = (
    "File unchanged since last read.",
    "Wasted call \u2014 file unchanged since your last Read.",
    "<system-reminder>This file is already in your context",
)
"""How the CLI (2.1.332) answers a re-read of a file it already holds: a stub pointing at the earlier
result, which must then stay."""


def _path(call: Mapping[str, Any] | None) -> str | None:
    tool_input = call.get("input") if call is not None else None
    path = tool_input.get("file_path") if isinstance(tool_input, Mapping) else None
    return path if isinstance(path, str) and path else None


def _whole_read(entry: Entry, block: Mapping[str, Any]) -> bool:
    """A Read result holding the whole file, as its record says, and no stub."""
    record = entry.get("toolUseResult")
    file = record.get("file") if isinstance(record, Mapping) else None
    if not isinstance(file, Mapping) or not isinstance(file.get("content"), str):
        return False
    lines, total = file.get("numLines"), file.get("totalLines")
    if file.get("startLine") != 1 or not isinstance(lines, int) or lines != total:
        return False
    text = result_text(dict(block)) or ""
    return not text.lstrip().startswith(READ_STUBS)


def supersede_reads(
    entries: Sequence[Any], policy: PrunePolicy | None = None, *, branch: Collection[str] | None = None
) -> Rewritten:
    """Replace every Read result on the replayed branch by `policy.superseded_note` when a later whole
    Read or a later Write of the same file follows it on the branch (see the module doc)."""
    policy = policy if policy is not None else PrunePolicy()
    entries = check_entries(entries)
    calls = tool_calls(entries)
    reads: list[tuple[int, int, str, str]] = []  # entry index, block index, tool_use id, path
    newest: dict[str, tuple[int, str]] = {}  # path -> (entry index, "Read" or "Write") of the newest copy
    for position, entry in output_entries(entries, None if branch is None else branch):
        for index, block in iter_blocks(entry, "tool_result"):
            ident = block.get("tool_use_id")
            call = calls.get(ident) if isinstance(ident, str) else None
            path = _path(call)
            if call is None or path is None or block.get("is_error") is True:
                continue
            name = call.get("name")
            if name == "Read" and result_text(block) is not None:
                reads.append((position, index, str(ident), path))
                if _whole_read(entry, block):
                    newest[path] = (position, "Read")
            elif name == "Write":
                newest[path] = (position, "Write")
    out = list(entries)
    changes: list[Change] = []
    for position, index, ident, path in reads:
        later = newest.get(path)
        if later is None or later[0] <= position:
            continue
        entry = out[position]
        blocks = list(content_blocks(entry) or ())
        old = blocks[index]
        body = result_text(old) or ""
        if filled(policy.superseded_note, body):
            continue
        note = policy.superseded_note.format(path=path, by=later[1])
        new = with_result_text(old, note)
        saved = block_size(old) - block_size(new)
        if saved <= 0 or len(note) >= len(body):
            continue  # never longer
        blocks[index] = new
        out[position] = with_blocks(entry, blocks)
        changes.append(
            Change(
                kind="superseded", uuid=entry.get("uuid"), tool_use_id=ident, chars_saved=saved, detail=path
            )
        )
    return Rewritten(out, tuple(changes)) if changes else Rewritten(entries)
