"""A pause between the demo's two steps, written into its stores: step 1 ended 65 minutes before step 2.

Layer 4 decides new rewrites only at a resume that comes after the prompt cache has expired (the
coordinator's cache lives an hour: flower asks the CLI for it); the demo's steps run seconds apart. So
before step 2 the demo moves the timestamps of everything a store holds back by `seconds`, as if the user
had come back later: the store's load and the report then read the same pause, and the simulated prompt
cache (`PausedCache`) sees it too, for both sessions alike. Only the demo's own throwaway stores are
touched.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._cost import PromptCache
from .._usage import TokenUsage
from ..testing._pass_time import pass_time

__all__ = ["PAUSE", "PausedCache", "pass_time"]

PAUSE = 3_900.0
"""Seconds between the demo's steps: past the coordinator's 1-hour prompt cache (and expiry's idle
hour, so every glance result of step 1 expires)."""


class PausedCache(PromptCache):
    """The scripted model's prompt cache, on a clock that the demo's pause moves forward."""

    def __init__(self) -> None:
        super().__init__()
        self.paused = 0.0

    def send(
        self, body: Mapping[str, Any], *, at: float, output: int = 0, ready_at: float | None = None
    ) -> TokenUsage:
        """`PromptCache.send`, `paused` seconds later."""
        ready = None if ready_at is None else ready_at + self.paused
        return super().send(body, at=at + self.paused, output=output, ready_at=ready)
