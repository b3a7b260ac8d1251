"""Expiry: the bodies of old ephemeral command results become a one-line note.

`git status`, `ls` or `cat` answer "what is the state now"; after a few more steps the answer may be
wrong, and re-running the command costs less than carrying a stale copy. The `keep_recent` most recent
such results keep their body. The result block itself stays (only its content changes), so the call and
its result still go together.

Example (keep_recent=1, two `git status` results)::

    before: tool_result(content=" M a.py\\n?? b.txt")   tool_result(content=" M a.py")
    after:  tool_result(content="[result of `git status -s` expired: at least 1 newer result ...]")
            tool_result(content=" M a.py")
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..policies import Change, EphemeralPolicy
from ._transcript import (
    Entry,
    Rewritten,
    block_size,
    check_entries,
    content_blocks,
    is_protected,
    iter_blocks,
    result_text,
    with_blocks,
    with_result_text,
)

__all__ = ["expire_ephemeral", "short_command"]

_SHORT = 80


def short_command(command: str) -> str:
    """The command as a note shows it: its first non-empty line, at most 80 characters."""
    lines = [line.strip() for line in command.strip().splitlines() if line.strip()]
    first = lines[0] if lines else ""
    more = len(lines) > 1
    if len(first) > _SHORT:
        first, more = first[: _SHORT - 1].rstrip(), True
    return first + ("…" if more else "")


def _commands(entries: list[Entry]) -> dict[str, str]:
    """tool_use id -> command, for every Bash call in the history."""
    commands: dict[str, str] = {}
    for entry in entries:
        for _, block in iter_blocks(entry, "tool_use"):
            tool_input = block.get("input")
            if block.get("name") == "Bash" and isinstance(tool_input, dict):
                command = tool_input.get("command")
                if isinstance(command, str) and isinstance(block.get("id"), str):
                    commands[block["id"]] = command
    return commands


def expire_ephemeral(entries: Sequence[Any], policy: EphemeralPolicy | None = None) -> Rewritten:
    """Replace the bodies of all but the `keep_recent` newest ephemeral Bash results by `policy.note`.

    A site is a text tool_result of a Bash call whose command `policy.is_ephemeral`, in a user entry
    that is neither protected nor a denial or interruption (`toolDenialKind`): those hold no output.
    With `batch > 1` the number expired is rounded down to a multiple of `batch`.
    """
    policy = policy if policy is not None else EphemeralPolicy()
    entries = check_entries(entries)
    commands = _commands(entries)
    verdicts: dict[str, bool] = {}
    sites: list[tuple[int, int, str, str]] = []  # entry index, block index, tool_use id, command
    for position, entry in enumerate(entries):
        if entry.get("type") != "user" or is_protected(entry) or "toolDenialKind" in entry:
            continue
        for index, block in iter_blocks(entry, "tool_result"):
            tool_use_id = block.get("tool_use_id")
            command = commands.get(tool_use_id) if isinstance(tool_use_id, str) else None
            if command is None or result_text(block) is None:
                continue
            if command not in verdicts:
                verdicts[command] = policy.is_ephemeral(command)
            if verdicts[command]:
                sites.append((position, index, str(tool_use_id), command))
    surplus = len(sites) - policy.keep_recent
    count = (surplus // policy.batch) * policy.batch if surplus > 0 else 0
    if count == 0:
        return Rewritten(entries)
    out = list(entries)
    changes: list[Change] = []
    for rank, (position, index, tool_use_id, command) in enumerate(sites[:count]):
        entry = out[position]
        blocks = list(content_blocks(entry) or ())
        old = blocks[index]
        note = policy.note.format(
            command=short_command(command), keep=policy.keep_recent, newer=len(sites) - 1 - rank
        )
        blocks[index] = with_result_text(old, note)
        out[position] = with_blocks(entry, blocks)
        saved = block_size(old) - block_size(blocks[index])
        changes.append(
            Change(
                kind="expired",
                uuid=entry.get("uuid"),
                tool_use_id=tool_use_id,
                chars_saved=saved,
                detail=command,
            )
        )
    return Rewritten(out, tuple(changes))
