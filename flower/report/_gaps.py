"""What a store may lack, and how the report counts it anyway and says so.

Two gaps were met in real sessions:

- **Output tokens recorded mid-stream.** Some CLIs write each reply's output count as it stood at the
  start of the stream (a handful of tokens for a reply of thousands) and no `stop_reason`: every real
  session of CLI 2.0.64 to 2.1.42 we read, and of 2.1.44 to 2.1.52 too; CLI 2.1.332 writes the final
  count and the `stop_reason`. The report tells such a reply by what it lacks, never by the version. It
  counts such a reply from its content instead (`metrics.Message.mid_stream`): a lower bound, so the
  output and the cost are printed as "≥" with a note saying how many replies and how they were counted.
- **Subagent transcripts not kept.** A worker's transcript may be missing (a store that mirrored only
  the main thread, a copy of the main file alone) while the main thread's Agent (or Task) call and its
  result are there. A run is counted from such a call, matched to the transcripts by the `agentId` of
  its result, and a note says how many runs have no transcript: their turns, tokens and cost are not in
  the report.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._util.content import text_of, tool_results
from . import _metrics as m

__all__ = ["Runs", "output_counts_note", "output_note", "runs_note", "subagent_runs"]

_DELEGATIONS = ("Agent", "Task")
_AGENT_ID = re.compile(r"^agentId: (\w+)", re.MULTILINE)
_SUBAGENT = "agent-"


@dataclass(frozen=True)
class Runs:
    """A session's subagent runs: every transcript, and the calls whose transcript is missing."""

    transcripts: int
    """Worker transcripts in the store (the compaction worker's are not counted)."""
    from_calls: int
    """Agent/Task calls of the main thread that ran a worker whose transcript is not in the store."""

    @property
    def total(self) -> int:
        """Every run: the transcripts and the calls without one."""
        return self.transcripts + self.from_calls


def _results(main: Sequence[Mapping[str, Any]]) -> dict[str, tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """tool_use id -> (the result block, the entry holding it)."""
    found: dict[str, tuple[Mapping[str, Any], Mapping[str, Any]]] = {}
    for entry in main:
        for block in tool_results(entry):
            ident = block.get("tool_use_id")
            if isinstance(ident, str):
                found[ident] = (block, entry)
    return found


def _agent_id(block: Mapping[str, Any], entry: Mapping[str, Any]) -> str | None:
    """The worker a delegation ran: `toolUseResult.agentId`, else the `agentId:` line of the result."""
    data = entry.get("toolUseResult")
    if isinstance(data, Mapping) and isinstance(data.get("agentId"), str) and data["agentId"]:
        return str(data["agentId"])
    found = _AGENT_ID.search(text_of(block.get("content")))
    return found.group(1) if found else None


def subagent_runs(main: Sequence[Mapping[str, Any]], workers: Iterable[str]) -> Runs:
    """The runs of one session: its worker transcripts (`workers`: their subpaths), and each main-thread
    Agent/Task call that ran (a result that is no error and no denial) whose worker has no transcript.

    A call is matched to a transcript by its result's `agentId` (`subagents/agent-<agentId>`). Calls
    that name no worker are matched to the transcripts no call named, and only the surplus counts.
    """
    kept = {path.rsplit("/", 1)[-1].removeprefix(_SUBAGENT) for path in workers}
    results = _results(main)
    named: set[str] = set()
    unnamed = 0
    for call in m.tool_uses(main):
        if call.get("name") not in _DELEGATIONS:
            continue
        found = results.get(str(call.get("id", "")))
        if found is None:
            continue  # never answered: it did not run to an end
        block, entry = found
        if block.get("is_error") is True:
            continue  # refused, interrupted, or failed before a worker ran
        ident = _agent_id(block, entry)
        if ident is None:
            unnamed += 1
        else:
            named.add(ident)
    spare = len(kept - named)
    return Runs(transcripts=len(kept), from_calls=len(named - kept) + max(0, unnamed - spare))


def runs_note(from_calls: int) -> str | None:
    """The report's note on runs counted from their calls (None when every run has its transcript)."""
    if not from_calls:
        return None
    return (
        f"subagent runs: {from_calls} counted from their Agent/Task calls, their transcripts are not in "
        "the store: their turns, tokens and cost are missing from this report"
    )


def output_note(replies: Sequence[m.Message]) -> str | None:
    """The report's note on replies whose output was recorded mid-stream (None when there are none)."""
    counted = [reply for reply in replies if reply.mid_stream]
    return output_counts_note(
        len(counted),
        len(replies),
        sum(reply.recorded_output for reply in counted),
        sum(reply.usage.output for reply in counted),
    )


def output_counts_note(counted: int, replies: int, recorded: int, derived: int) -> str | None:
    """`output_note` from its counts: `counted` of `replies` had their output counted from their content,
    `recorded` tokens as written, `derived` as counted (None when `counted` is 0)."""
    if not counted:
        return None
    return (
        f"output tokens: {counted} of {replies} replies have no stop_reason on any entry (the "
        "CLI that wrote them recorded each reply's output count as its stream started, not its final "
        f"count): {recorded:,} tokens recorded, "
        f"{derived:,} counted from their content at {m.OUTPUT_CHARS_PER_TOKEN} characters a token; a lower "
        "bound, so output and cost are at least what is shown"
    )
