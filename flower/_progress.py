"""`Heartbeat`: a line on stderr at once, then a line whenever a long step has said nothing for a while.

A run through the CLI can be silent for a minute before its first event on a busy machine (the CLI
starts, reads its settings, sends the first request), and a program that prints nothing in that time
looks stuck. A `Heartbeat` prints what starts as soon as it is entered, then, from a thread of its own,
one line each time `every` seconds pass with no sign of life: the step under way and how long it has run.
Anything the program reports (an event passed to the heartbeat, a line printed through `say()`) counts as
a sign of life. The lines go to stderr, which Python does not buffer, so they show through a pipe too.

Example::

    from flower._progress import Heartbeat

    with Heartbeat("my_app: auditing the logs") as beat:
        beat.step("step 1: the survey")
        result = rt.run_sync(lead, "Start.", on_event=beat)  # each event counts as a sign of life
"""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType
from typing import Self, TextIO

from ._util.check import checked

__all__ = ["EVERY", "Heartbeat", "Tally"]

EVERY = 15.0
"""Seconds of silence after which a heartbeat prints a line (the default of `Heartbeat(every=...)`)."""


class Heartbeat:
    """Prints `what` on stderr when entered, then a line after each `every` seconds of silence.

    Call it with anything (an event: it fits `on_event=`) or `say()` a line to show progress; `step()`
    names the step the silent lines report. Thread-safe; usable around `run_sync` and inside an event
    loop alike (it never blocks the caller).
    """

    @checked
    def __init__(self, what: str, *, every: float | None = None, stream: TextIO | None = None) -> None:
        self.what = what
        self.every = EVERY if every is None else every
        self._stream = stream
        self._label = ""
        self._started = self._last = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Self:
        self._started = self._last = time.monotonic()
        self.say(self.what)
        self._thread = threading.Thread(target=self._watch, name="flower-heartbeat", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def __call__(self, event: object = None) -> None:
        """A sign of life (an event of the run, or anything else): the silence starts again."""
        with self._lock:
            self._last = time.monotonic()

    @checked
    def step(self, label: str) -> None:
        """Name the step under way (the silent lines report it); it counts as a sign of life."""
        with self._lock:
            self._label = label
        self()

    @checked
    def say(self, line: str) -> None:
        """Print `line` on stderr now; it counts as a sign of life."""
        print(line, file=self._stream or sys.stderr, flush=True)
        self()

    def _watch(self) -> None:
        while not self._stop.wait(self._wait()):
            with self._lock:
                now = time.monotonic()
                silent = now - self._last >= self.every
                label = self._label
            if silent:
                during = f" {label}:" if label else ""
                self.say(f"  ...{during} still running, {now - self._started:.0f} s so far")

    def _wait(self) -> float:
        with self._lock:
            return max(0.01, self._last + self.every - time.monotonic())


class Tally:
    """A progress line on stderr while a long count goes on: `what: n of total (p %)`.

    Call it with `(done, total)` after each item (it fits `build_report(progress=...)`). It prints at most
    once every `every` seconds, and the last item always; a count of fewer than `least` items prints
    nothing (a short history needs no progress).

    Example::

        tally = Tally("flower report: sessions read")
        report = await build_report(None, progress=tally)
    """

    def __init__(
        self, what: str, *, every: float = 2.0, least: int = 20, stream: TextIO | None = None
    ) -> None:
        self.what = what
        self.every = every
        self.least = least
        self._stream = stream
        self._shown = -float("inf")

    def __call__(self, done: int, total: int) -> None:
        """`done` items of `total` are done."""
        if total < self.least:
            return
        now = time.monotonic()
        if done < total and now - self._shown < self.every:
            return
        self._shown = now
        share = 100 * done / total if total else 100.0
        print(
            f"{self.what}: {done:,} of {total:,} ({share:.0f} %)", file=self._stream or sys.stderr, flush=True
        )
