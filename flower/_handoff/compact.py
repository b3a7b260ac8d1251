"""`CompactPolicy`: what the CLI's own compaction may do."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .._util.check import check_fields

__all__ = ["CompactMode", "CompactPolicy"]

CompactMode = Literal["auto", "no_summary", "off"]


@dataclass(frozen=True, kw_only=True)
class CompactPolicy:
    """The CLI's compaction switch, as environment for the CLI (measured with CLI 2.1.327).

    - `"auto"`: change nothing (the CLI summarises at window - 33k);
    - `"no_summary"`: auto-compact off (`DISABLE_AUTO_COMPACT=1`); `/compact` still works. The CLI then
      refuses locally at about window - 23k, so use it with a handoff;
    - `"off"`: all compaction off (`DISABLE_COMPACT=1`).

    When handoff is active the Runtime uses `"no_summary"` unless the spec set `compact` itself.
    """

    mode: CompactMode = "auto"
    """`"auto"`, `"no_summary"` or `"off"` (see above)."""

    def __post_init__(self) -> None:
        check_fields(self)  # `mode` is one of its Literal's values

    def env(self) -> dict[str, str]:
        """The CLI environment entries this policy sets."""
        if self.mode == "no_summary":
            return {"DISABLE_AUTO_COMPACT": "1"}
        if self.mode == "off":
            return {"DISABLE_COMPACT": "1"}
        return {}
