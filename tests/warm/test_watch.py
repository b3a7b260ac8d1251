"""When the coordinator waits on a worker, read from the SDK's messages (built as the SDK builds them)."""

from __future__ import annotations

from claude_agent_sdk import (
    AssistantMessage,
    ResultMessage,
    SystemMessage,
    TaskNotificationMessage,
    TaskStartedMessage,
    TaskUpdatedMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

from flower._warm.watch import Watch


def init() -> SystemMessage:
    return SystemMessage(subtype="init", data={"session_id": "s1"})


def reply(message: str, *blocks: TextBlock | ToolUseBlock, parent: str | None = None) -> AssistantMessage:
    return AssistantMessage(
        content=list(blocks), model="m", parent_tool_use_id=parent, message_id=message, uuid=f"u-{message}"
    )


def results(*ids: str, parent: str | None = None) -> UserMessage:
    return UserMessage(
        content=[ToolResultBlock(tool_use_id=i, content="ok") for i in ids], parent_tool_use_id=parent
    )


def started(task: str) -> TaskStartedMessage:
    return TaskStartedMessage(
        subtype="task_started", data={}, task_id=task, description="d", uuid="x", session_id="s1"
    )


def done(task: str) -> TaskNotificationMessage:
    return TaskNotificationMessage(
        subtype="task_notification",
        data={},
        task_id=task,
        status="completed",
        output_file="",
        summary="report",
        uuid="y",
        session_id="s1",
    )


def end() -> ResultMessage:
    return ResultMessage(
        subtype="success", duration_ms=1, duration_api_ms=1, is_error=False, num_turns=1, session_id="s1"
    )


CALL = ToolUseBlock(id="call-1", name="Agent", input={"subagent_type": "analyst", "prompt": "count"})
GLANCE = ToolUseBlock(id="glance-1", name="Bash", input={"command": "ls"})


def test_a_foreground_worker_is_waited_on_from_the_call_to_its_result() -> None:
    watch = Watch(0.0)
    for at, message in [(1.0, init()), (3.0, reply("m1", GLANCE)), (4.0, results("glance-1"))]:
        watch.feed(message, at)
    assert not watch.waiting and watch.session_id == "s1"
    watch.feed(reply("m2", TextBlock(text="Delegating.")), 6.0)
    watch.feed(reply("m2", CALL), 6.1)  # the same reply's next block
    assert watch.waiting and watch.requested_at == 4.0 and watch.reply == "u-m2" and watch.epoch == 2
    watch.feed(started("t1"), 7.0)
    watch.feed(reply("w1", GLANCE, parent="call-1"), 8.0)  # the worker's own messages change nothing
    watch.feed(results("glance-1", parent="call-1"), 9.0)
    assert watch.waiting and watch.epoch == 2
    watch.feed(results("call-1"), 300.0)  # the report: the coordinator is about to send a request
    assert not watch.waiting


def test_background_workers_are_waited_on_once_the_turn_has_ended() -> None:
    watch = Watch(0.0)
    watch.feed(init(), 1.0)
    watch.feed(reply("m1", CALL), 2.0)
    watch.feed(started("t1"), 2.5)
    watch.feed(results("call-1"), 3.0)  # "Async agent launched"
    assert not watch.waiting  # the coordinator still has its turn to finish
    watch.feed(reply("m2", TextBlock(text="Waiting.")), 5.0)
    assert not watch.waiting and watch.requested_at == 3.0
    watch.feed(end(), 5.5)
    assert watch.waiting  # nothing else to do until the worker reports
    watch.feed(done("t1"), 400.0)
    assert not watch.waiting


def test_a_task_that_ends_by_a_status_update_ends_the_wait_too() -> None:
    watch = Watch(0.0)
    for message in (init(), reply("m1", CALL), started("t1"), results("call-1"), end()):
        watch.feed(message, 1.0)
    assert watch.waiting
    watch.feed(
        TaskUpdatedMessage(subtype="task_updated", data={}, task_id="t1", patch={"status": "killed"}), 2.0
    )
    assert not watch.waiting
