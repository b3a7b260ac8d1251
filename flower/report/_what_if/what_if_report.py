"""`WhatIfReport`: every session's what-if, their total, a paragraph to paste, JSON and a text table.

The total adds every count, token and dollar over the sessions, and takes the largest of each peak. The
JSON (`to_dict`) is documented in docs/what-if.md: `{"source", "filters", "summary", "sessions": [{
"session_id", "project_key", "cwd", "path", "started", "ended", "tokens_per_char", "as_recorded", "layers"}],
"total": {"sessions", "as_recorded", "layers"}, "assumptions", "notes", "skipped", "not_transcripts"}`;
dollars are floats,
tokens ints, derived values (`saved_usd`, `share`, `estimate`) included. No conversation content is in it
unless `show_prompts` gave each session a `title`. The text ends with what to do next, and the `flower run`
command for the directory the costliest session ran in.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .lines import SessionWhatIf, WhatIfTotal
from .render import first_screen, render

__all__ = ["WhatIfReport", "WhatIfTotal", "total_of"]

_SERIES = ("main_context", "main_context_after")


def _added(items: Sequence[Any]) -> Any:
    """Dataclasses of one type added field by field: numbers summed (peaks: max), flags or-ed, nested
    dataclasses added, anything else taken from the first."""
    first = items[0]
    values: dict[str, Any] = {}
    for f in dataclasses.fields(first):
        found = [getattr(item, f.name) for item in items]
        sample = found[0]
        if isinstance(sample, bool):
            values[f.name] = any(found)
        elif isinstance(sample, str) and f.name == "stopped":
            values[f.name] = ""  # per session; a total counts `unfinished`
        elif isinstance(sample, int | float) and "peak" in f.name:
            values[f.name] = max(found)
        elif isinstance(sample, int | float):
            values[f.name] = sum(found)
        elif isinstance(sample, tuple) and f.name == "unpriced":
            values[f.name] = tuple(dict.fromkeys(name for names in found for name in names))
        elif dataclasses.is_dataclass(sample) and f.name != "assumptions":
            values[f.name] = _added(found)
        else:
            values[f.name] = sample
    return type(first)(**values)


def total_of(sessions: Sequence[SessionWhatIf]) -> WhatIfTotal:
    """The total over `sessions`."""
    if not sessions:
        return WhatIfTotal()
    return WhatIfTotal(
        sessions=len(sessions),
        as_recorded=_added([s.as_recorded for s in sessions]),
        layers=_added([s.layers for s in sessions]),
    )


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        data = {
            f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.name not in _SERIES
        }
        for name in getattr(type(value), "_derived", ()):
            data[name] = _plain(getattr(value, name))
        return data
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    return value


@dataclass(frozen=True, kw_only=True)
class WhatIfReport:
    """What flower's layers would have changed in a history, session by session and in total.

    Example::

        report = await build_what_if()           # the CLI's own projects directory
        print(report.summary)                    # one paragraph to paste
        report.total.layers.spill.saved_usd
    """

    source: str
    """What was read."""
    filters: dict[str, Any]
    """The filters applied (project, sessions, since, until)."""
    sessions: tuple[SessionWhatIf, ...]
    """Every session read, oldest first."""
    total: WhatIfTotal
    notes: tuple[str, ...] = ()
    """What was assumed or could not be measured."""
    skipped: tuple[str, ...] = ()
    """Files or sessions that could not be read at all, with why."""
    not_transcripts: tuple[str, ...] = ()
    """Files that are not Claude Code transcripts (another tool's log, random JSON Lines), with why:
    counted apart, never as sessions."""

    @property
    def summary(self) -> str:
        """The first screen: at most 80 plain words a user can paste (`render.first_screen`)."""
        return first_screen(self)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (the schema in the module's docstring)."""
        assumptions = self.total.layers.delegation.assumptions
        return {
            "source": self.source,
            "filters": self.filters,
            "summary": self.summary,
            "sessions": [_plain(s) for s in self.sessions],
            "total": _plain(self.total),
            "assumptions": _plain(assumptions),
            "notes": list(self.notes),
            "skipped": list(self.skipped),
            "not_transcripts": list(self.not_transcripts),
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        """The report as JSON."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def render_text(self, *, rows: int = 20) -> str:
        """The first screen, the layers' table, the `rows` costliest sessions, the assumptions, then what
        to do next (`render.render`)."""
        return render(self, rows)
