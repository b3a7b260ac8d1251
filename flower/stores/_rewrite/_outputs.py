"""The entries whose tool results hold a command's output: what expiry and trim may replace."""

from __future__ import annotations

from collections.abc import Collection, Iterator

from ._transcript import Entry, is_protected
from .branch import on_branch
from .denials import denial_kind, tool_calls
from .heal import is_healed

__all__ = ["output_entries"]


def output_entries(
    entries: list[Entry], branch: Collection[str] | None = None
) -> Iterator[tuple[int, Entry]]:
    """`(index, entry)` of the user entries on the replayed branch whose results are outputs: not a
    protected entry, not a result a heal added, not a refusal or an interruption (`denial_kind`)."""
    scope = on_branch(entries, branch)
    calls = tool_calls(entries)
    for position, entry in enumerate(entries):
        if (
            position in scope
            and entry.get("type") == "user"
            and not is_protected(entry)
            and not is_healed(entry)
            and denial_kind(entry, calls) is None
        ):
            yield position, entry
