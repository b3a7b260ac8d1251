"""The blocking forms (`run_sync`...): refuse clearly inside a running event loop.

anyio's own error there is a bare "Already running asyncio in this thread"; in a Jupyter notebook, where a
loop always runs, the user needs to be told to `await` the async form instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

from .._errors import SpecError

T = TypeVar("T")


def run_blocking(start: Callable[[], Awaitable[T]], name: str, instead: str) -> T:
    """Run `start()` on a new event loop; `SpecError` naming `instead` when a loop already runs here."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return anyio.run(start)
    raise SpecError(
        f"{name} cannot run inside a running event loop (a Jupyter notebook, an async app): "
        f"use `{instead}` there"
    )
