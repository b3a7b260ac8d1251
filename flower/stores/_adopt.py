"""A session the CLI resumed from its own files, adopted into the store when the CLI names its transcript.

The layers import a session that predates the store at its first resume, from the CLI's config directory
(`flower.stores._local`). An app that sets `CLAUDE_CONFIG_DIR` in `options.env` after `instrument()` leaves
the layer looking in the wrong place: the load finds nothing, the CLI resumes from its own file, and the
store mirrors only the new turns, so the next resume would replay those alone (measured, CLI 2.1.332).
The CLI itself names the file: every hook input carries `transcript_path`. So at the first prompt of such
a resume, a `UserPromptSubmit` hook has the layer import the file's earlier turns, before the turn's
entries are mirrored (the CLI waits for the hook; what the eager mirror stored of the new prompt before
it ran is left where it is).

The file may already hold the prompt being submitted (and the queue operations written with it), which
the mirror sends too: those are left to the mirror, so a store without uuid idempotency holds each entry
once.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import anyio
from claude_agent_sdk import (
    HookContext,
    HookInput,
    HookJSONOutput,
    HookMatcher,
    SessionKey,
    SessionStore,
    SessionStoreEntry,
)
from claude_agent_sdk.types import HookEvent

from ._local import find_transcript, import_whole, read_transcripts

__all__ = ["adopt_hooks", "adopt_transcript", "config_of", "earlier_turns", "import_local"]

logger = logging.getLogger("flower.stores")


def config_of(transcript_path: str) -> Path | None:
    """The CLI's config directory of a main transcript `<config>/projects/<project>/<session>.jsonl`."""
    path = Path(transcript_path)
    if path.suffix != ".jsonl" or len(path.parents) < 4 or path.parents[1].name != "projects":
        return None
    return path.parents[2]


def _text(entry: Any) -> str | None:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(t for t in texts if isinstance(t, str))
    return None


def earlier_turns(entries: list[SessionStoreEntry], prompt: str | None) -> list[SessionStoreEntry]:
    """The entries before the prompt being submitted now: a user entry with its text after the last
    assistant entry, and the queue operations just before it, are the new turn's (the mirror sends them)."""
    answered = max((i for i, e in enumerate(entries) if e.get("type") == "assistant"), default=-1)
    for index in range(len(entries) - 1, answered, -1):
        entry = entries[index]
        if entry.get("type") == "user" and prompt is not None and _text(entry) == prompt:
            while index > answered + 1 and entries[index - 1].get("type") == "queue-operation":
                index -= 1
            return entries[:index]
    return entries


async def adopt_transcript(
    inner: SessionStore, key: SessionKey, transcript_path: str, prompt: str | None
) -> int:
    """Import the earlier turns of the session at `transcript_path` (and its subagents) into `inner`,
    unless it already holds the session (more than the new prompt's own entries); the number of entries
    imported."""
    path = Path(transcript_path)
    stored = await inner.load(key) or []
    transcripts = await anyio.to_thread.run_sync(read_transcripts, path, key)
    main_key, main = transcripts[0]
    earlier = earlier_turns(main, prompt)
    # the mirror is eager: the new prompt's entries (its queue operations, the prompt itself when the file
    # already holds it) may be stored before this hook runs (seen on a busy machine). Those are no turn of
    # the session's past; anything else stored means the store holds the session.
    if any(entry not in main[len(earlier) :] for entry in stored):
        return 0
    transcripts[0] = (main_key, earlier)
    count = await import_whole(inner, transcripts, path, "the store does not hold it")
    logger.info(
        "flower.stores: imported session %s (%d entries) from %s, the transcript the CLI resumed it from",
        key.get("session_id"),
        count,
        path,
    )
    return count


def adopt_hooks(layer: Any) -> dict[HookEvent, list[HookMatcher]]:
    """The `UserPromptSubmit` hook that tells `layer` (a rewriting store) which transcript the CLI resumed
    each session from; the layer imports a session a load found nowhere (its `_adopt`)."""

    async def adopt(data: HookInput, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
        raw: dict[str, Any] = dict(data)
        session = str(raw.get("session_id") or "")
        try:
            await layer._adopt(session, str(raw.get("transcript_path") or ""), raw.get("prompt"))
        except Exception as exc:  # the session goes on; the store lacks its earlier turns, and says so
            logger.warning("flower.stores: session %s was resumed from the CLI's own files: %s", session, exc)
        return {}

    return {"UserPromptSubmit": [HookMatcher(matcher=None, hooks=[adopt])]}


async def import_local(inner: SessionStore, key: SessionKey, where: Path) -> int | None:
    """Import session `key` from the CLI's transcript under config directory `where` into `inner`, which
    has none of it: the entries imported, 0 when `inner` has it after all, None when there is no file.

    A failed import is undone (when `inner` can `delete`) and raises `StoreError`: a resume of half a
    session would lose the rest for good.
    """
    path = await anyio.to_thread.run_sync(
        find_transcript, where, str(key["project_key"]), str(key["session_id"])
    )
    if path is None:
        return None
    if await inner.load(key):
        return 0
    transcripts = await anyio.to_thread.run_sync(read_transcripts, path, key)
    count = await import_whole(inner, transcripts, path, "it was not resumed from a partial copy")
    logger.info("flower.stores: imported session %s (%d entries) from %s", key["session_id"], count, path)
    return count
