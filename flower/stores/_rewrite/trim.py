"""Trim: large tool results move to files; the history keeps a pointer the agent can follow with Read.

`trim_results` is pure: it decides what moves where and returns the bodies to write as `Spill`s;
`flower.stores._rewrite.files.write_spills` writes them. A store writes the files before it hands the
history out, and drops the trim (keeping the bodies) if writing fails, so a pointer never names a file
that is not there.

File names are content-addressed (a SHA-256 prefix of the body), so the same body always gets the same
name and pointer: two loads of one history produce the same bytes, and a body met twice is stored once.

Example (keep_recent=0, min_chars=2000)::

    before: tool_result(content="<5,321 chars of build log>")
    after:  tool_result(content="[tool result trimmed: 5321 chars moved to <spill_dir>/3f2a….txt; "
                                 "Read that file if you need it]")
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Collection, Sequence
from typing import Any

from ..._errors import SpecError
from .._policies import Change, TrimPolicy
from ._outputs import output_entries
from ._transcript import (
    Rewritten,
    Spill,
    block_change,
    block_size,
    check_entries,
    content_blocks,
    filled,
    iter_blocks,
    result_text,
    with_blocks,
    with_result_text,
    with_tool_use_result,
)

__all__ = ["spill_name", "trim_results"]


def spill_name(text: str) -> str:
    """The content-addressed file name of a body: 32 hex digits of its SHA-256, then `.txt`."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{digest[:32]}.txt"


def trim_results(
    entries: Sequence[Any], policy: TrimPolicy, spill_dir: str, *, branch: Collection[str] | None = None
) -> Rewritten:
    """Replace every text result of at least `min_chars`, except the `keep_recent` newest, by a pointer.

    `spill_dir` must be absolute: the pointer is what the agent passes to Read. Nothing is written here;
    the returned `spills` list the files the pointers name (each name once). Only results on the
    replayed branch count (`replayed`), and a body is replaced only when the pointer is strictly
    shorter, in text and in JSON.
    """
    if not isinstance(policy, TrimPolicy):
        raise SpecError(f"trim_results needs a TrimPolicy, got {type(policy).__name__}")
    if not isinstance(spill_dir, str) or not os.path.isabs(spill_dir):
        raise SpecError(
            f"the spill directory must be an absolute path (the agent Reads it), got {spill_dir!r}"
        )
    entries = check_entries(entries)
    sites: list[tuple[int, int, str]] = []  # entry index, block index, text
    for position, entry in output_entries(entries, branch):
        for index, block in iter_blocks(entry, "tool_result"):
            text = result_text(block)
            if text is not None and len(text) >= policy.min_chars and not filled(policy.pointer, text):
                sites.append((position, index, text))
    count = len(sites) - policy.keep_recent
    if count <= 0:
        return Rewritten(entries)
    out = list(entries)
    changes: list[Change] = []
    spills: dict[str, Spill] = {}
    for position, index, text in sites[:count]:
        entry = out[position]
        blocks = list(content_blocks(entry) or ())
        old = blocks[index]
        name = spill_name(text)
        path = os.path.join(spill_dir, name)
        pointer = policy.pointer.format(chars=len(text), path=path)
        new = with_result_text(old, pointer)
        saved = block_size(old) - block_size(new)
        if saved <= 0 or len(pointer) >= len(text):
            continue  # never longer: a pointer as long as the body saves nothing
        spills.setdefault(name, Spill(name, text))
        blocks[index] = new
        out[position] = with_tool_use_result(with_blocks(entry, blocks), text, pointer)
        changes.append(block_change("trimmed", entry, old, saved, path))
    if not changes:
        return Rewritten(entries)
    return Rewritten(out, tuple(changes), tuple(spills.values()))
