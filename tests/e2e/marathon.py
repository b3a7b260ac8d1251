"""A long run that crosses the handoff threshold: its task, its coordinator and its scripted replies."""

from __future__ import annotations

from flower import coordinator, worker
from flower.testing import RecordedRequest, Usage, bash, prompt_too_long, reply

MODEL = "claude-sonnet-4-6"  # the CLI reports a 200,000-token window: threshold 147,000, warning at 127,000

TASK = "ORIGINAL-TASK: count the widgets. Constraint from the user: never touch vendor/."

DOC = """## Doing now
Counting widgets; half done.
## Decided
- Use scripts/count.sh (it is fast). Constraint from the user: never touch vendor/.
- The build id is {build}.
## Dead ends
- grep -c over the tree: too slow.
## Next step
Run scripts/count.sh on src/b.
## Where things are
- .flower/scripts/count.sh
"""


def lead() -> object:
    return coordinator("lead", "Goal: count widgets.", {"w": worker("Counts.", "You count.")}, model=MODEL)


def first_user_text(request: RecordedRequest) -> str:
    for message in request.messages:
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else " ".join(str(b.get("text", "")) for b in content)
    return ""


def marathon(crossings: int = 1, overflow_first: bool = False):  # type: ignore[no-untyped-def]
    """A main thread that grows past the threshold `crossings` times, writing its handoff when asked."""
    state = {"crossed": 0}

    def script(request: RecordedRequest):  # type: ignore[no-untyped-def]
        if "Write the handoff document now" in request.last_user_text:
            build = next((r.text for r in request.tool_results if r.text.startswith("BUILD-")), "unknown")
            return DOC.format(build=build)
        taking_over = "You are taking over work in progress" in first_user_text(request)
        if request.turn == 0:
            return reply(bash("echo BUILD-7731"), usage=Usage(input_tokens=3_000))
        if overflow_first and not taking_over:
            return prompt_too_long()
        if state["crossed"] < crossings:
            state["crossed"] += 1
            slow = "python3 -c 'import time; time.sleep(600)'"  # interrupted by the handoff, never done
            return reply(bash(slow), usage=Usage(input_tokens=10, cache_read_input_tokens=150_000))
        return "FINAL: 42 widgets"

    return script
