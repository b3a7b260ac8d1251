"""Pruning: denied calls, synthetic API errors and interruption residue.

Denied calls (`drop_denials`). A call a hook or a rule refused leaves a `tool_use` and an error
`tool_result` whose entry carries `toolDenialKind: "permission-rule"` (or, written by CLI 2.1.42 or
earlier, the CLI's fixed "Permission to use ... has been denied." sentence: `denial_kind`). All but
the newest `keep_denials` are removed, call and result together; the other blocks of the same message
(text, other calls, their results) stay as they are, and an entry left with no block is dropped and the
chain relinked::

    before: assistant[tool_use A "git status", tool_use B "rm -rf x"]  user[result A]  user[result B, denied]
    after:  assistant[tool_use A "git status"]                         user[result A]

The newest kept denial's result then names the dropped calls (`denial_note`: "[also refused earlier
(not shown): `rm -rf x`]"), so the agent still knows what was refused without a row of refusals.

API errors (`drop_api_errors`). When retries run out, the CLI writes a synthetic assistant entry
(`isApiErrorMessage: true`, model `<synthetic>`, "API Error: 500 ..."). It is dropped and the chain
relinked. (Measured with CLI 2.1.327 and 2.1.332: the CLI already leaves these out of the request it
builds on resume, so the change saves no character of the request; dropping the last one makes it
answer the open turn with its own "No response requested.")

Interruptions (`neutralise_interrupts`). An interrupted call's result tells the model "the user doesn't
want to proceed ... wait for the user", which is stale once the user resumes. Its structural marks: the
entry has `toolDenialKind: "user-rejected"` and no `permissionDecision` (a refused permission prompt has
one); an entry of CLI 2.1.42 or earlier, which has neither field, when its error result is exactly the
CLI's fixed "... STOP what you are doing and wait for the user to tell you how to proceed." sentence.
The result keeps its place and its `is_error`; only its text becomes `interrupt_note`.

Every step acts only on the branch a resume replays (`replayed`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from .._policies import Change, PrunePolicy
from ._transcript import (
    Entry,
    Rewritten,
    block_change,
    block_size,
    check_entries,
    content_blocks,
    is_protected,
    iter_blocks,
    result_text,
    with_blocks,
    with_result_text,
    with_tool_use_result,
)
from .branch import on_branch
from .denials import denial_kind, tool_calls
from .expire import short_command
from .relink import drop_entries

__all__ = ["drop_api_errors", "drop_denials", "neutralise_interrupts"]

_DENIAL_FIELDS = ("toolUseResult", "toolDenialKind", "permissionDecision", "sourceToolAssistantUUID")
_NOTE_CALLS = 8
_ARGUMENT_KEYS = ("file_path", "notebook_path", "path", "pattern", "url", "query", "description")


def drop_denials(
    entries: Sequence[Any], policy: PrunePolicy | None = None, *, branch: Collection[str] | None = None
) -> Rewritten:
    """Remove every denied call except the `keep_denials` newest: its `tool_use` and its `tool_result`.

    `branch`: the uuids a resume replays, when the caller has them (`branch_uuids`); else computed.
    """
    policy = policy if policy is not None else PrunePolicy()
    entries = check_entries(entries)
    kinds = set(policy.denial_kinds)
    calls = tool_calls(entries)
    refused = [i for i, e in enumerate(entries) if not is_protected(e) and denial_kind(e, calls) in kinds]
    # an entry holds one refusal, or several where an older CLI merged parallel results: count the results
    if sum(1 for i in refused for _ in iter_blocks(entries[i], "tool_result")) <= policy.keep_denials:
        return Rewritten(entries)  # most histories: nothing to drop, and no branch to compute
    scope = on_branch(entries, branch)
    denied: dict[str, None] = {}  # ordered set, oldest first
    pinned: set[str] = set()  # ids with a block in a protected entry: never split a pair
    wanted = set(refused) & scope
    for position, entry in enumerate(entries):
        protected = is_protected(entry)
        if not protected and position not in wanted:
            continue  # most entries: nothing to learn here
        for block in content_blocks(entry) or ():
            ident = _ident(block)
            if ident is None:
                continue
            if protected:
                pinned.add(ident)
            elif block.get("type") == "tool_result":
                denied.setdefault(ident, None)
    candidates = [ident for ident in denied if ident not in pinned]
    surplus = len(candidates) - policy.keep_denials
    doomed = set(candidates[:surplus]) if surplus > 0 else set()
    if not doomed:
        return Rewritten(entries)
    out: list[Entry] = []
    emptied: list[str] = []
    saved: dict[str, int] = {}
    names: dict[str, str] = {}
    described: dict[str, str] = {}
    for entry in entries:
        blocks = content_blocks(entry)
        if blocks is None or is_protected(entry):
            out.append(entry)
            continue
        kept: list[Any] = []
        removed: list[str] = []
        for block in blocks:
            ident = _ident(block)
            if ident is not None and ident in doomed:
                saved[ident] = saved.get(ident, 0) + block_size(block)
                removed.append(ident)
                if block.get("type") == "tool_use":
                    names[ident] = str(block.get("name", ""))
                    described[ident] = _describe(block)
            else:
                kept.append(block)
        if not removed:
            out.append(entry)
            continue
        # the commas (and the brackets of an emptied list) go too: count what the content loses
        lost = block_size(blocks) - (block_size(kept) if kept else 0)
        saved[removed[0]] += lost - sum(block_size(b) for b in blocks if _ident(b) in removed)
        if not kept:
            if isinstance(entry.get("uuid"), str):
                emptied.append(entry["uuid"])  # dropped by drop_entries, which relinks its children
                out.append(entry)
            continue
        new = with_blocks(entry, kept)
        if not any(True for _ in iter_blocks(new, "tool_result")):
            for name in _DENIAL_FIELDS:
                new.pop(name, None)
        out.append(new)
    changes = tuple(
        Change(
            kind="denial",
            uuid=None,
            tool_use_id=ident,
            chars_saved=saved.get(ident, 0),
            detail=names.get(ident, ""),
        )
        for ident in candidates
        if ident in doomed
    )
    kept_ids = [ident for ident in candidates if ident not in doomed]
    if policy.denial_note is not None and kept_ids:
        dropped = [described[ident] for ident in candidates if ident in doomed and ident in described]
        out, noted = _note_dropped(out, kept_ids[-1], dropped, policy.denial_note)
        changes += noted
    return Rewritten(drop_entries(out, emptied), changes)


def _describe(call: dict[str, Any]) -> str:
    """A denied call as the note names it: a Bash command, else `Tool(main argument)`."""
    name = str(call.get("name", "") or "?")
    raw = call.get("input")
    tool_input: dict[str, Any] = raw if isinstance(raw, dict) else {}
    command = tool_input.get("command")
    if name == "Bash" and isinstance(command, str) and command.strip():
        shown = short_command(command).replace("`", "'")
        return f"`{shown}`"
    for key in _ARGUMENT_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return f"{name}({short_command(value)})"
    return name


def _note_dropped(
    entries: list[Entry], kept: str, dropped: list[str], template: str
) -> tuple[list[Entry], tuple[Change, ...]]:
    """Append the note naming `dropped` to the text of `kept`'s result (a text result only)."""
    unique = list(dict.fromkeys(dropped))
    if not unique:
        return entries, ()
    shown = ", ".join(unique[:_NOTE_CALLS])
    if len(unique) > _NOTE_CALLS:
        shown += f" and {len(unique) - _NOTE_CALLS} more"
    note = template.format(calls=shown, count=len(dropped))
    out = list(entries)
    for position, entry in enumerate(out):
        if is_protected(entry):
            continue
        for index, block in iter_blocks(entry, "tool_result"):
            if block.get("tool_use_id") != kept:
                continue
            text = result_text(block)
            if text is None:
                return entries, ()
            blocks = list(content_blocks(entry) or ())
            blocks[index] = with_result_text(block, f"{text}\n{note}")
            out[position] = with_blocks(entry, blocks)
            change = Change(
                kind="denial_note",
                uuid=entry.get("uuid"),
                tool_use_id=kept,
                chars_saved=block_size(block) - block_size(blocks[index]),
                detail=note,
            )
            return out, (change,)
    return entries, ()


