"""When to ping, and from where: pure functions over times, prices and transcript entries.

- `ping_at`: the time of the next ping, `interval` after the coordinator's last request (or the last
  ping), for 5-minute marks; as long before the end of 1-hour marks.
- `ping_limit`: how many pings one wait may take before a rewrite of the prefix would have cost less.
- `ping_times`: the pings of a whole wait (what the benchmark's replay inserts on its simulated clock).
- `fork_point`: where a forked resume must stop to send the coordinator's last request again: the entry
  just before the first entry of its reply (`resume_session_at`), with the lifetime its marks asked for
  (`promptCacheRequested`) and the model that answered.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._cost.prices import TTL_1H, TTL_5M, price_for
from .keep_warm_policy import KeepWarmPolicy

__all__ = ["ForkPoint", "fork_point", "lifetime_of", "ping_at", "ping_limit", "ping_times"]

_LIFETIMES = {"5m": TTL_5M, "1h": TTL_1H}


@dataclass(frozen=True, kw_only=True)
class ForkPoint:
    """Where a ping forks the coordinator's session, and what its last request asked for."""

    resume_at: str
    """The uuid of the last entry before the reply: the fork replays the history up to it."""
    reply: str
    """The uuid of the reply's first entry (the request it answered is the one sent again)."""
    lifetime: float
    """Seconds the request's cache marks live (`promptCacheRequested`: 5 minutes unless "1h")."""
    model: str
    """The model that answered the request."""


def lifetime_of(requested: object) -> float:
    """Seconds a transcript's `promptCacheRequested` value asks for: 1 hour for "1h", else 5 minutes
    (the API's default, and what a CLI that records nothing sends)."""
    return _LIFETIMES.get(requested, TTL_5M) if isinstance(requested, str) else TTL_5M


def ping_at(policy: KeepWarmPolicy, *, since: float, lifetime: float) -> float:
    """The time of the next ping: `since` (the coordinator's last request, or the last ping) plus the
    lifetime, less the margin `policy.interval` leaves inside 5 minutes."""
    return since + lifetime - (TTL_5M - policy.interval)


def ping_times(
    policy: KeepWarmPolicy, *, since: float, until: float, lifetime: float, limit: int
) -> list[float]:
    """The pings of one wait, from the coordinator's last request at `since` to the wait's end at `until`:
    each `ping_at` the one before, at most `limit`, none at or after `until` (the coordinator's next
    request then reads the cache itself). What a `KeepWarm` sends, for a replay on a simulated clock."""
    times: list[float] = []
    at = since
    while len(times) < limit:
        at = ping_at(policy, since=at, lifetime=lifetime)
        if at >= until:
            break
        times.append(at)
    return times


def ping_limit(policy: KeepWarmPolicy, *, model: str, lifetime: float) -> int:
    """Pings one wait may take: `policy.max_pings`, else as many as one rewrite of the prefix costs.

    A ping reads the prefix (`cache_read`); once the cache lapses, the coordinator's next request
    writes it again instead of reading it (`cache_creation` or `cache_creation_1h`, less the read it
    would have paid anyway). Pinging until the pings have cost one such rewrite, then letting go, never
    costs more than twice what knowing the wait's length would have (the ski-rental rule).
    """
    if policy.max_pings is not None:
        return policy.max_pings
    price, _ = price_for(model)
    write = price.cache_creation_1h if lifetime > TTL_5M else price.cache_creation
    if price.cache_read <= 0:
        return 1
    return max(1, math.floor((write - price.cache_read) / price.cache_read + 1e-9))  # 23.999... is 24


def _main_replies(entries: Sequence[Mapping[str, Any]]) -> list[int]:
    """Indices of the main thread's assistant entries the model wrote (not the CLI's synthetic ones)."""
    return [
        i
        for i, e in enumerate(entries)
        if e.get("type") == "assistant"
        and not e.get("isSidechain")
        and not e.get("isApiErrorMessage")
        and isinstance(e.get("message"), Mapping)
        and e["message"].get("model") != "<synthetic>"
    ]


def fork_point(entries: Sequence[Mapping[str, Any]], reply: str | None = None) -> ForkPoint | None:
    """Where to fork to send again the request that `reply` (an assistant entry's uuid) answered, or by
    default the main thread's last reply. None when there is no such reply (not written yet: the CLI
    writes a reply's entry just after the SDK yields it) or it starts the history.

    The CLI writes each block of a reply as its own entry (same `message.id`), chained one after the
    other: the fork stops before the first of them, so the prefix is exactly the request's.
    """
    replies = _main_replies(entries)
    if reply is not None:
        replies = [i for i in replies if entries[i].get("uuid") == reply]
    if not replies:
        return None
    index = replies[-1]
    message_id = entries[index]["message"].get("id")
    by_uuid = {e.get("uuid"): i for i, e in enumerate(entries) if isinstance(e.get("uuid"), str)}
    while message_id is not None:  # walk the chain back to the reply's first block
        parent = by_uuid.get(entries[index].get("parentUuid"))
        if parent is None:
            break
        before = entries[parent]
        if before.get("type") != "assistant" or before.get("message", {}).get("id") != message_id:
            break
        index = parent
    first = entries[index]
    resume_at = first.get("parentUuid")
    if not isinstance(resume_at, str) or resume_at not in by_uuid:
        return None
    return ForkPoint(
        resume_at=resume_at,
        reply=str(first.get("uuid")),
        lifetime=lifetime_of(first.get("promptCacheRequested")),
        model=str(first["message"].get("model") or ""),
    )
