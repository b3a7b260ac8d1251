"""`flower._progress.Heartbeat`: a line at once, then a line after each silent stretch, never while busy."""

from __future__ import annotations

import io
import threading

from flower._progress import Heartbeat, Tally
from flower.testing import hang_guard


class Lines(io.StringIO):
    """A stream that tells when a line containing `wanted` was written."""

    def __init__(self, wanted: str) -> None:
        super().__init__()
        self.wanted = wanted
        self.seen = threading.Event()

    def write(self, text: str) -> int:
        written = super().write(text)
        if self.wanted in self.getvalue():
            self.seen.set()
        return written


def test_the_first_line_is_printed_on_entering() -> None:
    stream = Lines("")
    with Heartbeat("app: auditing the logs", every=3600, stream=stream):
        assert stream.getvalue() == "app: auditing the logs\n"  # before the block does anything
    assert stream.getvalue() == "app: auditing the logs\n"  # nothing else: no silent stretch was that long


def test_a_silent_step_gets_a_line_naming_it() -> None:
    stream = Lines("still running")
    with Heartbeat("app: started", every=0.05, stream=stream) as beat:
        beat.step("step 1: the survey")
        assert stream.seen.wait(hang_guard()), stream.getvalue()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "app: started"
    assert lines[1].startswith("  ... step 1: the survey: still running, ") and lines[1].endswith(" s so far")


def test_signs_of_life_hold_the_line_back() -> None:
    stream = Lines("still running")
    with Heartbeat("app: started", every=3600, stream=stream) as beat:
        for event in range(100):
            beat(event)  # an event of the run
        beat.say("  [01] a line of the program's own")
    assert stream.getvalue() == "app: started\n  [01] a line of the program's own\n"


def test_a_tally_says_how_far_a_long_count_is_and_nothing_for_a_short_one() -> None:
    stream = io.StringIO()
    tally = Tally("sessions read", every=3600.0, stream=stream)
    for done in range(1, 41):
        tally(done, 40)
    assert stream.getvalue().splitlines() == [
        "sessions read: 1 of 40 (2 %)",
        "sessions read: 40 of 40 (100 %)",
    ]
    short = io.StringIO()
    for done in range(1, 6):
        Tally("sessions read", stream=short)(done, 5)
    assert short.getvalue() == ""
