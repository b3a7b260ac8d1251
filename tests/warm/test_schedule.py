"""The keep-warm schedule and its fork point: pure functions, tested with numbers and plain entries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flower import KeepWarmPolicy, Runtime, SpecError
from flower._cost import TTL_1H, TTL_5M
from flower._warm.keep_warm_policy import resolve_keep_warm
from flower._warm.schedule import fork_point, lifetime_of, ping_at, ping_limit, ping_times

POLICY = KeepWarmPolicy()


def test_a_ping_comes_270_s_after_the_last_request_and_as_early_before_an_hour_ends() -> None:
    assert ping_at(POLICY, since=1_000.0, lifetime=TTL_5M) == 1_270.0
    assert ping_at(POLICY, since=1_000.0, lifetime=TTL_1H) == 1_000.0 + 3_570.0
    assert ping_at(KeepWarmPolicy(interval=2.0), since=0.0, lifetime=TTL_5M) == 2.0


def test_the_pings_of_a_wait_stop_at_its_end_and_at_the_limit() -> None:
    assert ping_times(POLICY, since=0.0, until=269.0, lifetime=TTL_5M, limit=24) == []
    assert ping_times(POLICY, since=0.0, until=600.0, lifetime=TTL_5M, limit=24) == [270.0, 540.0]
    assert ping_times(POLICY, since=0.0, until=540.0, lifetime=TTL_5M, limit=24) == [270.0]
    assert ping_times(POLICY, since=0.0, until=10_000.0, lifetime=TTL_5M, limit=3) == [270.0, 540.0, 810.0]
    assert ping_times(POLICY, since=0.0, until=7_200.0, lifetime=TTL_1H, limit=24) == [3_570.0, 7_140.0]


def test_the_limit_is_the_pings_one_rewrite_costs_at_the_models_prices() -> None:
    # Opus 5 (the CLI's measured prices): read 0.05x, write 1.25x -> (1.25 - 0.05) / 0.05 = 24 reads
    assert ping_limit(POLICY, model="claude-opus-5-5", lifetime=TTL_5M) == 24
    assert ping_limit(POLICY, model="claude-sonnet-4-6", lifetime=TTL_5M) == 11  # 0.1x and 1.25x
    assert ping_limit(POLICY, model="claude-sonnet-4-6", lifetime=TTL_1H) == 19  # a 1-hour rewrite: 2x
    assert ping_limit(KeepWarmPolicy(max_pings=3), model="claude-opus-5-5", lifetime=TTL_5M) == 3


@pytest.mark.parametrize(
    ("arguments", "match"),
    [
        ({"interval": 0.0}, "interval must be between 0 and 300"),
        ({"interval": 300.0}, "interval must be between 0 and 300"),
        ({"interval": "270"}, "interval must be a number"),
        ({"max_pings": 0}, "max_pings must be None or an int >= 1"),
        ({"prompt": " "}, "prompt must be a non-empty string"),
    ],
)
def test_a_policy_refuses_what_cannot_keep_a_cache_warm(arguments: dict[str, Any], match: str) -> None:
    with pytest.raises(SpecError, match=match):
        KeepWarmPolicy(**arguments)


def test_keep_warm_is_true_false_or_a_policy(tmp_path: Path) -> None:
    assert resolve_keep_warm(True) == KeepWarmPolicy()
    assert resolve_keep_warm(False) is None
    with pytest.raises(
        SpecError, match=r"^Runtime: keep_warm must be True or False or a KeepWarmPolicy, got 270$"
    ):
        Runtime(tmp_path, keep_warm=270)  # type: ignore[arg-type]


def _entry(uuid: str, parent: str | None, kind: str = "user", **extra: Any) -> dict[str, Any]:
    return {"type": kind, "uuid": uuid, "parentUuid": parent, **extra}


def _reply(uuid: str, parent: str, message: str, **extra: Any) -> dict[str, Any]:
    return _entry(uuid, parent, "assistant", message={"id": message, "model": "claude-opus-5-5"}, **extra)


HISTORY = [
    _entry("u1", None),
    _entry("a1", "u1", "attachment"),
    _reply("r1", "a1", "m1", promptCacheRequested="5m"),
    _entry("t1", "r1"),  # the glance's result
    _reply("r2", "t1", "m2", promptCacheRequested="1h"),  # thinking...
    _reply("r3", "r2", "m2", promptCacheRequested="1h"),  # ...then the Agent call, same message
    _entry("s1", "r3", "system"),
]


def test_the_fork_stops_before_the_first_block_of_the_last_reply() -> None:
    point = fork_point(HISTORY)
    assert point is not None
    assert (point.resume_at, point.reply, point.lifetime, point.model) == (
        "t1",
        "r2",
        TTL_1H,
        "claude-opus-5-5",
    )
    earlier = fork_point(HISTORY, reply="r1")
    assert earlier is not None and (earlier.resume_at, earlier.lifetime) == ("a1", TTL_5M)
    assert fork_point(HISTORY, reply="r9") is None  # not written yet: the runner looks again later


def test_no_fork_point_without_a_reply_of_the_model_to_send_again() -> None:
    synthetic = _reply("x", "u1", "m9", isApiErrorMessage=True)
    assert fork_point([_entry("u1", None), synthetic]) is None
    sidechain = _reply("y", "u1", "m8", isSidechain=True)
    assert fork_point([_entry("u1", None), sidechain]) is None
    assert fork_point([_reply("z", "gone", "m7")]) is None  # its parent is not in the history


def test_the_lifetime_is_an_hour_only_when_the_marks_asked_for_it() -> None:
    assert (lifetime_of("1h"), lifetime_of("5m"), lifetime_of(None), lifetime_of(3600)) == (
        TTL_1H,
        TTL_5M,
        TTL_5M,
        TTL_5M,
    )
