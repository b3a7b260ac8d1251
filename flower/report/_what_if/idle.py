"""What the user's pauses cost: the prompt cache gone cold between a reply and the next prompt.

The cache lives a few minutes after the last request (5 minutes, or an hour where the session asked for
the 1-hour cache; `flower.stores._rewrite.load_points` reads the lifetime from the replies). A prompt that
comes later finds it gone: its first request writes again the context the cache held, which a warm cache
would have read. That difference, priced at the request's model, is what the pause cost. flower does not
keep the cache warm across a user's pause (its pings run only while a coordinator waits on a worker), so
no layer saves it; the report says it so that a user knows where the money went.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..._cost import price
from ..._usage import TokenUsage
from ...stores._rewrite import load_points
from .replay import Thread

__all__ = ["IdlePauses", "idle_pauses"]


@dataclass(frozen=True)
class IdlePauses:
    """The pauses after which the cache had gone cold, and what writing the context again cost."""

    gaps: int = 0
    """Prompts that came the cache's lifetime or more after the last request."""
    tokens: int = 0
    """Context tokens written again that a warm cache would have read."""
    usd: float = 0.0
    """What those writes cost more than the reads would have."""


def _warm(usage: TokenUsage, tokens: int) -> TokenUsage:
    """`usage` had `tokens` of its writes been reads (taken from the 5-minute and 1-hour writes alike)."""
    writes = usage.cache_creation + usage.cache_creation_1h
    share = usage.cache_creation / writes if writes else 1.0
    five = round(tokens * share)
    return TokenUsage(
        input=usage.input,
        cache_read=usage.cache_read + tokens,
        cache_creation=usage.cache_creation - five,
        cache_creation_1h=usage.cache_creation_1h - (tokens - five),
        output=usage.output,
    )


def idle_pauses(main: Thread) -> IdlePauses:
    """The cold pauses of the main thread `main` (every prompt after one, resumed or not)."""
    gaps = tokens = 0
    usd = 0.0
    requests = main.requests
    for point in load_points(list(main.entries)):
        if not point.cold:
            continue
        number = main.first_after(point.index)
        if not 0 < number < len(requests):
            continue
        request = requests[number]
        usage = request.usage
        again = min(main.end_of(number - 1), usage.cache_creation + usage.cache_creation_1h)
        gaps += 1
        if again <= 0:
            continue
        tokens += again
        usd += (
            price([usage], model=request.model).total
            - price([_warm(usage, again)], model=request.model).total
        )
    return IdlePauses(gaps, tokens, usd)
