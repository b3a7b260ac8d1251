"""Which result entries are refusals: the CLI's structural mark, and its fixed sentences before that mark.

The CLI marks a refused call's result entry with `toolDenialKind` (`permission-rule` for a hook, a
settings rule or `dontAsk`; `user-rejected` for an interrupt or a refused permission prompt, the latter
with a `permissionDecision`). CLI 2.1.42 and earlier wrote neither field. Their refusals are recognised
only when every one of these holds, so that no tool output can pass for one:

- the entry has neither `toolDenialKind` nor `permissionDecision` (an old-format entry);
- its one tool_result block has `is_error: true`;
- the block's text is exactly one of the CLI's fixed sentences: "Permission to use <tool> has been
  denied." or "Permission to use <tool> with command <the call's own command> has been denied."
  (a rule denial), or one of the CLI's whole interrupt sentences (`OLD_INTERRUPTS`: an interrupt, or a
  permission prompt dismissed with Esc; the variant that carries the user's own words is left alone).

Measured on the 18 real transcripts: 2 rule denials and 4 interrupt results match (3 of them on the
branch a resume replays), and nothing else. The second interrupt sentence ("The user doesn't want to take
this action right now. ..."), followed by the "[Request interrupted by user for tool use]" prompt, was
met in other public transcripts of CLI 2.1.17; CLI 2.1.332 still holds it (for a cancelled background
call, which it marks `toolDenialKind: "cancelled"`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._transcript import Entry, content_blocks, result_text

__all__ = ["OLD_INTERRUPTS", "OLD_REJECTION", "denial_kind", "tool_calls"]

OLD_REJECTION = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
    "edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to "
    "tell you how to proceed."
)
"""The result text CLI 2.1.42 and earlier wrote for an interrupted or dismissed call."""
OLD_INTERRUPTS = (
    OLD_REJECTION,
    "The user doesn't want to take this action right now. STOP what you are doing and wait for the user "
    "to tell you how to proceed.",
)
"""Every whole result text an unmarked (old-format) entry is recognised as an interrupt by: the one above,
and the shorter one CLI 2.1.17 also wrote for an interrupted call."""


def denial_kind(entry: Entry, calls: Mapping[str, Mapping[str, Any]] | None = None) -> str | None:
    """The entry's `toolDenialKind`, or the kind its old-format fixed sentence implies, or None.

    `calls` maps tool_use ids to their blocks: an old-format rule denial is recognised only when it
    names its own call's tool and command (without `calls`, old-format entries give None).
    """
    if entry.get("type") != "user":
        return None
    kind = entry.get("toolDenialKind")
    if kind is not None:
        return kind if isinstance(kind, str) else None
    if "permissionDecision" in entry or calls is None:
        return None
    blocks = [
        b for b in content_blocks(entry) or () if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    if len(blocks) != 1 or blocks[0].get("is_error") is not True:
        return None
    text = result_text(blocks[0])
    if text in OLD_INTERRUPTS:
        return "user-rejected"
    call = calls.get(str(blocks[0].get("tool_use_id")))
    if text is None or call is None or not text.startswith("Permission to use "):
        return None
    name = str(call.get("name", ""))
    tool_input = call.get("input")
    command = tool_input.get("command") if isinstance(tool_input, Mapping) else None
    sentences = {f"Permission to use {name} has been denied."}
    if isinstance(command, str):
        sentences.add(f"Permission to use {name} with command {command} has been denied.")
    # the first line: the newest kept denial carries the prune's note on the lines after it
    return "permission-rule" if text.partition("\n")[0] in sentences else None


def tool_calls(entries: Any) -> dict[str, Mapping[str, Any]]:
    """tool_use id -> its block, for every call in the entries (the first one wins)."""
    found: dict[str, Mapping[str, Any]] = {}
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("type") != "assistant":
            continue
        for block in content_blocks(entry) or ():
            ident = block.get("id") if isinstance(block, dict) else None
            if isinstance(ident, str) and block.get("type") == "tool_use":
                found.setdefault(ident, block)
    return found
