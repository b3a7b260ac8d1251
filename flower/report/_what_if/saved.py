"""The read-backs of the outputs the CLI saved to a file itself: did flower's preview make them needless?

The CLI saves a long output (a Bash output over 30,000 characters, a Grep's long content) to
`<session>/tool-results/` beside the transcript, and shows the model a 2 KB head. flower's pointer
replaces that preview with its own: a shorter head and the output's tail (`SpillPolicy.tail`, where test
verdicts and summaries sit). A Read the model then made of the CLI's file reads, under flower, the spill
file, which the guard passes whole (`spill.SpillHit.saved_read`): kept as recorded, unless what the
replies after it took from the output is in flower's preview, so the model had no need to read it back.

That is decided on the whole output, read from the file the CLI saved (the path it named, else the file
of that name in the session's own `tool-results/`); where neither can be read, the read-back is kept.
The test is the strict one (`quotes.ThreadText.copies`): a token a later reply copies, found only in the
output (its read-backs aside) that the CLI's preview hid; the read-back was needless when flower's
preview shows every such token. Reads to look, after which nothing is copied, are kept: real agents read
a preview back to look at it as often under either preview (`flower.report._measured`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from ..._spill import SpillPolicy
from ..._util.content import text_of, tool_results
from .quotes import ThreadText
from .replay import Thread
from .spill import SpillHit, read_path, saved_path

__all__ = ["settle", "whole_output"]

CLI_PREVIEW_CHARS: Final = 2_048
"""The head of a saved output the CLI's preview shows (`Preview (first 2KB)`, CLI 2.1.332)."""
MAX_CHARS: Final = 5_000_000
"""A saved output longer than this is not read (its read-backs are kept)."""


def whole_output(path: str, home: Path | None) -> str | None:
    """The output the CLI saved to `path`: that file, else the file of its name in `home` (the session's
    `tool-results/`); None when neither can be read (or it is over `MAX_CHARS`)."""
    for candidate in (Path(path), *((home / Path(path).name,) if home is not None else ())):
        try:
            if candidate.is_file() and candidate.stat().st_size <= MAX_CHARS:
                return str(candidate.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
    return None


def settle(
    thread: Thread, hits: Sequence[SpillHit], home: Path | None, policy: SpillPolicy
) -> list[SpillHit]:
    """`hits` with each `saved_read`'s `needed` decided on the whole output it reads back (see above)."""
    if not any(hit.saved_read for hit in hits):
        return list(hits)
    calls = {str(b.get("id")): b for r in thread.requests for b in r.blocks if b.get("type") == "tool_use"}
    outputs: dict[str, SpillHit] = {}  # saved file -> the hit of the output saved to it
    for hit in hits:
        if hit.cli_saved:
            entry = thread.entries[hit.entry]
            for block in tool_results(entry):
                if str(block.get("tool_use_id")) == hit.tool_use_id:
                    output = entry.get("toolUseResult") if len(tool_results(entry)) == 1 else None
                    path = saved_path(output, text_of(block.get("content")))
                    if path is not None:
                        outputs[os.path.normpath(os.path.join(str(entry.get("cwd") or "."), path))] = hit
    needless: set[str] = set()
    said: ThreadText | None = None
    for path, hit in outputs.items():
        cwd = str(thread.entries[hit.entry].get("cwd") or ".")
        reads = [h for h in hits if h.saved_read and read_path(calls.get(h.tool_use_id), cwd) == path]
        whole = whole_output(path, home) if reads else None
        if whole is None:
            continue
        same = [i for i, c in calls.items() if i != hit.tool_use_id and path in str(c.get("input", ""))]
        said = said or ThreadText.of(thread.entries, [(r.entry, r.blocks) for r in thread.requests])
        call = calls.get(hit.tool_use_id, {})
        shown = CLI_PREVIEW_CHARS  # the CLI's preview: the output's head
        taken = said.copies(hit.entry, whole, call, shown, 0, same)  # what the CLI's preview hid
        hidden = said.copies(hit.entry, whole, call, max(shown, policy.head), policy.tail, same)
        if taken and not hidden:
            needless.update(h.tool_use_id for h in reads)
    return [dataclasses.replace(h, needed=False) if h.tool_use_id in needless else h for h in hits]
