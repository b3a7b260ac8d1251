"""Running a fleet: one runner at a time per session, and files that follow the session.

`lease_session(options)` is what an app on `instrument()` wraps its run in; `Runtime` does the same for
every session it runs. For the session the options resume (or the one they start with `session_id`):

1. the session's lease is taken in the store (`Lease`): a second runner waits up to
   `timeout` seconds, then gets a `LeaseError` naming the session and the holder;
2. when the store carries files (`PostgresSessionStore`), the session's workbench files are written
   into the local workbench where they are missing, and its history is served as if it had always run
   here (the project key it is stored under, the paths of the places it ran in moved to this one);
3. at the end, the workbench's new files are sent to the store and the lease is released.

A fork reads its source without leasing it (the source is not written) but still restores its files.
Stores without leases (the SDK's memory store, your own adapter) are used as they are.

Example::

    options = instrument(ClaudeAgentOptions(resume=session_id), workspace="repo",
                         store="postgresql://flower@db.internal/runs")
    async with lease_session(options, timeout=60):
        async for message in query(prompt="Go on.", options=options):
            ...
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions

from ._errors import SpecError
from ._run.session_holds import Holds
from .stores import Lease
from .stores._lease import check_timeout

__all__ = ["lease_session"]


def lease_session(
    target: ClaudeAgentOptions | Any,
    session_id: str | None = None,
    *,
    timeout: float = 0.0,
    cwd: str | os.PathLike[str] | None = None,
) -> AbstractAsyncContextManager[Lease | None]:
    """Hold a session for the `async with` block: its lease, and its files when the store carries them.

    `target` is the `ClaudeAgentOptions` the run uses (their `session_store`, `resume`, `session_id`,
    `fork_session` and `cwd` say what to hold), or a store with `session_id` and `cwd`. The lease of a
    resumed session is waited for up to `timeout` seconds (default: not at all), then `LeaseError`.
    Yields the `Lease` (None when the store has no leases, or the options start a new session without
    `session_id`: give one, e.g. `str(uuid.uuid4())`, to lease a new session too).
    """
    # checked here, not by @checked: a timeout may be math.inf (wait as long as it takes)
    wait = check_timeout(timeout, "lease_session")
    if cwd is not None and not (isinstance(cwd, str | os.PathLike) and os.fspath(cwd)):
        raise SpecError(f"lease_session: cwd must be a directory path or None, got {cwd!r:.80}")
    if isinstance(target, ClaudeAgentOptions):
        if session_id is not None:
            raise SpecError(
                "lease_session: with options, the session is options.resume or options.session_id"
            )
        store, where = target.session_store, cwd if cwd is not None else target.cwd
        source, new = target.resume, target.session_id
        fork = target.fork_session
    else:
        if not (callable(getattr(target, "append", None)) and callable(getattr(target, "load", None))):
            raise SpecError(
                f"lease_session: target must be ClaudeAgentOptions or a session store, got {target!r:.80}"
            )
        store, where, source, new, fork = target, cwd, session_id, None, False
        if not isinstance(session_id, str) or not session_id:
            raise SpecError(f"lease_session: session_id must be the session id to hold, got {session_id!r}")
    if store is None or not callable(getattr(store, "append", None)):
        raise SpecError("lease_session: target (the options) has no session_store (instrument() adds one)")
    return _held(store, where or os.getcwd(), wait, source=source, new=new, fork=bool(fork))


@asynccontextmanager
async def _held(
    store: Any,
    cwd: str | os.PathLike[str],
    timeout: float,
    *,
    source: str | None,
    new: str | None,
    fork: bool,
) -> AsyncIterator[Lease | None]:
    holds = Holds(store, cwd=cwd, timeout=timeout)
    try:
        source_lease = await holds.hold(source, lease=not fork) if source else None
        new_lease = await holds.hold(new, timeout=0.0) if new and new != source else None
        if (
            new_lease is not None and source_lease is not None
        ):  # a fork: the new session, the files of its source
            new_lease = dataclasses.replace(new_lease, restored=source_lease.restored, kept=source_lease.kept)
        yield new_lease if new_lease is not None else source_lease
    finally:
        await holds.aclose()
