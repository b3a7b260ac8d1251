"""Every hook factory in one import: what to add to your own `ClaudeAgentOptions(hooks=...)`.

Each returns SDK hook callbacks that decide from structure, never from text, and each lives in the
package of its mechanism, where its policy and pure functions are:

- `delegate_guard` (layer 1, `flower._wall`): the main thread of a delegate-only spec delegates instead of
  doing (but for one-off steps, `own_steps`).
- `mandate_guard` (layer 1, `flower._wall`): every mandate starts with the same line, so workers share a
  cached prefix.
- `start_guard` (layer 1, `flower._wall`): workers started together read the prefix the first one writes.
- `report_cut` / `report_guard` / `report_hooks` (layer 1, `flower._wall`): a worker's long report goes to
  disk; its head and the path come back.
- `index_guard` / `index_hooks` (layer 2, `flower._workbench`): the workbench index follows writes into the
  workbench.
- `spill_guard` / `spill_hooks` (layer 3, `flower._spill`): large tool outputs go to the workbench's
  `spill/`.
"""

from ._spill import (
    SPILL_OMISSION,
    SPILL_POINTER,
    SPILL_READ_LINES,
    SPILL_READ_OFFSET,
    SPILL_TOOLS,
    SpillPolicy,
    spill_guard,
    spill_hooks,
)
from ._wall import (
    DELEGATE_REASON,
    MANDATE_LINE,
    OWN_STEP_MAX_INPUT,
    REPORT_LIMIT,
    REPORT_REASON,
    START_HOLD,
    delegate_guard,
    mandate_guard,
    report_cut,
    report_guard,
    report_hooks,
    start_guard,
)
from ._workbench import INDEX_MATCHER, index_guard, index_hooks

__all__ = [
    "DELEGATE_REASON",
    "INDEX_MATCHER",
    "MANDATE_LINE",
    "OWN_STEP_MAX_INPUT",
    "REPORT_LIMIT",
    "REPORT_REASON",
    "SPILL_OMISSION",
    "SPILL_POINTER",
    "SPILL_READ_LINES",
    "SPILL_READ_OFFSET",
    "SPILL_TOOLS",
    "START_HOLD",
    "SpillPolicy",
    "delegate_guard",
    "index_guard",
    "index_hooks",
    "mandate_guard",
    "report_cut",
    "report_guard",
    "report_hooks",
    "spill_guard",
    "spill_hooks",
    "start_guard",
]
