"""`report_cut`, `report_guard`: a worker's long report is kept on disk, not in the coordinator.

A worker's final message is pasted whole into the coordinator's context, where it stays for the rest of
the session, so one pasted log costs every later turn. `WORKER_RULES` asks for short reports; these
hooks make sure, without asking the worker for another turn where they can:

- `report_cut`, a PostToolUse hook on `Agent`: a foreground worker's report `limit` chars or longer is
  saved whole under the workbench's `artifacts/reports/`, and the coordinator gets its head (`preview`
  chars, cut at a line end: `WORKER_RULES` asks for conclusions first) and the saved file's path. No
  extra request: the worker has already stopped, and sending it back would re-read its whole context to
  write a shorter version of what is on disk anyway.
- `report_guard`, a SubagentStop hook, for the reports a PostToolUse hook never sees: a background
  worker's report arrives as a task notification. Such a report is saved the same way and the worker is
  sent back once, with the path, to reply in short; its second answer passes whatever its length
  (`stop_hook_active`), so a worker never loops. Alone (`only_background=False`) it sends back every
  long report, foreground ones too.

Both fail open: if saving a report fails, the report passes unchanged and the failure is logged on
`logging.getLogger("flower.report_guard")`. An app's own PostToolUse hook on `Agent` that rewrites the
output races with `report_cut` (the CLI keeps the last rewrite); the report then reaches the coordinator
as the app left it.

Example::

    options = ClaudeAgentOptions(cwd="repo", hooks=report_hooks(Workbench("repo")))
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, cast

import anyio.to_thread
from claude_agent_sdk import HookContext, HookMatcher
from claude_agent_sdk.types import HookCallback, HookEvent, HookInput, HookJSONOutput

from .._errors import SpecError, WorkbenchError
from .._spill._files import label_of, write_text
from .._util.check import checked
from .._util.private_dirs import make_private_dirs
from .._workbench.bench import Workbench, safe_directory

__all__ = ["REPORT_LIMIT", "REPORT_PREVIEW", "REPORT_REASON", "report_cut", "report_guard", "report_hooks"]

logger = logging.getLogger("flower.report_guard")

REPORT_LIMIT: Final = 4000
"""A report this many chars long or longer is cut or sent back (the spill threshold: a report that long
is an output, not a report)."""

REPORT_PREVIEW: Final = 2000
"""How much of a cut report's head the coordinator gets (cut back to a line end)."""

REPORT_REASON: Final = (
    "flower: your report is {chars} chars; a report stays under {limit}. It was saved whole to {path}. "
    "Reply again with a short report: conclusions first, then the paths of what you produced, and "
    "{path} for the details. Do not repeat its contents."
)
"""What a background worker is told; `{chars}`, `{limit}` and `{path}` are filled in."""

CUT_NOTE: Final = "[flower: report cut at {shown} of {chars} chars; the whole report: {path}]"
"""The line after a cut report's head; `{shown}`, `{chars}` and `{path}` are filled in."""

_DESCRIPTION: Final = "# desc: full report of worker {agent} ({chars} chars)\n\n"
_AGENT_TOOLS: Final = frozenset({"Agent", "Task"})


def _target(target: Workbench | str | os.PathLike[str], owner: str) -> tuple[Workbench | None, Path]:
    if isinstance(target, Workbench):
        return target, target.artifacts / "reports"
    if os.fspath(target):
        return None, Path(os.path.abspath(os.fspath(target)))
    raise SpecError(f"{owner}: target needs a Workbench or a directory, got ''")


def _check_positive(value: int, owner: str, name: str) -> None:
    """What the type of a `@checked` argument cannot say: it is positive."""
    if value < 1:
        raise SpecError(f"{owner}: {name} must be a positive int, got {value!r}")


