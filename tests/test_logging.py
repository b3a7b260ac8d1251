"""`FLOWER_LOG` configures a stderr handler on the `flower` logger, never on the root logger."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from flower._util.flower_log import configure_from_env
from flower.testing import hang_guard

SCRIPT = """
import logging
import flower
import flower  # a second import installs nothing more
logging.getLogger("flower.runtime").debug("debug from flower")
logging.getLogger("flower.spill").info("info from flower")
logging.getLogger("app").warning("app warning")
print(len(logging.getLogger().handlers), len(logging.getLogger("flower").handlers))
"""


def run(value: str | None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin"}
    if value is not None:
        env["FLOWER_LOG"] = value
    return subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        env=env,
        timeout=hang_guard(),
        check=True,
    )


@pytest.mark.parametrize(
    ("value", "shown", "hidden"),
    [
        ("debug", ["DEBUG flower.runtime: debug from flower", "INFO flower.spill: info from flower"], []),
        ("INFO", ["INFO flower.spill: info from flower"], ["debug from flower"]),
        ("warning", [], ["debug from flower", "info from flower"]),
    ],
)
def test_flower_log_sets_the_flower_loggers_level_and_a_stderr_handler(
    value: str, shown: list[str], hidden: list[str]
) -> None:
    done = run(value)

    assert done.stdout.split() == ["0", "1"]  # root: no handler; flower: one, however often imported
    for line in shown:
        assert line in done.stderr
    for text in hidden:
        assert text not in done.stderr
    assert "app warning" in done.stderr  # Python's last-resort handler, as without flower


def test_without_flower_log_nothing_is_installed() -> None:
    done = run(None)

    assert done.stdout.split() == ["0", "0"] and "from flower" not in done.stderr


def test_an_unknown_level_falls_back_to_warning_and_says_so() -> None:
    logger = logging.getLogger("flower")
    before = list(logger.handlers), logger.level
    try:
        handler = configure_from_env({"FLOWER_LOG": "loud"})
        assert handler is not None and logger.level == logging.WARNING
        assert configure_from_env({"FLOWER_LOG": "debug"}) is handler  # installed once
    finally:
        logger.handlers[:] = before[0]
        logger.setLevel(before[1])
