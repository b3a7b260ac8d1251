"""What the model sees in place of a spilled output: the pointer line and a preview (pure functions).

- text: the pointer, the first `head` chars, an omission line, the last `tail` chars;
- a Read's `file.content`: the pointer, then the first whole lines, numbered as in the file;
- a list of strings: the pointer, then whole items from the start and the end.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ._files import Spilled, quoted
from ._shape import Candidate, FieldPath
from .spill_policy import SpillPolicy

__all__ = [
    "READ_CONTENT",
    "START_LINE",
    "lines_preview",
    "pointer_line",
    "preview_for",
    "read_preview",
    "read_start",
    "text_preview",
]

READ_CONTENT: Final = ("file", "content")
START_LINE: Final = ("file", "startLine")


def pointer_line(spilled: Spilled, tool: str, candidate: Candidate, policy: SpillPolicy) -> str:
    """The policy's pointer, filled in; the path in backticks so a space stays part of it."""
    return policy.pointer.format(
        tool=tool,
        field=candidate.field,
        chars=f"{spilled.chars:,}",
        path=quoted(spilled.path),
        head=policy.head,
        tail=policy.tail,
    )


def text_preview(value: str, spilled: Spilled, tool: str, candidate: Candidate, policy: SpillPolicy) -> str:
    """The pointer, the first `head` chars, and (with `tail`) an omission line and the last chars."""
    parts = [pointer_line(spilled, tool, candidate, policy)]
    if policy.head:
        parts.append(value[: policy.head])
    if policy.tail and spilled.tail:
        omitted = max(0, spilled.chars - min(policy.head, len(value)) - len(spilled.tail))
        parts.append(policy.omission.format(omitted=f"{omitted:,}"))
        parts.append(spilled.tail)
    return "\n".join(parts)


def read_start(tool: str, output: object, candidate: Candidate) -> int | None:
    """The first line number of a text Read's `file.content` being spilled, else None."""
    if tool != "Read" or candidate.path != READ_CONTENT or not isinstance(output, Mapping):
        return None
    file = output.get("file")
    start = file.get("startLine") if isinstance(file, Mapping) else None
    return start if isinstance(start, int) and not isinstance(start, bool) and start >= 1 else None


def read_preview(
    value: str, spilled: Spilled, tool: str, candidate: Candidate, policy: SpillPolicy, start: int
) -> str:
    """The pointer, then the first whole lines that fit in `head` chars, as a Read's content.

    The CLI numbers each line of a Read's content from `startLine` (measured: a content of 3 lines with
    `startLine` 500 reads `500 ... 501 ... 502 ...`), so the pointer goes first and `startLine` is set one
    lower: the lines after it keep the numbers they have in the file (a whole-file Read shows the pointer
    as line 0, which no file has). Lines from the end are not shown: they could not keep their numbers.
    """
    lines = value.split("\n")
    count = _fit(lines, policy.head)
    pointer = pointer_line(spilled, tool, candidate, policy)
    if count:
        pointer += " " + policy.read_lines.format(first=f"{start:,}", last=f"{start + count - 1:,}")
    if start > 1:
        pointer += " " + policy.read_offset.format(first=f"{start:,}")
    return "\n".join([pointer, *lines[:count]])


def lines_preview(
    items: list[str], spilled: Spilled, tool: str, candidate: Candidate, policy: SpillPolicy
) -> list[str]:
    """The pointer, then whole items from the start (and the end) that fit in `head` (and `tail`) chars."""
    shown = [pointer_line(spilled, tool, candidate, policy)]
    first = _fit(items, policy.head)
    shown += items[:first]
    last = _fit(items[first:][::-1], policy.tail) if policy.tail else 0
    if first + last < len(items):
        hidden = items[first : len(items) - last]
        shown.append(policy.omission.format(omitted=f"{sum(len(i) + 1 for i in hidden):,}"))
    if last:
        shown += items[len(items) - last :]
    return shown


def preview_for(
    tool: str,
    output: object,
    candidate: Candidate,
    value: str | list[str],
    spilled: Spilled,
    policy: SpillPolicy,
) -> dict[FieldPath, object]:
    """What replaces one spilled part of `output`: its path mapped to the pointer and preview (a list's
    lines, a Read's numbered first lines, else head and tail), and for a Read past line 1 its `startLine`
    set one lower so the lines keep their numbers (`read_preview`)."""
    if isinstance(value, list):
        return {candidate.path: lines_preview(value, spilled, tool, candidate, policy)}
    start = read_start(tool, output, candidate)
    if start is not None:
        return {
            candidate.path: read_preview(value, spilled, tool, candidate, policy, start),
            START_LINE: start - 1,
        }
    return {candidate.path: text_preview(value, spilled, tool, candidate, policy)}


def _fit(items: list[str], budget: int) -> int:
    """How many items from the start fit in `budget` chars, a newline after each."""
    count = used = 0
    for item in items:
        used += len(item) + 1
        if used > budget:
            break
        count += 1
    return count