@checked
def report_cut(
    target: Workbench | str | os.PathLike[str],
    *,
    limit: int = REPORT_LIMIT,
    preview: int = REPORT_PREVIEW,
) -> HookCallback:
    """Build the PostToolUse hook that cuts a long foreground report to its head, saved whole under `target`.

    `target` is a `Workbench` (reports go to `artifacts/reports/`, where the coordinator's index lists
    them) or a directory used as is. `limit` and `preview` must be positive ints; the head is at most
    `preview` chars (never more than the report), cut back to a line end when one is in its second half.
    """
    _check_positive(limit, "report_cut", "limit")
    _check_positive(preview, "report_cut", "preview")
    workbench, directory = _target(target, "report_cut")

    async def hook(data: HookInput, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
        try:
            raw: Mapping[str, Any] = data
            if raw.get("hook_event_name") != "PostToolUse" or raw.get("tool_name") not in _AGENT_TOOLS:
                return {}
            output = raw.get("tool_response")
            report = _report_text(output)
            if report is None or len(report) < limit or not isinstance(output, Mapping):
                return {}
            agent = str(output.get("agentType") or "worker")
            path = await anyio.to_thread.run_sync(_save, agent, report, workbench, directory)
        except Exception as exc:
            logger.warning("report_cut let a long report through: %s", exc, exc_info=True)
            return {}
        shown = cut_head(report, preview)
        note = CUT_NOTE.format(shown=f"{len(shown):,}", chars=f"{len(report):,}", path=path)
        updated = {**output, "content": [{"type": "text", "text": f"{shown}\n\n{note}"}]}
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": updated}}

    return hook


def cut_head(report: str, preview: int) -> str:
    """The first `preview` chars of `report`, back to the last line end if one is in their second half."""
    head = report[:preview]
    if len(head) < len(report):
        end = head.rfind("\n")
        if end >= preview // 2:
            head = head[:end]
    return head.rstrip()


def _report_text(output: object) -> str | None:
    """A finished Agent call's report (its text blocks), or None for a launch or any other shape."""
    if not isinstance(output, Mapping) or output.get("status") != "completed":
        return None
    content = output.get("content")
    if not isinstance(content, list) or not content:
        return None
    texts = [block.get("text") for block in content if isinstance(block, Mapping)]
    if len(texts) != len(content) or not all(isinstance(text, str) for text in texts):
        return None  # an image or an unknown block: left as it is
    return "\n".join(cast(list[str], texts))


@checked
def report_guard(
    target: Workbench | str | os.PathLike[str],
    *,
    limit: int = REPORT_LIMIT,
    reason: str = REPORT_REASON,
    only_background: bool = False,
) -> HookCallback:
    """Build the SubagentStop hook that sends a long report back once, saved under `target`.

    `target` is a `Workbench` (reports go to `artifacts/reports/`, where the coordinator's index lists
    them) or a directory used as is. `limit` must be a positive int. With `only_background`, a
    foreground worker's report passes (`report_cut` cuts it without another request); a worker the
    hook input does not say is foreground is still sent back.
    """
    _check_positive(limit, "report_guard", "limit")
    try:
        reason.format(chars="1", limit="1", path="p")
    except (KeyError, IndexError, ValueError) as exc:
        raise SpecError(f"report_guard: reason has an unknown placeholder: {exc}") from exc
    workbench, directory = _target(target, "report_guard")

    async def hook(data: HookInput, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
        try:
            raw: Mapping[str, Any] = data
            if raw.get("hook_event_name") != "SubagentStop" or raw.get("stop_hook_active"):
                return {}
            report = raw.get("last_assistant_message")
            if not isinstance(report, str) or len(report) < limit:
                return {}
            if only_background and _foreground(raw):
                return {}
            agent = str(raw.get("agent_type") or "worker")
            path = await anyio.to_thread.run_sync(_save, agent, report, workbench, directory)
        except Exception as exc:
            logger.warning("report_guard let a long report through: %s", exc, exc_info=True)
            return {}
        return {
            "decision": "block",
            # every field a str, as the builder's check formats them (a Path takes no format spec)
            "reason": reason.format(chars=f"{len(report):,}", limit=f"{limit:,}", path=str(path)),
        }

    return hook


def _foreground(data: Mapping[str, Any]) -> bool:
    """True when the hook input lists the session's background tasks and this worker is not one of them."""
    tasks = data.get("background_tasks")
    if not isinstance(tasks, list):
        return False
    agent = data.get("agent_id")
    return not any(isinstance(task, Mapping) and task.get("id") == agent for task in tasks)


@checked
def report_hooks(
    target: Workbench | str | os.PathLike[str],
    *,
    limit: int | None = REPORT_LIMIT,
    reason: str = REPORT_REASON,
    preview: int = REPORT_PREVIEW,
) -> dict[HookEvent, list[HookMatcher]]:
    """The hooks to install, ready for `ClaudeAgentOptions(hooks=...)`: `report_cut` for foreground
    workers, `report_guard` for background ones; `{}` when `limit` is None or 0."""
    if limit is None or limit == 0:
        return {}
    return {
        "PostToolUse": [
            HookMatcher(matcher="Agent|Task", hooks=[report_cut(target, limit=limit, preview=preview)])
        ],
        "SubagentStop": [
            HookMatcher(hooks=[report_guard(target, limit=limit, reason=reason, only_background=True)])
        ],
    }


def _save(agent: str, report: str, workbench: Workbench | None, directory: Path) -> Path:
    """Write the report (content-addressed, 0600) under a description line for the index."""
    if workbench is not None:
        workbench.ensure()
        safe_directory(directory, workbench.root)
    else:
        make_private_dirs(directory)  # 0700, the topmost created one git-ignored
        safe_directory(directory, directory)
    header = _DESCRIPTION.format(agent=" ".join(agent.split())[:80], chars=f"{len(report):,}")
    saved = write_text(directory, header + report, f"report-{label_of(agent)}")
    if workbench is not None:
        try:
            workbench.refresh()
        except WorkbenchError as exc:  # the report is saved: an index one step stale is no reason to fail
            logger.warning("report_guard saved %s but could not refresh the index: %s", saved.path, exc)
    return saved.path
