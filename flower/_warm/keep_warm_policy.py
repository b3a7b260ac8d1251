"""`KeepWarmPolicy`: when a coordinator's prompt cache is kept warm while it waits on its workers.

A coordinator that delegates sends nothing while a worker runs: a foreground Agent call holds its turn,
and background workers leave it idle until their reports come back. A worker that runs longer than the
cache's lifetime (5 minutes unless the marks ask for 1 hour) leaves the coordinator's whole prefix to be
written again at its next request (1.25x the input price instead of a 0.1x read). A keep-warm request
(a "ping") reads that prefix once more for one output token, which renews its lifetime.

Example::

    rt = Runtime(workspace="repo")                                     # 5-minute marks, kept warm
    rt = Runtime(workspace="repo", keep_warm=False)                    # 1-hour marks, no pings
    rt = Runtime(workspace="repo", keep_warm=KeepWarmPolicy(interval=240.0))
"""

from __future__ import annotations

from dataclasses import dataclass

from .._cost.prices import TTL_5M
from .._errors import SpecError
from .._util.check import check_fields

__all__ = ["DEFAULT_INTERVAL", "KeepWarmPolicy", "resolve_keep_warm"]

DEFAULT_INTERVAL = 270.0
"""Seconds between the coordinator's last request and a ping: 30 s inside the 5-minute lifetime, room
for the ping's CLI to start (about 1 s measured on 2 cores) and send its request."""


@dataclass(frozen=True, kw_only=True)
class KeepWarmPolicy:
    """How a `Runtime` keeps its coordinator's prompt cache warm while the coordinator waits on a worker.

    A ping is a forked resume of the coordinator's session from flower's own process (`KeepWarm`): it
    sends the coordinator's last request again as a prefix, plus one short user message, and asks for
    one output token. It leaves no entry in the session, its store or its transcript.
    """

    interval: float = DEFAULT_INTERVAL
    """Seconds after the coordinator's last request (or the last ping) before the next ping, for 5-minute
    cache marks; between 0 and 300 (a few seconds in tests). Marks that ask for 1 hour (a cache variable
    the user set) are pinged as long before their end: at 3,600 - (300 - `interval`) s."""
    max_pings: int | None = None
    """Pings in one wait at most, then the cache is let go. None: as many as cost one rewrite of the
    prefix at the coordinator's model's prices (a read is 0.05x to 0.1x the input price, a rewrite 1.25x:
    24 pings on Opus 5, 11 on Sonnet, about 50 to 110 minutes); past that a longer ping series costs more
    than the rewrite it saves, whatever the wait (the rule that is never worse than twice the best)."""
    prompt: str = "."
    """The user message a ping appends after the coordinator's prefix, followed by the ping's number in
    its wait (`. 1`, `. 2`...): a ping that repeated the last one whole would read the last ping's own
    cache entry, and leave the coordinator's to lapse. (The CLI turns an empty prompt into "(no
    content)".)"""

    def __post_init__(self) -> None:
        check_fields(self)
        if not 0 < self.interval < TTL_5M:
            raise SpecError(
                f"KeepWarmPolicy.interval must be between 0 and {TTL_5M:g} seconds (inside the 5-minute "
                f"cache lifetime), got {self.interval!r}"
            )
        if self.max_pings is not None and self.max_pings < 1:
            raise SpecError(f"KeepWarmPolicy.max_pings must be None or an int >= 1, got {self.max_pings!r}")
        if not self.prompt.strip():
            raise SpecError("KeepWarmPolicy.prompt must be a non-empty string")


def resolve_keep_warm(value: bool | KeepWarmPolicy) -> KeepWarmPolicy | None:
    """`keep_warm=` as given (and typed by `@checked`): True (the default policy), False (None), or a
    `KeepWarmPolicy`."""
    if isinstance(value, KeepWarmPolicy):
        return value
    return KeepWarmPolicy() if value else None
