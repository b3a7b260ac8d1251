"""Why a resume found no conversation: the CLI's bare "No conversation found", turned into a cause.

The SDK loads a resumed session from the store under the project key of the CLI's working directory,
and the CLI, finding nothing, ends with "No conversation found with session ID: …" and nothing else.
flower's stores look for the session under every project key (a session resumed from another
directory, `follow()`), so when it is still not found the store does not hold it at all; a store that
cannot look elsewhere is named as the reason. Either way the run's `StepResult` gets a `StoreError`
that says which session, which store, and where it looked.
"""

from __future__ import annotations

import os
from typing import Any, Final

from claude_agent_sdk import project_key_for_directory

from .._errors import StoreError

__all__ = ["session_not_found"]

_CLI_SAYS: Final = "No conversation found with session ID"
"""The CLI's own words for a resume it found nothing to resume from (CLI 2.1.x)."""


def session_not_found(
    error: str | None, session_id: str, store: Any, label: str, cwd: str
) -> StoreError | None:
    """The cause of a resume of `session_id` in `cwd` that the CLI ended with no conversation found, or
    None when `error` is something else."""
    if not error or _CLI_SAYS not in error:
        return None
    key = project_key_for_directory(os.path.realpath(cwd))
    if callable(getattr(store, "follow", None)):
        where = f"{label} holds no transcript of it, under this directory's project key ({key}) or any other"
    else:
        where = (
            f"{label} has no transcript of it under this directory's project key ({key}), and this store "
            "cannot look for it under the key of the directory it ran in: resume it from there"
        )
    return StoreError(f"cannot resume session {session_id}: {where} (the CLI: {error})")
