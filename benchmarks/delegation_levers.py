"""The levers on a delegation's price, each measured as a before/after pair of runs through the CLI.

Read by `bench_delegation_price.py` (one command prints both tables). Each lever runs the same small task
twice, the way flower did it before and the way it does it now (or with the opt-in), and prices both
request logs on every row, `LATER[0]` later coordinator requests included. "Before" of a lever flower
now does by default is flower's earlier code, put back for that run only (`_earlier`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from bench_delegation_price import (  # type: ignore[import-not-found]
    ANALYST,
    ITEM,
    LATER,
    Case,
    Row,
    item_text,
    money,
    price,
    report,
    run_case,
)

import flower._options
from flower import worker
from flower.testing import RecordedRequest, agent, bash, read, reply
from flower.testing._requests import content_text

SMALL = 300
"""Chars of each small item's output."""


@contextlib.contextmanager
def _earlier(name: str, value: Any) -> Iterator[None]:
    """flower._options' `name` as it was before a lever (for the "before" run only)."""
    kept = getattr(flower._options, name)
    setattr(flower._options, name, value)
    try:
        yield
    finally:
        setattr(flower._options, name, kept)


def _files(n: int) -> dict[str, str]:
    return {f"items/i{i}.txt": item_text(SMALL) for i in range(n)}


def _mandate(i: int) -> str:
    return f"Run `cat items/i{i}.txt` and report what it holds."


def batching(after: bool) -> Case:
    """Four small items: four mandates (before), or one mandate listing the four (after)."""
    if after:
        listed = "For each of items/i0.txt ... items/i3.txt: run `cat` on it and report what it holds."
        steps = [*(bash(f"cat items/i{i}.txt") for i in range(4)), report()]
        return Case(
            main=[agent("analyst", listed), "done"], workers={"analyst": (ANALYST, steps)}, files=_files(4)
        )
    steps = [s for i in range(4) for s in (bash(f"cat items/i{i}.txt"), report())]
    main = [*(agent("analyst", _mandate(i)) for i in range(4)), "done"]
    return Case(main=main, workers={"analyst": (ANALYST, steps)}, files=_files(4))


def _waits(request: RecordedRequest) -> Any:
    """The coordinator of the foreground lever: delegates once (the call does not say where), waits for a
    background report if it has to, then ends."""
    if not request.tool_results:
        return agent("analyst", _mandate(0), background=None)
    if (
        "Async agent launched" in request.tool_results[-1].text
        and "<task-notification>" not in request.last_user_text
    ):
        return "Waiting for the report."
    return "done"


def foreground(after: bool) -> Case:
    """One delegation whose call does not ask for the background: the CLI's default, the background
    (before), or flower's foreground (after)."""
    return Case(
        main=_waits,
        workers={"analyst": (ANALYST, [bash("cat items/i0.txt"), report()])},
        files=_files(1),
        coordinator={"foreground": after},
    )


GROWN = (
    "Goal: the items the user names.\n\nNotes so far:\n"
    + "- a decision made earlier, and its reason.\n" * 2_000
)
"""A coordinator's instructions padded to about 90k chars: the context of a coordinator well into a run."""


def foreground_grown(after: bool) -> Case:
    """`foreground` with a coordinator whose context has grown (its prefix is what the extra request of a
    background delegation re-reads)."""
    return dataclasses.replace(foreground(after), instructions=GROWN)


def tool_order(after: bool) -> Case:
    """Two worker types offered the same tools, listed in two orders, one delegation each."""
    a = worker("Counts.", "You count.", tools=["Bash", "Read", "Grep"])
    b = worker("Reads.", "You read.", tools=["Read", "Grep", "Bash"])
    main = [agent("counter", _mandate(0)), agent("reader", _mandate(1)), "done"]
    workers = {
        "counter": (a, [bash("cat items/i0.txt"), report()]),
        "reader": (b, [bash("cat items/i1.txt"), report()]),
    }
    return Case(main=main, workers=workers, files=_files(2))


def read_only(after: bool) -> Case:
    """One delegation to a worker with the default tools (before) or a read-only worker (after)."""
    lean = worker(ANALYST.description, ANALYST.instructions, tools=["Read", "Glob", "Grep"])
    spec = lean if after else ANALYST

    def step(request: RecordedRequest) -> Any:
        if request.tool_results:
            return report()
        seen = "\n".join(content_text(m.get("content")) for m in request.messages)
        root = re.search(r"Primary working directory: (\S+)", seen)
        return read(f"{root.group(1) if root else '.'}/items/i0.txt")

    return Case(
        main=[agent("analyst", _mandate(0)), "done"], workers={"analyst": (spec, step)}, files=_files(1)
    )


def _parallel_worker(request: RecordedRequest) -> Any:
    """A worker's first reply begins a second after its request (a real response takes a moment to begin:
    only then can another request read what it wrote); its second reports."""
    return report() if request.tool_results else reply(bash("cat items/i0.txt"), delay=1.0)


