"""What later replies take from the part of an output a preview hides: the signs of a read-back.

A model shown only a spilled output's preview (its pointer, its head and its tail) can still use what the
preview hides, but only by reading it back. A transcript of a session without spill shows where the model
used it: a later reply of the same thread carries a value found in the hidden part. Two tests, from loose
to strict:

- *quoted* (`quoted_at`): a reply's text or tool input holds an identifier-like word (6 characters or
  more, with a digit or one of `=_/.:`) found in the hidden part and neither in the preview nor in the
  call. Loose: a path or a name of the code base often shows elsewhere too.
- *copied* (`copies`): a reply holds a *token* (such a word with a digit and a letter: an id, a hash, a
  `KEY=value`, a `file.go:515`) found in the hidden part and nowhere else the model could have seen it
  before that reply: not in the preview or the call, not in another tool result or a prompt before the
  reply, not in a reply before the output. Such a token could only have come from the hidden part, so a
  model shown the preview alone would have had to look it up. Each hidden line copied is one look-up,
  placed at the reply that first copies from it.

On real transcripts the strict test never fired on an output the CLI had saved to a file and the model
did not read back (0 of 15 whose whole text the transcript keeps), where the loose one fired on 5: the
strict test is the one the read-back estimate (`readback`) treats as certain.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..._util.content import string_leaves, text_of

__all__ = ["Copy", "ThreadText", "tokens", "values"]

_WORD = re.compile(r"[A-Za-z0-9_./=:+-]{6,}")


def values(text: str) -> set[str]:
    """The identifier-like words of `text` (6 characters or more, with a digit or one of `=_/.:`)."""
    words = (w.strip(".:/=+-") for w in _WORD.findall(text))
    return {w for w in words if len(w) >= 6 and any(c.isdigit() or c in "=_/.:" for c in w)}


def tokens(text: str) -> set[str]:
    """The words of `values(text)` with a digit and a letter: ids, hashes, `KEY=value`s, `file:line`s."""
    return {w for w in values(text) if any(c.isdigit() for c in w) and any(c.isalpha() for c in w)}


@dataclass(frozen=True)
class Copy:
    """One look-up a model shown only the preview would have made."""

    at: int
    """The index of the first entry of the reply that first copies from the line."""
    line: int
    """The line of the output's text that holds what it copies (0 for the first)."""


def _reply_text(blocks: Sequence[Mapping[str, Any]]) -> str:
    return "\n".join(
        str(b.get("text", "")) if b.get("type") == "text" else "\n".join(string_leaves(b.get("input", {})))
        for b in blocks
        if b.get("type") in ("text", "tool_use")
    )


class ThreadText:
    """A thread's texts, read once: each reply's words, each tool result and prompt (what a model could
    have seen), in transcript order."""

    def __init__(self, entries: Sequence[Mapping[str, Any]], replies: Sequence[tuple[int, str]]) -> None:
        """`replies`: `(index of the reply's first entry, its text and tool inputs)`, in order."""
        self._replies = [(at, text, values(text)) for at, text in replies]
        self._seen: list[tuple[int, str, str]] = []  # (entry index, tool_use_id or "", text)
        for index, entry in enumerate(entries):
            if entry.get("type") != "user":
                continue
            message = entry.get("message")
            content = message.get("content") if isinstance(message, Mapping) else None
            if isinstance(content, str):
                self._seen.append((index, "", content))
                continue
            for block in content if isinstance(content, list) else ():
                if not isinstance(block, Mapping):
                    continue
                if block.get("type") == "tool_result":
                    self._seen.append((index, str(block.get("tool_use_id")), text_of(block.get("content"))))
                elif block.get("type") == "text":
                    self._seen.append((index, "", str(block.get("text", ""))))

    @classmethod
    def of(
        cls, entries: Sequence[Mapping[str, Any]], replies: Iterable[tuple[int, Sequence[Any]]]
    ) -> ThreadText:
        """From `(index of a reply's first entry, its content blocks)` pairs."""
        return cls(entries, [(at, _reply_text(blocks)) for at, blocks in replies])

    def quoted_at(self, index: int, text: str, call: Mapping[str, Any], head: int, tail: int) -> int | None:
        """The first reply after entry `index` that quotes the hidden part of `text` (the loose test)."""
        hidden = values(text[head : len(text) - tail])
        if not hidden:
            return None
        hidden -= values(text[:head] + "\n" + text[len(text) - tail :])
        hidden -= values(json.dumps(call.get("input", {})))
        return next((at for at, _, found in self._replies if at > index and hidden & found), None)

    def _elsewhere(self, token: str, index: int, at: int, same: frozenset[str]) -> bool:
        """Whether `token` shows in a tool result (other than those of `same`) or a prompt before entry
        `at`, or in a reply before entry `index`."""
        if any(i < at and ident not in same and token in t for i, ident, t in self._seen):
            return True
        return any(a < index and token in t for a, t, _ in self._replies)

    def copies(
        self,
        index: int,
        text: str,
        call: Mapping[str, Any],
        head: int,
        tail: int,
        same: Iterable[str] = (),
        after: int | None = None,
    ) -> tuple[Copy, ...]:
        """The look-ups of the hidden part of `text` (the result at entry `index` of `call`), one per line
        copied, in order (the strict test). `same`: tool_use_ids whose results are this output again (its
        read-backs), not another source. `after`: only replies after this entry count (those of a reader
        that did not see the output, such as a coordinator whose worker did)."""
        start, end = head, len(text) - max(tail, 0)
        if end <= start:
            return ()
        shown = tokens(text[:start] + "\n" + text[end:]) | tokens(
            "\n".join(string_leaves(call.get("input", {})))
        )
        line_of: dict[str, int] = {}
        first = text.count("\n", 0, start)
        for number, part in enumerate(text[start:end].split("\n")):
            for token in tokens(part) - shown:
                line_of.setdefault(token, first + number)
        if not line_of:
            return ()
        own = frozenset({str(call.get("id")), *same})
        found: list[Copy] = []
        done: set[int] = set()
        since = index if after is None else max(index, after)
        for at, _, words in self._replies:
            if at <= since:
                continue
            for token in sorted(set(line_of) & words):
                where = line_of[token]
                if where not in done and not self._elsewhere(token, index, at, own):
                    done.add(where)
                    found.append(Copy(at, where))
        return tuple(found)
