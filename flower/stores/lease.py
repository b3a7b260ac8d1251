"""Session leases: one runner at a time writes a session, whatever machine it runs on.

Two runners resuming one session at once would both append to it, and the next resume would see only
one of the two branches. A lease prevents that: the run that resumes a session holds the session's
lease until it ends; a second runner waits up to its timeout (by default it does not wait) and then gets
a `LeaseError` naming the session and the holder. A runner that dies releases its lease with it:

- `SqliteSessionStore`: an exclusive `flock` on a file beside the database (`<db>-leases/`), which the
  operating system drops when the process ends, however it ends;
- `PostgresSessionStore`: a session-level advisory lock on a connection of its own, which the server
  drops when that connection closes (a killed process closes it at once; a machine that vanishes is
  noticed by TCP keepalives within about a minute).

`Runtime` leases every session it resumes; an app on `instrument()` uses `flower.lease_session`.
"""

from __future__ import annotations

import math
import os
import socket
import time
from dataclasses import dataclass, field
from typing import Final

from .._errors import LeaseError, SpecError

__all__ = ["RUNNER_ENV", "Lease", "busy", "check_timeout", "holder_name", "runner_name"]

RUNNER_ENV: Final = "FLOWER_RUNNER"
"""Environment variable naming this runner in leases and in the fleet report (default: the host name)."""


def runner_name(runner: str | None = None) -> str:
    """This runner's name: `runner` when given, else `$FLOWER_RUNNER`, else the host name."""
    return runner or os.environ.get(RUNNER_ENV, "").strip() or socket.gethostname()


def holder_name(runner: str | None = None) -> str:
    """Who holds a lease taken by this process: runner name, host (when it differs) and pid."""
    runner, host = runner_name(runner), socket.gethostname()
    where = runner if runner == host else f"{runner} on {host}"
    return f"{where} pid {os.getpid()}"


def check_timeout(timeout: object, owner: str, argument: str = "timeout") -> float:
    """A lease timeout: seconds >= 0 (`math.inf` waits as long as it takes); `argument` names it."""
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or math.isnan(timeout)
        or timeout < 0
    ):
        raise SpecError(f"{owner}: {argument} must be a number of seconds >= 0, got {timeout!r}")
    return float(timeout)


def busy(
    session_id: str, timeout: float, holder: str | None, where: str, *, path: str | None = None
) -> LeaseError:
    """The `LeaseError` of a session held by `holder` (None: not named yet) in the store `where`."""
    waited = f" after waiting {timeout:g} s" if timeout else ""
    who = holder or "another runner (it has not written its name yet)"
    return LeaseError(
        f"session {session_id} is leased by {who}{waited} ({where}): another run is writing it. Wait for it "
        "to end, or raise lease_timeout to queue behind it",
        session_id=session_id,
        holder=holder,
        path=path,
    )


@dataclass(frozen=True)
class Lease:
    """A held session lease: released when its `async with` block ends."""

    session_id: str
    """The session this runner now writes alone."""
    holder: str
    """This runner, as others see it in a `LeaseError`."""
    store: str
    """The store the lease is held in (its path or its DSN without password)."""
    waited: float = 0.0
    """Seconds spent waiting for another runner to release it."""
    restored: tuple[str, ...] = field(default=())
    """Workbench files (relative paths) written from the store before the run, when they were missing."""
    kept: tuple[str, ...] = field(default=())
    """Workbench files the store holds with other content than the local copy: the local one was kept."""
    acquired_at: float = field(default_factory=time.time)
    """When the lease was acquired (epoch seconds)."""
