"""Reading and copying transcript entries: the shared vocabulary of the rewrites.

An entry is one line of the CLI's JSONL transcript (as written by CLI 2.1.327). The ones the rewrites care
about:

- `assistant` entries hold `message.content` blocks; the CLI writes one entry per block (`apiBlockIndex`),
  chained by `parentUuid`, so parallel calls are sibling entries of one API message (same `message.id`);
- `user` entries hold `tool_result` blocks, one entry per result, whose `parentUuid` is the entry holding
  the matching `tool_use` (the transcript is a tree, not a line: a parallel call's result hangs off its
  own call), plus structural markers such as `toolDenialKind`;
- entries with `isCompactSummary` or `isMeta` are never rewritten.

Rewrites copy on write: an entry that changes is copied (entry, message and content list), an entry that
does not is shared with the input, and the input is never mutated.
"""

from __future__ import annotations

import functools
import json
import re
import string
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from .._policies import Change, ChangeKind

__all__ = [
    "Entry",
    "Rewritten",
    "Spill",
    "block_change",
    "block_size",
    "check_entries",
    "content_blocks",
    "filled",
    "is_protected",
    "iter_blocks",
    "result_text",
    "with_blocks",
    "with_result_text",
    "with_tool_use_result",
]

Entry: TypeAlias = dict[str, Any]
"""One transcript line as the SDK's `SessionStore` holds it (a JSON object)."""


@dataclass(frozen=True)
class Spill:
    """A body that a trim moved out of the history: `name` (content-addressed) holds `text`."""

    name: str
    """The file name: a content hash, so the same body always gets the same name."""
    text: str
    """The body to write."""


@dataclass(frozen=True)
class Rewritten:
    """The outcome of one rewrite: the new entries, what changed, and the files a trim needs written."""

    entries: list[Entry]
    """The rewritten history (unchanged entries are shared with the input, changed ones are copies)."""
    changes: tuple[Change, ...] = ()
    """What the rewrite did, in history order."""
    spills: tuple[Spill, ...] = ()
    """Bodies to write before the history is handed out (a trim only)."""
    unreplayed: tuple[Change, ...] = ()
    """Changes left out of `changes` because the CLI no longer replays what they touch: the last cold
    load's rewrites a warm load repeats (`rewrite_history` with a `CachePolicy`) on entries a compaction,
    a `/clear` or a rewind has since taken off the replayed branch. They are in `entries` (the history
    stays the one that load returned) but save nothing now; each `chars_saved` is what it saved then."""


def check_entries(entries: Sequence[Any]) -> list[Entry]:
    """The entries as a list, after checking each is a dict (`TypeError` names the first that is not)."""
    if isinstance(entries, str | bytes | dict) or not isinstance(entries, Sequence):
        raise TypeError(f"expected a list of transcript entries, got {type(entries).__name__}")
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise TypeError(f"transcript entry {index} is a {type(entry).__name__}, not a dict")
    return list(entries)


def is_protected(entry: Entry) -> bool:
    """Compaction summaries and meta entries are never rewritten (their parent link may be repaired)."""
    return entry.get("isCompactSummary") is True or entry.get("isMeta") is True


def content_blocks(entry: Entry) -> list[Any] | None:
    """`message.content` when it is a list of blocks, else `None` (a plain-text message, or no message)."""
    message = entry.get("message")
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    return content if isinstance(content, list) else None


def iter_blocks(entry: Entry, kind: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """`(index, block)` for every block of type `kind` in the entry's content."""
    for index, block in enumerate(content_blocks(entry) or ()):
        if isinstance(block, dict) and block.get("type") == kind:
            yield index, block


def block_change(
    kind: ChangeKind, entry: Entry, block: dict[str, Any], saved: int, detail: str = ""
) -> Change:
    """The `Change` of one tool-result `block` of `entry` that a rewrite made `saved` characters shorter."""
    tool_use_id = block.get("tool_use_id")
    return Change(
        kind=kind,
        uuid=entry.get("uuid"),
        tool_use_id=tool_use_id if isinstance(tool_use_id, str) else None,
        chars_saved=saved,
        detail=detail,
    )


def block_size(value: Any) -> int:
    """Characters of a block as the CLI replays it (compact JSON, non-ASCII kept)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def result_text(block: dict[str, Any]) -> str | None:
    """The text of a tool_result when it is text only (a str, or text blocks), else `None`.

    A result holding an image or a document is never rewritten: there is no text to replace it with.
    """
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content:
        texts = []
        for part in content:
            if not (
                isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
            ):
                return None
            texts.append(part["text"])
        return "\n".join(texts)
    return None


def with_result_text(block: dict[str, Any], text: str) -> dict[str, Any]:
    """A copy of a tool_result block whose content is `text`, in the shape it had (str or text blocks)."""
    new = dict(block)
    new["content"] = text if isinstance(block.get("content"), str) else [{"type": "text", "text": text}]
    return new


def with_blocks(entry: Entry, blocks: list[Any]) -> Entry:
    """A copy of the entry whose `message.content` is `blocks` (other fields shared)."""
    new = dict(entry)
    message = dict(entry["message"])
    message["content"] = blocks
    new["message"] = message
    return new


def with_tool_use_result(entry: Entry, body: str, text: str) -> Entry:
    """The entry with its `toolUseResult` made to say `text` where it repeats the old result `body`.

    The CLI keeps a copy of each result beside the message, in `toolUseResult`: a str for an error
    (`"Error: " + the result`), a dict for a tool's output. It does not send that field on resume
    today, but a rewritten body or instruction left whole there is one field away from the model. Two
    shapes are rewritten: a str that holds the body, and a Bash output (`stdout`, `stderr`) whose parts
    are both in the body. Any other dict is left as it is: the CLI rebuilds state from some of them on
    resume (the files a Read saw, for the next Edit). Returns `entry` itself when nothing changes.
    """
    value = entry.get("toolUseResult")
    if not body or text == body:
        return entry
    if isinstance(value, str) and body in value:
        new: Any = value.replace(body, text)
    elif (
        isinstance(value, dict)
        and isinstance(value.get("stdout"), str)
        and isinstance(value.get("stderr"), str)
        and value["stdout"] in body
        and value["stderr"] in body
        and (value["stdout"] or value["stderr"])
    ):
        new = {**value, "stdout": text, "stderr": ""}
    else:
        return entry
    copy = dict(entry)
    copy["toolUseResult"] = new
    return copy


def filled(template: str, text: str) -> bool:
    """Whether `text` is `template` with its fields filled in (a note a rewrite already put there).

    A history can hold notes already: a fork or an import copies a rewritten history into a new
    session. Such a note is neither rewritten again nor counted again.
    """
    return _pattern(template).fullmatch(text) is not None


@functools.lru_cache(maxsize=64)
def _pattern(template: str) -> re.Pattern[str]:
    parts = []
    for literal, field, _, _ in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if field is not None:
            parts.append(r"(?s:.*?)")
    return re.compile("".join(parts))
