"""No error message without its cause: an exception whose text is empty (`TimeoutError()`) is named."""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKError

from flower import _cli as cli
from flower._demo import baseline
from flower._util.cause import cause_text


@pytest.mark.parametrize(
    ("exc", "text"),
    [
        (TimeoutError(), "TimeoutError (no message)"),
        (OSError(), "OSError (no message)"),
        (ValueError("  "), "ValueError (no message)"),
        (OSError(2, "No such file or directory"), "[Errno 2] No such file or directory"),
        (RuntimeError("the store is gone"), "the store is gone"),
    ],
)
def test_an_exception_is_never_empty_words(exc: BaseException, text: str) -> None:
    assert cause_text(exc) == text


def test_the_flower_command_names_an_error_that_has_no_message(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def demo(args: argparse.Namespace) -> int:
        raise TimeoutError  # what a time limit raised, with no text

    monkeypatch.setitem(cli._COMMANDS, "demo", demo)
    assert cli.main(["demo"]) == 1
    assert capsys.readouterr().err == "flower demo: error: TimeoutError (no message)\n"


async def test_a_plain_demo_step_has_no_time_limit_only_a_silence_guard(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A CLI that sends nothing is stopped with a message that says so; one that fails is named."""

    async def silent(**_: Any) -> AsyncIterator[Any]:
        await anyio.sleep_forever()
        yield None

    async def failing(**_: Any) -> AsyncIterator[Any]:
        raise ClaudeSDKError("")
        yield None

    monkeypatch.setattr(baseline, "SILENCE", 0.01)
    monkeypatch.setattr(baseline, "query", silent)
    text, _ = await baseline._run("Go.", ClaudeAgentOptions(), print)
    assert text == "error: the CLI sent nothing for 0.01 s (hung), so the step was stopped"
    monkeypatch.setattr(baseline, "query", failing)
    text, _ = await baseline._run("Go.", ClaudeAgentOptions(), print)
    assert text == "error: ClaudeSDKError (no message)"
