"""How large the main thread has grown, for a coordinator that starts inline (`inline_until`).

A coordinator built with `coordinator(..., inline_until=T)` does its hands-on work itself while its
context is small, and delegates once it has grown: the wall lets its hands-on calls through while the
context is under `T` tokens, and is strict for that session for good once it reached `T`. Under a
`Runtime` a new run starts in an inline session without the Agent tool, which the runtime hands off to
the coordinator at `T` (`flower._run.step`); there the wall's latch backs the switch up.

The context is read where the CLI keeps it: the usage of the reply that made the call, in the session's
transcript (input + cache read + cache creation tokens, the same sum the runtime's handoff watches). The
CLI writes that reply's entry while the PreToolUse hook runs (within milliseconds, measured with CLI
2.1.337), so the wall waits for the entry that holds the call's `tool_use_id`, at most `ENTRY_WAIT`
seconds (a hang bound, as for the user turns of own steps). A transcript that cannot be read, or whose
entry never comes, makes the wall strict (unsure, it refuses).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._errors import SpecError
from .._usage import TokenUsage
from ._turns import ENTRY_WAIT, wait_for_entry

__all__ = ["Growth", "check_inline_until", "reply_context"]

logger = logging.getLogger("flower.delegate")

_CHUNK = 64 * 1024


def check_inline_until(inline_until: int | None, own_steps: int, owner: str) -> None:
    """`SpecError`, named for `owner`, unless `inline_until` is None or a positive number of tokens given
    without `own_steps` (both loosen the wall)."""
    if inline_until is None:
        return
    if inline_until < 1:
        raise SpecError(f"{owner}: inline_until must be a positive number of tokens, got {inline_until}")
    if own_steps:
        raise SpecError(f"{owner}: give inline_until or own_steps, not both (both loosen the wall)")


def reply_context(path: str, tool_use_id: str) -> int | None:
    """The context tokens of the main-thread reply that holds call `tool_use_id`, read from the end of the
    transcript at `path`; None while the CLI has not written it. Raises `OSError` when the file cannot be
    read."""
    needle = json.dumps(tool_use_id).encode()
    with open(path, "rb") as handle:
        end = handle.seek(0, os.SEEK_END)
        size = min(end, _CHUNK)
        while True:
            handle.seek(end - size)
            lines = handle.read(size).split(b"\n")
            if size < end:
                lines = lines[1:]  # the first line may be cut
            for line in reversed(lines):
                if needle in line and (tokens := _reply_tokens(line)) is not None:
                    return tokens
            if size == end:
                return None
            size = min(end, size * 4)


def _reply_tokens(line: bytes) -> int | None:
    """A main-thread reply's context tokens, or None for any other line (a synthetic error reply, whose
    usage is all zeros, says nothing of the context)."""
    if b'"assistant"' not in line:
        return None
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    if not isinstance(entry, dict) or entry.get("type") != "assistant" or entry.get("isSidechain"):
        return None
    message = entry.get("message")
    usage = message.get("usage") if isinstance(message, dict) else None
    if not isinstance(usage, dict):
        return None
    return TokenUsage.from_api(usage).context or None


@dataclass
class Growth:
    """Whether each session's main thread is still under `until` tokens; once a session reached it, it
    stays past it (a handoff starts a new session, judged afresh)."""

    until: int
    _past: dict[str, int] = field(default_factory=dict)

    async def past(self, data: Mapping[str, Any]) -> str:
        """'' while the session is under the limit; else why its hands-on calls go to workers."""
        session = str(data.get("session_id") or "")
        if session in self._past:
            return self._said(self._past[session])
        path, call = data.get("transcript_path"), data.get("tool_use_id")
        try:
            if not isinstance(path, str) or not path or not isinstance(call, str) or not call:
                raise OSError("the hook input names no transcript or no call")
            tokens = await wait_for_entry(lambda: reply_context(path, call))
            if tokens is None:
                raise OSError(f"the reply holding call {call} was not written within {ENTRY_WAIT:g} s")
        except OSError as exc:
            logger.warning("the wall could not read the session's size (%s); it is strict", exc)
            return "its size could not be read from the session's transcript, so the wall is strict"
        if tokens < self.until:
            return ""
        self._past[session] = tokens
        logger.info(
            "session %s holds %d context tokens (inline_until=%d): its hands-on calls go to workers now",
            session, tokens, self.until,
        )  # fmt: skip
        return self._said(tokens)

    def _said(self, tokens: int) -> str:
        return f"its context reached {tokens:,} tokens, past inline_until={self.until:,}"