def _ident(block: Any) -> str | None:
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    ident = (
        block.get("id") if kind == "tool_use" else block.get("tool_use_id") if kind == "tool_result" else None
    )
    return ident if isinstance(ident, str) else None


def drop_api_errors(entries: Sequence[Any], *, branch: Collection[str] | None = None) -> Rewritten:
    """Drop the CLI's synthetic API-error assistant entries (`isApiErrorMessage: true`) and relink."""
    entries = check_entries(entries)
    if not any(e.get("isApiErrorMessage") is True for e in entries):
        return Rewritten(entries)
    scope = on_branch(entries, branch)
    doomed: list[tuple[str, int]] = []
    for position, entry in enumerate(entries):
        uuid = entry.get("uuid")
        if (
            position in scope
            and entry.get("type") == "assistant"
            and entry.get("isApiErrorMessage") is True
            and not is_protected(entry)
            and isinstance(uuid, str)
            and not any(True for _ in iter_blocks(entry, "tool_use"))  # never orphan a result
        ):
            content = (
                entry.get("message", {}).get("content") if isinstance(entry.get("message"), dict) else None
            )
            doomed.append((uuid, block_size(content) if content is not None else 0))
    if not doomed:
        return Rewritten(entries)
    # chars_saved 0: the CLI already leaves these entries out of the request it builds on resume, so
    # dropping one saves nothing the model would have read (the size is in `detail`)
    changes = tuple(
        Change(kind="api_error", uuid=uuid, chars_saved=0, detail=f"{size} chars the CLI does not replay")
        for uuid, size in doomed
    )
    return Rewritten(drop_entries(entries, [uuid for uuid, _ in doomed]), changes)


def neutralise_interrupts(
    entries: Sequence[Any], policy: PrunePolicy | None = None, *, branch: Collection[str] | None = None
) -> Rewritten:
    """Replace the text of results left by an interrupted call by `policy.interrupt_note`."""
    policy = policy if policy is not None else PrunePolicy()
    entries = check_entries(entries)
    calls = tool_calls(entries)
    interrupted = [
        i
        for i, e in enumerate(entries)
        if "permissionDecision" not in e and not is_protected(e) and denial_kind(e, calls) == "user-rejected"
    ]
    if not interrupted:
        return Rewritten(entries)
    scope = on_branch(entries, branch)
    out = list(entries)
    changes: list[Change] = []
    for position in interrupted:
        entry = entries[position]
        if position not in scope:
            continue
        blocks = list(content_blocks(entry) or ())
        bodies: list[str] = []
        for index, block in iter_blocks(entry, "tool_result"):
            body = result_text(block)
            if body is None or body == policy.interrupt_note:
                continue
            blocks[index] = with_result_text(block, policy.interrupt_note)
            bodies.append(body)
            changes.append(
                block_change("interrupt", entry, block, block_size(block) - block_size(blocks[index]))
            )
        if bodies:
            new = with_blocks(entry, blocks)
            for body in bodies:  # CLI 2.1.42 and earlier: "Error: " + the "STOP what you are doing…" text
                new = with_tool_use_result(new, body, policy.interrupt_note)
            out[position] = new
    return Rewritten(out, tuple(changes)) if changes else Rewritten(entries)
