"""A handoff: the main thread nears the context wall, writes a handoff document, and a fresh session goes on.

The coordinator reads chapters one by one. The window is set small (60,000 tokens) and spill is off, so
a short run crosses the threshold: window - 33,000 (the CLI's auto-compact line) - reserve 5,000 =
22,000 tokens. In a real run leave both at their defaults: the window the CLI reports for its model
(200k gives a threshold of 147,000) and spill on.

Offline, the scripted model reports usage numbers that cross the threshold once, on a reply that calls a
tool. flower interrupts that turn, asks the same session for its handoff document, saves it to the
workbench's `notes/handoff.md`, and starts a fresh session from the document alone: the successor has
none of the old session's history, and continues from "Next step".

    python examples/handoff.py          # offline, against the scripted model
    ANTHROPIC_API_KEY=... python examples/handoff.py --live
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
from pathlib import Path

from flower import HandoffPolicy, Heartbeat, Runtime, coordinator, worker
from flower.events import Event, HandoffDone, HandoffWarning
from flower.testing import RecordedRequest, Reply, ScriptedModel, Usage, bash, read, reply

reader = worker("Reads and summarises long documents.", "You summarise; one line per document.")
lead = coordinator("lead", "Goal: one line of gist per chapter in chapters/, in order.", {"reader": reader})
BUDGET = {"max_budget_usd": 0.5}  # live runs only: the CLI stops a session that has spent this much
POLICY = HandoffPolicy(window=60_000, reserve=5_000, warn_margin=5_000)  # threshold 22,000, warning at 17,000
TASK = (
    "Read the files in chapters/ yourself with the Read tool, one per turn, in name order, and give the gist "
    "of each in one line. The user's constraint: never open appendix.txt."
)

TAKEOVER = "You are taking over work in progress"  # the start of flower's TAKEOVER_PROMPT
DOCUMENT = """\
## Doing now
Giving the gist of each chapter in chapters/, in order; chapters 1 and 2 are done.
## Decided
- Read each chapter whole with Read, one per turn (the user asked for it).
- The user's constraint, still in force: never open appendix.txt.
- Gists so far: 1. {gist1} 2. {gist2}
## Dead ends
none
## Next step
Read chapters/03.txt, give its gist, then write the final list of three gists.
## Where things are
- chapters/01.txt ... chapters/03.txt: the chapters
"""


def make_chapters(workspace: Path) -> None:
    chapters = workspace / "chapters"
    chapters.mkdir()
    for number, topic in enumerate(("the harbour", "the storm", "the return"), start=1):
        body = f"Chapter {number}: {topic}.\n" + f"A long paragraph about {topic}. " * 600
        (chapters / f"{number:02d}.txt").write_text(body)
    (chapters / "appendix.txt").write_text("Not to be read.\n")


def first_line(request: RecordedRequest) -> str:
    """The first line of the file the last Read returned (the CLI numbers lines: "     1\tText")."""
    return request.tool_results[-1].text.split("\n", 1)[0].split("\t", 1)[-1].strip()


def offline_model(workspace: Path) -> ScriptedModel:
    """Usage numbers drive the watermark: 3,000 tokens, then 18,000 (a warning), then 25,000 (a handoff)."""
    chapter = [str(workspace / "chapters" / f"{n:02d}.txt") for n in (1, 2, 3)]
    gists: list[str] = []

    def main(request: RecordedRequest) -> Reply | str:
        if "Write the handoff document now" in request.last_user_text:  # flower's handoff turn
            return DOCUMENT.format(gist1=gists[0], gist2=gists[1])
        if TAKEOVER in request:  # the successor, started from the document
            if request.turn == 0:
                return reply(read(chapter[2]), usage=Usage(input_tokens=4_000))
            return f"1. {gists[0]} 2. {gists[1]} 3. {first_line(request)}"
        if request.turn == 0:
            return reply(read(chapter[0]), usage=Usage(input_tokens=3_000))
        if request.turn == 1:
            gists.append(first_line(request))
            return reply(read(chapter[1]), usage=Usage(input_tokens=10, cache_read_input_tokens=18_000))
        gists.append(first_line(request))
        # past the threshold, on a reply that calls a tool: flower interrupts the turn (the call in
        # flight is a slow one, so the interrupt always lands before it returns)
        slow = bash("python3 -c 'import time; time.sleep(5)'")
        return reply(slow, usage=Usage(input_tokens=10, cache_read_input_tokens=25_000))

    return ScriptedModel(main=main)


def on_event(event: Event) -> None:
    match event:
        case HandoffWarning(context=context, threshold=threshold):
            print(f"warning: context {context:,} tokens, handoff at {threshold:,}")
        case HandoffDone(generation=generation, reason=reason, degraded=degraded, context=context):
            print(f"handoff: at {context:,} tokens ({reason}), generation {generation} starts,", end=" ")
            print(f"degraded={degraded}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--live", action="store_true", help="use the real API (needs ANTHROPIC_API_KEY)")
    live = parser.parse_args().live
    if live and not os.environ.get("ANTHROPIC_API_KEY"):
        sys.exit("--live calls the real Anthropic API: set ANTHROPIC_API_KEY first (or run without --live).")

    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        make_chapters(workspace)
        if live:
            capped = dataclasses.replace(lead, options=BUDGET)
            rt = Runtime(workspace, handoff=POLICY, spill_threshold=None)
            result = rt.run_sync(capped, TASK, on_event=on_event)
        else:
            with offline_model(workspace) as model:
                rt = Runtime(workspace, handoff=POLICY, spill_threshold=None, configure=model.attach)
                result = rt.run_sync(lead, TASK, on_event=on_event)
                successor = next(r for r in model.requests("main") if TAKEOVER in r)
            print(
                f"the successor's first request holds: the document={'Next step' in successor}, "
                f"the user's constraint={'never open appendix.txt' in successor}, "
                f"chapter 1's text={'A long paragraph about the harbour' in successor}"
            )

        document = workspace / ".flower" / "notes" / "handoff.md"
        if document.exists():
            print(f"handoff document: {document.relative_to(workspace)} ({document.stat().st_size:,} bytes)")
            print("next step in it:", document.read_text().split("## Next step\n", 1)[-1].split("\n", 1)[0])
        else:
            print("no handoff: the run ended below the threshold")
        print(f"retired sessions: {len(result.retired)}; the successor is {result.session_id}")
        print(f"ok={result.ok} peak context={result.peak_context:,} tokens")
        print(result.text or result.error)


if __name__ == "__main__":
    # a line on stderr at once, then one whenever the run has been silent for 15 s
    with Heartbeat(f"{Path(__file__).name}: {__doc__.splitlines()[0]}"):
        main()
