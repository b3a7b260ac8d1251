"""Layer 3 replayed: which recorded tool outputs `spill_guard` would have spilled, and how much shorter.

The hook sees a tool's output as the CLI hands it over (`tool_response`), which is what the transcript keeps
beside the result (`toolUseResult`). So the same functions decide: `find_candidates` picks the string
fields at or over the threshold of the policy's tools (a Read of the workbench passes, an error never
reaches the hook), `spilled_as` names the file the text would go to without writing it, and `preview_for`
builds the pointer and preview exactly as the hook writes them. What the model read shrinks by what each
field lost (for a Read, in proportion: the CLI numbers its lines); the spilled output is replaced from the
request after it, until a compaction drops it. Which later replies use what the preview hides is
`quotes`' part; what a model would have read back for it, `readback`'s.

Where the CLI had saved an output to a file itself (a long Bash output, a Grep's long content), flower's
pointer replaces the CLI's, so the file a later Read of the CLI's path reads is, under flower, the spilled
file: the guard lets a Read of its own spill directory through whole, so that read-back is kept as
recorded (`SpillHit.saved_read`, `saved_files`), not spilled again. Only the replay's end (nothing read
back) spills it: flower's preview also shows the output's tail, which the CLI's does not, so a read-back
the CLI's preview made necessary may not be under flower, and a transcript cannot tell which.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._spill import SpillPolicy
from ..._spill._files import label_of, spilled_as
from ..._spill._preview import preview_for
from ..._spill._shape import find_candidates, get_at
from ..._spill.guard import _reads_inside
from ..._util.content import text_of, tool_results
from .quotes import Copy, ThreadText
from .replay import Saving, Thread

__all__ = [
    "SpillHit",
    "boundaries",
    "kept",
    "read_path",
    "results_of",
    "saved_files",
    "saved_path",
    "spill_hits",
    "spill_savings",
    "spilled_entries",
    "until_compacted",
]

_WORKBENCH = ".flower"
_SAVED_TO = re.compile(r"Full output saved to: (\S+)")
"""The path in the CLI's `<persisted-output>` preview of an output it saved to a file."""


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
    lines: int = 1
    """Lines of the text."""
    quoted_at: int | None = None
    """The first later reply of the thread (its first entry's index) whose text or tool input holds a
    value found in the part the preview hides and not in the preview (`ThreadText.quoted_at`, the loose
    test). None when no reply does."""
    copies: tuple[Copy, ...] = ()
    """The look-ups a model shown the preview alone would have made: each line of the hidden part a later
    reply copies a token from that it could have seen nowhere else (`ThreadText.copies`)."""
    cli_saved: bool = False
    """The CLI itself had saved the output to a file and shown its preview: what the model did with it is
    in the recorded requests (no read-back is added)."""
    saved_read: bool = False
    """A Read of the file the CLI had saved an earlier spilled output to: under flower it reads the spill
    file, which the guard passes whole, so every line keeps it as recorded but the replay's end (nothing
    read back), which spills it as if the model had not needed it (`kept`); no read-back is added."""
    needed: bool = True
    """For a `saved_read`: whether flower's preview hides what the replies after it took from the output
    too (`saved.settle`); one that flower's preview shows (its tail, say) is not needed: spilled."""

    @property
    def quoted_later(self) -> bool:
        """A later reply quotes the hidden part (`quoted_at`)."""
        return self.quoted_at is not None

    @property
    def copied_later(self) -> bool:
        """A later reply copies from the hidden part (`copies`)."""
        return bool(self.copies)


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


def results_of(thread: Thread, start: int, end: int) -> list[tuple[int, str, Mapping[str, Any]]]:
    """`(entry index, text, call)` of each tool result of `thread` between entries `start` and `end` (its
    call found in the thread, not an error), in order."""
    calls = _calls(thread)
    found = []
    for index in range(start + 1, min(end, len(thread.entries))):
        for block in tool_results(thread.entries[index]):
            call = calls.get(str(block.get("tool_use_id")))
            if call is not None and block.get("is_error") is not True:
                found.append((index, text_of(block.get("content")), call))
    return found


