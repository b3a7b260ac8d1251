"""Spill (layer 3): a large tool output goes to disk at once; the conversation gets a pointer and a preview.

- `spill_guard` / `spill_hooks`: the PostToolUse hook, for the main thread and subagents alike.
- `SpillPolicy`: what is spilled (the threshold, the tools, lists or not) and what the model sees instead
  (the pointer line, the head and tail of the preview), with the default texts `SPILL_POINTER`,
  `SPILL_READ_LINES`, `SPILL_READ_OFFSET` and `SPILL_OMISSION`.

Inside: which parts of an output to spill and the output with those parts replaced (`_shape`), the
previews (`_preview`), the content-addressed files and their manifest (`_files`), and the chain that
orders an app's own PostToolUse rewrites before the spill (`_chain`); all but the files are pure.
"""

from .guard import spill_guard, spill_hooks
from .spill_policy import (
    SPILL_OMISSION,
    SPILL_POINTER,
    SPILL_READ_LINES,
    SPILL_READ_OFFSET,
    SPILL_TOOLS,
    SpillPolicy,
)

__all__ = [
    "SPILL_OMISSION",
    "SPILL_POINTER",
    "SPILL_READ_LINES",
    "SPILL_READ_OFFSET",
    "SPILL_TOOLS",
    "SpillPolicy",
    "spill_guard",
    "spill_hooks",
]
