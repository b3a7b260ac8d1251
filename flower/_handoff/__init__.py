"""Handoff instead of compaction: past the context wall, a written document starts a fresh session.

- `HandoffPolicy`: when the main thread hands off (`reserve` tokens below the CLI's own compaction line)
  and how many sessions (generations) one step may chain.
- `HANDOFF_PROMPT` / `TAKEOVER_PROMPT`: what the retiring session is asked to write, and what its
  successor is told; `parse_handoff` reads the document's sections back (`Handoff`).
- `CompactPolicy`: what the CLI's own compaction may still do (`auto`, `no_summary`, `off`).

The document is saved under the workbench's `notes/`, so the successor starts from it and the workbench
alone; the run machinery (`Runtime`) links the sessions of a step as generations.
"""

from .compact import CompactPolicy
from .document import HANDOFF_PROMPT, TAKEOVER_PROMPT, Handoff, HandoffPolicy, parse_handoff

__all__ = [
    "HANDOFF_PROMPT",
    "TAKEOVER_PROMPT",
    "CompactPolicy",
    "Handoff",
    "HandoffPolicy",
    "parse_handoff",
]