def _saved(tool: str, output: object, text: str, policy: SpillPolicy, cwd: Path) -> tuple[int, bool] | None:
    """Characters of `text` the spill of `output` saves, and whether the CLI had shown less than the
    output (it saved it to a file itself); None when nothing would be spilled."""
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
        return max(0, len(text) - left), True
    lost = whole - left
    if tool == "Read" and whole:  # the CLI numbers a Read's lines: what it shows shrinks in proportion
        lost = round(lost * len(text) / whole)
    return max(0, min(lost, len(text))), False


def saved_path(output: object, text: str) -> str | None:
    """The file the CLI saved an output to (`persistedOutputPath`, else the path its `<persisted-output>`
    preview names), or None."""
    if isinstance(output, Mapping):
        path = output.get("persistedOutputPath")
        if isinstance(path, str) and path:
            return path
    found = _SAVED_TO.search(text) if "<persisted-output>" in text else None
    return found.group(1) if found else None


def read_path(call: Mapping[str, Any] | None, cwd: str) -> str | None:
    """The file a Read call reads (normalised, a relative path taken from `cwd`), or None for other calls."""
    tool_input = call.get("input") if call is not None and call.get("name") == "Read" else None
    path = tool_input.get("file_path") if isinstance(tool_input, Mapping) else None
    return os.path.normpath(os.path.join(cwd, path)) if isinstance(path, str) and path else None


def saved_files(thread: Thread) -> set[str]:
    """The files the CLI saved the thread's outputs to (normalised): a Read of one is a read-back."""
    found = set()
    for entry in thread.entries:
        results = tool_results(entry)
        for block in results:
            output = entry.get("toolUseResult") if len(results) == 1 else None
            path = saved_path(output, text_of(block.get("content")))
            if path is not None:
                found.add(os.path.normpath(os.path.join(str(entry.get("cwd") or "."), path)))
    return found


def kept(hits: Sequence[SpillHit]) -> list[SpillHit]:
    """The hits flower spills: all but the needed Reads of a file the CLI saved an output to."""
    return [hit for hit in hits if not (hit.saved_read and hit.needed)]


def spill_hits(thread: Thread, policy: SpillPolicy) -> list[SpillHit]:
    """Every output of `thread` the policy spills, in order, and the Reads of a file the CLI had saved one
    of them to, marked `saved_read` (under flower they read the spill file, which the guard passes whole:
    only the replay's end, nothing read back, spills them)."""
    if not policy.enabled:
        return []
    calls = _calls(thread)
    said: ThreadText | None = None  # read once, on the thread's first hit
    hits = []
    saved: set[str] = set()  # the files the CLI saved spilled outputs to: flower's spill files instead
    for index, entry in enumerate(thread.entries):
        results = tool_results(entry)
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
            saved_read = tool == "Read" and read_path(call, str(cwd)) in saved
            text = text_of(block.get("content"))
            output = entry.get("toolUseResult") if len(results) == 1 else None
            if not isinstance(output, Mapping | str):
                output = text
            found = _saved(tool, output, text, policy, cwd)
            if found is not None and found[1] and (path := saved_path(output, text)) is not None:
                saved.add(os.path.normpath(os.path.join(cwd, path)))
            if found is not None and call is not None:
                head, tail = policy.head, policy.tail
                if said is None:
                    said = ThreadText.of(thread.entries, [(r.entry, r.blocks) for r in thread.requests])
                hits.append(
                    SpillHit(
                        index,
                        str(block.get("tool_use_id")),
                        tool,
                        len(text),
                        found[0],
                        lines=text.count("\n") + 1,
                        quoted_at=said.quoted_at(index, text, call, head, tail),
                        copies=said.copies(index, text, call, head, tail),
                        cli_saved=found[1],
                        saved_read=saved_read,
                    )
                )
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
