"""The workbench (layer 2): files that outlive the conversation, and an index the coordinator reads.

- `Workbench`: `scripts/`, `artifacts/`, `notes/` and `spill/` under `<workspace>/.flower/`, and the
  generated `INDEX.md` given to the coordinator with `WORKBENCH_RULES`.
- `index_guard` / `index_hooks`: a PostToolUse hook that refreshes the index after a write into the
  workbench (`INDEX_MATCHER`).

Inside: what the index lists and how it shows names safely (`_listing`), the fresh index given before
each prompt of a long-lived session (`_index_context`), and the workbench inside a run, whose failures
become a `WorkbenchWarning` event instead of an exception (`_in_run`).
"""

from .bench import WORKBENCH_RULES, Workbench
from .index import INDEX_MATCHER, index_guard, index_hooks

__all__ = ["INDEX_MATCHER", "WORKBENCH_RULES", "Workbench", "index_guard", "index_hooks"]
