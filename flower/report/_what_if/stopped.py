"""Did a session finish? A replay of one that stopped half-way predicts only what it ran, not the rest.

Read from the main transcript's last assistant entry (the model's reply or the CLI's synthetic one):

- `window`: the CLI's synthetic "Prompt is too long" (the context was full and nothing compacted it: the
  API's 400, or the CLI's own check; `error: "invalid_request"`);
- `api error`: another synthetic API-error reply (retries ran out);
- `cut`: the model's last reply asked for tools whose results never came (the process ended under them);
- "" otherwise: the session finished, or the user interrupted it (a turn the user ended is theirs).

A session that later went on (a prompt, a resume, a compaction) is judged by its last reply only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..._util.content import text_of, tool_results

__all__ = ["how_it_stopped"]

_WINDOW = "prompt is too long"


def _message(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    message = entry.get("message")
    return message if isinstance(message, Mapping) else {}


def _answered(entries: Sequence[Mapping[str, Any]]) -> set[str]:
    return {str(block.get("tool_use_id")) for entry in entries for block in tool_results(entry)}


def how_it_stopped(entries: Sequence[Mapping[str, Any]]) -> str:
    """Why the main transcript `entries` stopped before finishing ("" when it finished; see above)."""
    last = next(
        (
            i
            for i in range(len(entries) - 1, -1, -1)
            if entries[i].get("type") == "assistant" and not entries[i].get("isSidechain")
        ),
        None,
    )
    if last is None:
        return ""
    entry = entries[last]
    message = _message(entry)
    if entry.get("isApiErrorMessage") is True or message.get("model") == "<synthetic>":
        return "window" if _WINDOW in text_of(message.get("content")).lower() else "api error"
    first = last
    while first > 0 and _message(entries[first - 1]).get("id") == message.get("id") and message.get("id"):
        first -= 1
    calls = {
        str(block.get("id"))
        for e in entries[first : last + 1]
        for block in _message(e).get("content") or ()
        if isinstance(block, Mapping) and block.get("type") == "tool_use"
    }
    return "cut" if calls and not calls <= _answered(entries[last + 1 :]) else ""
