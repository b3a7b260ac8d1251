"""The workbench inside a run: its failures become a `WorkbenchWarning` event, never an exception.

A `Runtime` refreshes the index before each session and saves handoff documents in `notes/`. A read-only
or full disk, or a directory where `INDEX.md` should be, must not end a run that needs neither: the step
goes on without the index in its prompt (or without the saved document), the failure is logged on
`logging.getLogger("flower.workbench")`, and the caller sends the warning to `on_event`.
"""

from __future__ import annotations

import logging

from .._errors import WorkbenchError
from ..events import WorkbenchWarning
from .bench import Workbench

__all__ = ["block_or_warning", "preface_or_warning", "warning_of"]

logger = logging.getLogger("flower.workbench")


def warning_of(exc: WorkbenchError, what: str) -> WorkbenchWarning:
    """Log `exc` and make the event that tells the run about it; `what` says what the run does without."""
    logger.warning("%s; %s", exc, what)
    return WorkbenchWarning(message=f"{exc}; {what}", path=exc.path)


def block_or_warning(workbench: Workbench | None) -> tuple[str | None, WorkbenchWarning | None]:
    """The workbench block for a new session (the index refreshed), or None and the warning why not."""
    if workbench is None:
        return None, None
    try:
        return workbench.prompt_block(), None
    except WorkbenchError as exc:
        return None, warning_of(exc, "this session starts without the workbench index")


def preface_or_warning(
    workbench: Workbench, prompt: str, since: str | None
) -> tuple[str, WorkbenchWarning | None]:
    """`workbench.preface(prompt, since=since)`, or the prompt alone and the warning why."""
    try:
        return workbench.preface(prompt, since=since), None
    except WorkbenchError as exc:
        return prompt, warning_of(exc, "the resume prompt goes without the workbench index")
