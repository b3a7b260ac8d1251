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

Each acquisition draws a new **epoch** for the session from the store (a number that only grows, kept
after the lease ends). A store checks the epoch of the lease its runner holds inside every append of that
session: once another runner has taken the session over, the old holder's writes are refused with a
`LeaseError` (fencing), even if it has not noticed its loss yet. A holder that lost its lease (its
PostgreSQL connection ended) takes it back with `Holding.reacquire()`, which succeeds only while the
epoch is still its own.

`Runtime` leases every session it resumes; an app on `instrument()` uses `flower.lease_session`.
"""

from __future__ import annotations

import math
import os
import socket
import time
from dataclasses import dataclass, field
from typing import Final

import anyio

from .._errors import LeaseError, SpecError

__all__ = [
    "NEVER_LEASED",
    "RUNNER_ENV",
    "Holding",
    "Lease",
    "busy",
    "check_epoch",
    "check_timeout",
    "fenced",
    "holder_name",
    "runner_name",
]

NEVER_LEASED: Final = 0
"""The epoch of a session no runner ever leased (epochs drawn by leases start at 1)."""

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


def check_epoch(epoch: object, owner: str) -> int | None:
    """An expected epoch for a conditional lease: None (any) or an int >= 0."""
    if epoch is None:
        return None
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 0:
        raise SpecError(f"{owner}: if_epoch must be an int >= 0 or None, got {epoch!r}")
    return epoch


def fenced(session_id: str, mine: int, current: int | None, holder: str | None, where: str) -> LeaseError:
    """The `LeaseError` of a write or re-acquisition refused because the session's epoch moved on."""
    who = holder or "another runner"
    now = f" (epoch {current})" if current is not None else ""
    return LeaseError(
        f"session {session_id}: this runner's lease (epoch {mine}) was taken over by {who}{now} in "
        f"{where}; its writes are refused so that the session does not fork. Resume the session again "
        "once the other run has ended",
        session_id=session_id,
        holder=holder,
        taken_over=True,
    )


class Holding:
    """A lease this process holds, as the store and the run machinery see it while it lasts.

    `epoch` is checked by every append of the session through this store; `lost` is set when the store
    noticed the lease gone (a PostgreSQL lease connection that ended), and `reacquire()` takes it back
    on the same epoch or raises: `LeaseError` when another runner took the session since (never write
    again), `StoreError` when the store cannot be reached now (try again later).
    """

    def __init__(self, session_id: str, epoch: int) -> None:
        self.session_id = session_id
        self.epoch = epoch
        """The epoch this runner's writes carry."""
        self.lost = anyio.Event()
        """Set when the lease was lost; a new Event after each successful `reacquire()`."""

    def mark_lost(self) -> None:
        """Record that the lease is gone (the run machinery takes it back, or stops)."""
        self.lost.set()

    async def reacquire(self) -> None:
        """Take the lost lease back on the same epoch (a new epoch is drawn); see the class docstring."""
        raise NotImplementedError


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
    epoch: int = NEVER_LEASED
    """The lease's epoch in the store: a write carrying an older one is refused (0: the store has none)."""
