"""`Course`: a session's decisions about its handoff line, as tables (fed messages, it answers)."""

from __future__ import annotations

import pytest
from claude_agent_sdk import AssistantMessage, ResultMessage, TextBlock, ToolUseBlock

from flower import HandoffPolicy
from flower._run.course import Course, continues

CALLS = AssistantMessage(content=[ToolUseBlock(id="t1", name="Bash", input={})], model="m")
WORDS = AssistantMessage(content=[TextBlock(text="done")], model="m")
WORKERS = AssistantMessage(
    content=[ToolUseBlock(id="t2", name="Bash", input={})], model="m", parent_tool_use_id="a"
)


def course(active: bool = True) -> Course:
    return Course(active=active, window=1_000, threshold=800, warn_at=600)


def result(terminal_reason: str | None = None, *, is_error: bool = False) -> ResultMessage:
    return ResultMessage(
        subtype="success",
        duration_ms=1,
        duration_api_ms=1,
        is_error=is_error,
        num_turns=1,
        session_id="s",
        terminal_reason=terminal_reason,
    )


def test_a_course_follows_its_policy() -> None:
    policy = HandoffPolicy()
    made = Course.of(policy, 200_000)
    assert made.active and made.threshold == policy.threshold(200_000) < 200_000
    assert made.warn_at == policy.warn_at(200_000) < made.threshold
    assert not Course.of(None, 1_000).active and Course.of(None, 1_000).threshold == 1_000
    assert not Course.of(HandoffPolicy(enabled=False), 200_000).active


def test_an_inline_session_hands_off_at_its_size_and_warns_of_nothing() -> None:
    policy = HandoffPolicy()
    inline = Course.of(policy, 200_000, 30_000)
    assert inline.active and inline.threshold == 30_000
    assert not inline.warns(10_000) and not inline.warns(190_000)  # no HandoffWarning for the switch
    assert inline.over(CALLS, 30_000) and inline.due
    assert Course.of(policy, 100_000, 90_000).threshold == policy.threshold(100_000)  # the lower line wins


@pytest.mark.parametrize(
    ("message", "goes_on"), [(CALLS, True), (WORDS, False), (WORKERS, False), (result(), False)]
)
def test_only_a_main_thread_reply_that_calls_tools_goes_on(message: object, goes_on: bool) -> None:
    assert continues(message) is goes_on


WARNINGS = [
    # active, contexts fed in order -> which of them warn
    (True, [100, 500, 600, 700, 900], [False, False, True, False, False]),
    (True, [700, 100], [True, False]),
    (False, [100, 900], [False, False]),
]


@pytest.mark.parametrize(("active", "contexts", "warns"), WARNINGS)
def test_the_warning_comes_once_and_the_floor_is_the_first_context(
    active: bool, contexts: list[int], warns: list[bool]
) -> None:
    session = course(active)
    assert [session.warns(context) for context in contexts] == warns
    assert session.floor == contexts[0]


OVER = [
    # active, stopping, message, context -> the turn must not go on (and the handoff is due)
    (True, False, CALLS, 800, True),
    (True, False, CALLS, 799, False),
    (True, False, WORDS, 900, False),
    (True, False, WORKERS, 900, False),
    (True, True, CALLS, 900, False),
    (False, False, CALLS, 900, False),
]


@pytest.mark.parametrize(("active", "stopping", "message", "context", "over"), OVER)
def test_past_the_threshold_a_turn_calling_tools_is_stopped(
    active: bool, stopping: bool, message: object, context: int, over: bool
) -> None:
    session = course(active)
    session.stopping = stopping
    assert session.over(message, context) is over
    assert session.due is over and session.reached == (context if over else 0)


def test_the_context_of_the_handoff_is_where_it_became_due() -> None:
    session = course()
    session.over(CALLS, 850)
    session.over(CALLS, 990)
    assert session.outcome("handoff", "s", 999).context == 850
    assert course().outcome("done", "s", 420).context == 420


ENDS = [
    # terminal reason, is_error, context, workers out -> overflow's why, due
    (None, False, 900, 1, "", True),
    (None, False, 900, 0, "", False),
    (None, False, 700, 2, "", False),
    ("prompt_too_long", True, 900, 1, "the CLI refused a prompt too long (prompt_too_long)", False),
    ("blocking_limit", True, 100, 0, "the CLI refused a prompt too long (blocking_limit)", False),
    ("prompt_too_long", False, 100, 0, "", False),
]


@pytest.mark.parametrize(("terminal", "is_error", "context", "pending", "why", "due"), ENDS)
def test_a_result_ends_the_interrupt_and_may_overflow_or_make_the_handoff_due(
    terminal: str | None, is_error: bool, context: int, pending: int, why: str, due: bool
) -> None:
    session = course()
    session.interrupting()
    assert session.ended(result(terminal, is_error=is_error), context, pending) == why
    assert not session.stopping and session.due is due


@pytest.mark.parametrize(("due", "kind", "lost"), [(True, "handoff", "silent"), (False, "stalled", "")])
def test_a_wait_past_its_guard_hands_off_when_due_else_stalls(due: bool, kind: str, lost: str) -> None:
    session = course()
    session.due = due
    assert session.gives_up("silent") == kind
    assert session.outcome(kind, "s", 1).lost == lost