def parallel(after: bool) -> Case:
    """Three workers of one type started in one message: mandates as written, no start guard (before),
    or flower's shared line and start guard (after)."""
    calls = reply(*(agent("analyst", f"[{i}] " + _mandate(i), description=f"item {i}") for i in range(3)))
    return Case(
        main=[calls, "done"],
        workers={"analyst": (ANALYST, _parallel_worker)},
        files=_files(3),
        coordinator={} if after else {"mandate_line": None},
    )


def parallel_types(after: bool) -> Case:
    """Two worker types with the same tools started in one message: held by type (before) or by prefix
    group (after)."""
    b = worker("Reads.", "You read.", tools=list(ANALYST.tools))
    calls = reply(
        agent("analyst", _mandate(0), description="a"), agent("reader", _mandate(1), description="b")
    )
    workers = {"analyst": (ANALYST, _parallel_worker), "reader": (b, _parallel_worker)}
    return Case(main=[calls, "done"], workers=workers, files=_files(2))


def shared_line(after: bool) -> Case:
    """Two delegations to one type whose mandates start differently: as written (before), or both after
    flower's mandate line (after)."""
    main = [agent("analyst", "Zq: " + _mandate(0)), agent("analyst", "[b] " + _mandate(1)), "done"]
    steps = [bash("cat items/i0.txt"), report(), bash("cat items/i1.txt"), report()]
    return Case(
        main=main,
        workers={"analyst": (ANALYST, steps)},
        files=_files(2),
        coordinator={} if after else {"mandate_line": None},
    )


def git_texts(after: bool) -> Case:
    """One delegation with the CLI's git workflow texts (before) or without them (opt-in,
    `CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS`: workers lose the CLI's commit guidance)."""
    env = {"env": {"CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS": "1"}} if after else {}
    return Case(
        main=[agent("analyst", _mandate(0)), "done"],
        workers={"analyst": (ANALYST, [bash("cat items/i0.txt"), report()])},
        files=_files(1),
        coordinator={"options": env} if env else {},
    )


def _unsorted(spec: Any) -> list[str]:
    return list(spec.tools)


def _by_type(workers: Any) -> dict[str, str]:
    return {name: name for name in workers}


LEVERS: tuple[tuple[str, str, Callable[[bool], Case], Callable[[bool], Any]], ...] = (
    ("four small items in one mandate", "rules (default)", batching, lambda after: contextlib.nullcontext()),
    (
        "a worker the call does not send to the background runs in the foreground",
        "default",
        foreground,
        lambda after: contextlib.nullcontext(),
    ),
    (
        "the same, the coordinator's context at about 90k chars",
        "default",
        foreground_grown,
        lambda after: contextlib.nullcontext(),
    ),
    (
        "two worker types, same tools: sent in one order (sorted)",
        "default",
        tool_order,
        lambda after: contextlib.nullcontext() if after else _earlier("worker_tools", _unsorted),
    ),
    (
        "a read-only worker (Read, Glob, Grep) instead of the default tools",
        "opt-in",
        read_only,
        lambda after: contextlib.nullcontext(),
    ),
    (
        "three parallel workers of one type: the shared line and start guard",
        "default (existing)",
        parallel,
        lambda after: contextlib.nullcontext(),
    ),
    (
        "two parallel worker types, same tools: held by prefix group",
        "default",
        parallel_types,
        lambda after: contextlib.nullcontext() if after else _earlier("prefix_groups", _by_type),
    ),
    (
        "two mandates that start differently: the shared mandate line",
        "default (existing)",
        shared_line,
        lambda after: contextlib.nullcontext(),
    ),
    (
        "no git workflow texts (`CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS=1`)",
        "opt-in (existing)",
        git_texts,
        lambda after: contextlib.nullcontext(),
    ),
)


def measure(rows: Sequence[Row]) -> tuple[str, dict[str, Any]]:
    """The levers table (before, after, after ÷ before on every row) and its numbers."""
    import asyncio

    later = LATER[0]
    head = "| lever | how | " + " | ".join(f"{r.label}: before → after" for r in rows) + " |"
    lines = [head, "|---|---|" + "---:|" * len(rows)]
    numbers: dict[str, Any] = {}
    for label, how, build, earlier in LEVERS:
        cells = []
        for row in rows:
            found = []
            for after in (False, True):
                with earlier(after):
                    requests = asyncio.run(run_case(build(after), row))
                found.append(price(requests, row).at(later))
            numbers.setdefault(label, {})[row.label] = found
            before, now = found
            cells.append(f"{money(before)} → {money(now)} ({now / before:.2f})")
        lines.append(f"| {label} | {how} | " + " | ".join(cells) + " |")
    intro = (
        f"Each lever: the same small task before and after, all agents, {later} later coordinator "
        "requests re-reading what it left (after ÷ before in brackets).\n"
    )
    return intro + "\n".join(lines) + "\n", numbers


__all__ = ["ITEM", "LEVERS", "measure"]
