"""`run_interruptible()`: `anyio.run` for a command, where Ctrl-C always ends as `KeyboardInterrupt`.

A terminal's Ctrl-C reaches the whole process group: the CLI ends its run (an `error_during_execution`
result) at the same moment as asyncio cancels flower's task. Which comes first depends on the machine's
load: when the CLI's end is read first, the command fails with an error about an unfinished run instead of
saying it was interrupted. Recording the signal settles it: after a SIGINT, any `FlowerError` is the
interrupt's doing.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Awaitable, Callable
from types import FrameType
from typing import TypeVar

import anyio

from .._errors import FlowerError

__all__ = ["run_interruptible"]

T = TypeVar("T")


def run_interruptible(function: Callable[[], Awaitable[T]]) -> T:
    """`anyio.run(function)`, raising `KeyboardInterrupt` instead of a `FlowerError` after a SIGINT."""
    seen: list[int] = []

    async def main() -> T:
        previous = signal.getsignal(signal.SIGINT)
        chained = callable(previous) and threading.current_thread() is threading.main_thread()
        if callable(previous) and chained:
            forward = previous

            def on_sigint(signum: int, frame: FrameType | None) -> None:
                seen.append(signum)
                forward(signum, frame)  # asyncio's own handler: it cancels the main task

            signal.signal(signal.SIGINT, on_sigint)
        try:
            return await function()
        except FlowerError:
            if seen:
                raise KeyboardInterrupt from None
            raise
        finally:
            if chained:
                signal.signal(signal.SIGINT, previous)

    return anyio.run(main)
