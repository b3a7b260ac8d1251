"""Expiry: the bodies of old ephemeral command results become a one-line note.

`git status`, `ls` or `cat` answer "what is the state now"; after a few more steps the answer may be
wrong, and re-running the command costs less than carrying a stale copy. The `keep_recent` most recent
such results keep their body. The result block itself stays (only its content changes), so the call and
its result still go together.

After a pause of `stale_after` seconds or more (read from the entries' timestamps, and from the last
entry to `now` when the caller gives it), every ephemeral result before the pause expires too, the newest
included. The step stays a pure function of `(entries, policy, now)`; once the resumed session has
written past the pause, the pause is in the history and every later load expires the same results.

Example (keep_recent=1, two `git status` results)::

    before: tool_result(content=" M a.py\\n?? b.txt")   tool_result(content=" M a.py")
    after:  tool_result(content="[result of `git status -s` expired: at least 1 newer result ...]")
            tool_result(content=" M a.py")
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from .._policies import Change, EphemeralPolicy
from ._outputs import output_entries
from ._transcript import (
    Entry,
    Rewritten,
    block_size,
    check_entries,
    content_blocks,
    filled,
    iter_blocks,
    result_text,
    with_blocks,
    with_result_text,
    with_tool_use_result,
)
from .denials import tool_calls

__all__ = ["entry_time", "expire_ephemeral", "idle_cutoff", "short_command"]

_SHORT = 80


def short_command(command: str) -> str:
    """The command as a note shows it: its first non-empty line, at most 80 characters."""
    lines = [line.strip() for line in command.strip().splitlines() if line.strip()]
    first = lines[0] if lines else ""
    more = len(lines) > 1
    if len(first) > _SHORT:
        first, more = first[: _SHORT - 1].rstrip(), True
    return first + ("…" if more else "")


def _commands(calls: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """tool_use id -> command, for every Bash call."""
    commands: dict[str, str] = {}
    for ident, block in calls.items():
        tool_input = block.get("input")
        if block.get("name") == "Bash" and isinstance(tool_input, Mapping):
            command = tool_input.get("command")
            if isinstance(command, str):
                commands[ident] = command
    return commands


def entry_time(entry: Entry) -> float | None:
    """An entry's `timestamp` (ISO 8601, as the CLI writes it) in seconds since the epoch, or None."""
    stamp = entry.get("timestamp")
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return moment.timestamp() if moment.tzinfo is not None else None


def idle_cutoff(entries: Sequence[Entry], stale_after: float | None, now: float | None = None) -> int:
    """The index of the first entry after the last pause of `stale_after` seconds or more (0: none).

    A pause is a gap between two consecutive timestamped entries, or between the last one and `now`
    (that one gives `len(entries)`). Entries without a usable timestamp are passed over.
    """
    if stale_after is None:
        return 0
    cutoff = 0
    last: float | None = None
    for position, entry in enumerate(entries):
        moment = entry_time(entry)
        if moment is None:
            continue
        if last is not None and moment - last >= stale_after:
            cutoff = position
        last = moment
    if now is not None and last is not None and now - last >= stale_after:
        cutoff = len(entries)
    return cutoff


def expire_ephemeral(
    entries: Sequence[Any],
    policy: EphemeralPolicy | None = None,
    *,
    now: float | None = None,
    branch: Collection[str] | None = None,
) -> Rewritten:
    """Replace the bodies of all but the `keep_recent` newest ephemeral Bash results by `policy.note`,
    and of every one before a pause of `policy.stale_after` seconds by `policy.idle_note`.

    A site is a text tool_result of a Bash call whose command `policy.is_ephemeral`, in a user entry on
    the replayed branch (`replayed`) that is neither protected nor a denial or interruption
    (`denial_kind`): those hold no output. With `batch > 1` the number expired by count is rounded down
    to a multiple of `batch`. `now` (seconds since the epoch) is the time of the load: the pause before
    it counts too. A body is replaced only when the note is strictly shorter, in text and in JSON: a
    one-line `date` keeps its body (and still counts as one of the `keep_recent`). `branch`: the uuids
    a resume replays, when the caller has them (`branch_uuids`).
    """
    policy = policy if policy is not None else EphemeralPolicy()
    entries = check_entries(entries)
    commands = _commands(tool_calls(entries))
    verdicts: dict[str, bool] = {}
    sites: list[tuple[int, int, str, str]] = []  # entry index, block index, tool_use id, command
    for position, entry in output_entries(entries, branch):
        for index, block in iter_blocks(entry, "tool_result"):
            tool_use_id = block.get("tool_use_id")
            command = commands.get(tool_use_id) if isinstance(tool_use_id, str) else None
            body = result_text(block)
            if command is None or body is None:
                continue
            if command not in verdicts:
                verdicts[command] = policy.is_ephemeral(command)
            if verdicts[command]:
                sites.append((position, index, str(tool_use_id), command))
    surplus = len(sites) - policy.keep_recent
    count = (surplus // policy.batch) * policy.batch if surplus > 0 else 0
    cutoff = idle_cutoff(entries, policy.stale_after, now)
    idle = sum(1 for site in sites if site[0] < cutoff)
    if max(count, idle) == 0:
        return Rewritten(entries)
    out = list(entries)
    changes: list[Change] = []
    for rank, (position, index, tool_use_id, command) in enumerate(sites[: max(count, idle)]):
        entry = out[position]
        blocks = list(content_blocks(entry) or ())
        old = blocks[index]
        if position < cutoff:  # the idle note wins: it only appears after a pause, when the cache is cold
            note = policy.idle_note.format(command=short_command(command), idle=policy.idle_text)
        else:
            note = policy.note.format(
                command=short_command(command), keep=policy.keep_recent, newer=len(sites) - 1 - rank
            )
        body = result_text(old) or ""
        if filled(policy.note, body) or filled(policy.idle_note, body):
            continue  # expired by an earlier rewrite (a copied history): counted then, not now
        new = with_result_text(old, note)
        saved = block_size(old) - block_size(new)
        if saved <= 0 or len(note) >= len(body):
            continue  # never longer: the body is as short as the note
        blocks[index] = new
        out[position] = with_tool_use_result(with_blocks(entry, blocks), body, note)
        changes.append(
            Change(
                kind="expired",
                uuid=entry.get("uuid"),
                tool_use_id=tool_use_id,
                chars_saved=saved,
                detail=command,
            )
        )
    return Rewritten(out, tuple(changes)) if changes else Rewritten(entries)
