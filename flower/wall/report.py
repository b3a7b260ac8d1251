"""`report_guard`: a worker's report stays short; a long one is kept on disk, not in the coordinator.

A worker's final message is pasted whole into the coordinator's context, where it stays for the rest of
the session, so one pasted log costs every later turn. `WORKER_RULES` asks for short reports; this hook
makes sure. It is a SubagentStop hook: when a worker's last message is `limit` chars or longer, the report
is saved whole under the workbench's `artifacts/reports/` and the worker is sent back once, with the path,
to reply in short. Its second answer passes whatever its length (`stop_hook_active`), so a worker never
loops. It works for foreground and background workers alike: the hook runs before the CLI hands the
report back, so the coordinator only ever sees the short one.

It fails open: if saving the report fails, the report passes unchanged and the failure is logged on
`logging.getLogger("flower.report_guard")`.

Example::

    options = ClaudeAgentOptions(cwd="repo", hooks=report_hooks(Workbench("repo")))
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import anyio.to_thread
from claude_agent_sdk import HookContext, HookMatcher
from claude_agent_sdk.types import HookCallback, HookEvent, HookInput, HookJSONOutput

from .._errors import SpecError, WorkbenchError
from .._util.check import checked
from .._util.private_dirs import make_private_dirs
from ..spill._files import label_of, write_text
from ..workbench.bench import Workbench, safe_directory

__all__ = ["REPORT_LIMIT", "REPORT_REASON", "report_guard", "report_hooks"]

logger = logging.getLogger("flower.report_guard")

REPORT_LIMIT: Final = 4000
"""A report this many chars long or longer is sent back (the spill threshold: a report that long is an
output, not a report)."""

REPORT_REASON: Final = (
    "flower: your report is {chars} chars; a report stays under {limit}. It was saved whole to {path}. "
    "Reply again with a short report: conclusions first, then the paths of what you produced, and "
    "{path} for the details. Do not repeat its contents."
)
"""What the worker is told; `{chars}`, `{limit}` and `{path}` are filled in."""

_DESCRIPTION: Final = "# desc: full report of worker {agent} ({chars} chars)\n\n"


@checked
def report_guard(
    target: Workbench | str | os.PathLike[str],
    *,
    limit: int = REPORT_LIMIT,
    reason: str = REPORT_REASON,
) -> HookCallback:
    """Build the SubagentStop hook that sends a long report back once, saved under `target`.

    `target` is a `Workbench` (reports go to `artifacts/reports/`, where the coordinator's index lists
    them) or a directory used as is. `limit` must be a positive int.
    """
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise SpecError(f"report_guard: limit must be a positive int, got {limit!r}")
    try:
        reason.format(chars="1", limit="1", path="p")
    except (KeyError, IndexError, ValueError) as exc:
        raise SpecError(f"report_guard: reason has an unknown placeholder: {exc}") from exc
    if isinstance(target, Workbench):
        workbench: Workbench | None = target
        directory = target.artifacts / "reports"
    elif isinstance(target, str | os.PathLike) and os.fspath(target):
        workbench = None
        directory = Path(os.path.abspath(os.fspath(target)))
    else:
        raise SpecError(f"report_guard: target needs a Workbench or a directory, got {target!r}")

    async def hook(data: HookInput, tool_use_id: str | None, context: HookContext) -> HookJSONOutput:
        try:
            raw: Mapping[str, Any] = data
            if raw.get("hook_event_name") != "SubagentStop" or raw.get("stop_hook_active"):
                return {}
            report = raw.get("last_assistant_message")
            if not isinstance(report, str) or len(report) < limit:
                return {}
            path = await anyio.to_thread.run_sync(_save, raw, report, workbench, directory)
        except Exception as exc:
            logger.warning("report_guard let a long report through: %s", exc, exc_info=True)
            return {}
        return {
            "decision": "block",
            "reason": reason.format(chars=f"{len(report):,}", limit=f"{limit:,}", path=path),
        }

    return hook


@checked
def report_hooks(
    target: Workbench | str | os.PathLike[str],
    *,
    limit: int | None = REPORT_LIMIT,
    reason: str = REPORT_REASON,
) -> dict[HookEvent, list[HookMatcher]]:
    """The hooks to install, ready for `ClaudeAgentOptions(hooks=...)`; `{}` when `limit` is None or 0."""
    if limit is None or limit == 0:
        return {}
    return {"SubagentStop": [HookMatcher(hooks=[report_guard(target, limit=limit, reason=reason)])]}


def _save(data: Mapping[str, Any], report: str, workbench: Workbench | None, directory: Path) -> Path:
    """Write the report (content-addressed, 0600) under a description line for the index."""
    if workbench is not None:
        workbench.ensure()
        safe_directory(directory, workbench.root)
    else:
        make_private_dirs(directory)  # 0700, the topmost created one git-ignored
        safe_directory(directory, directory)
    agent = str(data.get("agent_type") or "worker")
    header = _DESCRIPTION.format(agent=" ".join(agent.split())[:80], chars=f"{len(report):,}")
    saved = write_text(directory, header + report, f"report-{label_of(agent)}")
    if workbench is not None:
        try:
            workbench.refresh()
        except WorkbenchError as exc:  # the report is saved: an index one step stale is no reason to fail
            logger.warning("report_guard saved %s but could not refresh the index: %s", saved.path, exc)
    return saved.path
