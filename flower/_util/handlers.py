"""Calling an app's callback that may be sync or async (`on_event`, `on_ping`)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TypeVar

__all__ = ["call_handler"]

T = TypeVar("T")


async def call_handler(handler: Callable[[T], object], value: T) -> None:
    """`handler(value)`, awaited when it returns an awaitable; its exception goes to the caller."""
    outcome = handler(value)
    if inspect.isawaitable(outcome):
        await outcome
