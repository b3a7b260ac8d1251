"""flower's hooks: small factories that return SDK hook callbacks, each deciding from structure.

- `delegate_guard` (layer 1): the main thread of a delegate-only spec delegates instead of doing.
- `spill_guard` / `spill_hooks` (layer 3): large tool outputs go to the workbench's `spill/`.
- `index_guard` / `index_hooks` (layer 2): the workbench index follows writes into the workbench.
- `mandate_guard` (layer 1): every mandate starts with the same line, so workers share a cached prefix.
- `report_guard` / `report_hooks` (layer 1): a worker's long report goes to disk, a short one comes back.
"""

from ..spill.guard import spill_guard, spill_hooks
from ..spill.policy import (
    SPILL_OMISSION,
    SPILL_POINTER,
    SPILL_READ_LINES,
    SPILL_READ_OFFSET,
    SPILL_TOOLS,
    SpillPolicy,
)
from ..wall.delegate import DELEGATE_REASON, delegate_guard
from ..wall.mandate import MANDATE_LINE, mandate_guard
from ..wall.report import REPORT_LIMIT, REPORT_REASON, report_guard, report_hooks
from .index import INDEX_MATCHER, index_guard, index_hooks

__all__ = [
    "DELEGATE_REASON",
    "INDEX_MATCHER",
    "MANDATE_LINE",
    "REPORT_LIMIT",
    "REPORT_REASON",
    "SPILL_OMISSION",
    "SPILL_POINTER",
    "SPILL_READ_LINES",
    "SPILL_READ_OFFSET",
    "SPILL_TOOLS",
    "SpillPolicy",
    "delegate_guard",
    "index_guard",
    "index_hooks",
    "mandate_guard",
    "report_guard",
    "report_hooks",
    "spill_guard",
    "spill_hooks",
]
