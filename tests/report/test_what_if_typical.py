"""The peak a run typically shows: read-backs drawn, not weighted (`flower.report._what_if.typical`)."""

from __future__ import annotations

from flower.report._what_if.readback import Chance
from flower.report._what_if.replay import Saving
from flower.report._what_if.typical import typical_peak

CONTEXTS = [100, 200, 150]
"""Three requests' expected contexts, no read-back in them."""


def test_a_read_back_counts_whole_when_it_happens_and_not_at_all_when_it_does_not() -> None:
    expected = [Saving(1, 3, 0, 10, -10)]  # 10 tokens expected, carried by the last two requests
    contexts = [100, 210, 160]
    never, always = (Chance(((1, 3),), share, 1.0, 60.0, 60.0) for share in (0.0, 1.0))
    assert typical_peak(contexts, expected, [never]) == 200
    assert typical_peak(contexts, expected, [always]) == 260
    assert typical_peak(CONTEXTS, [], []) == 200 and typical_peak([], [], []) == 0


def test_the_typical_run_is_the_median_of_the_draws() -> None:
    rare, common = (Chance(((1, 3),), share, 1.0, 60.0, 60.0) for share in (0.2, 0.8))
    assert typical_peak(CONTEXTS, [], [rare]) == 200  # 101 draws: read back about 20 times
    assert typical_peak(CONTEXTS, [], [common]) == 260


def test_once_a_look_up_reads_the_whole_output_no_later_one_follows() -> None:
    spans = ((1, 2), (2, 3))  # two look-ups: the first carried by request 1, the second by request 2
    assert typical_peak(CONTEXTS, [], [Chance(spans, 1.0, 1.0, 50.0, 30.0)]) == 250  # 200 + 50; 150 alone
    assert typical_peak(CONTEXTS, [], [Chance(spans, 1.0, 0.0, 50.0, 30.0)]) == 230  # 200 + 30; 150 + 30
