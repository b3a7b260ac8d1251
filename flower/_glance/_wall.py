"""A glance as the delegation wall runs it: parsed, checked against the user's rules, then jailed.

`glance_run` is the one decision the PreToolUse hook takes for a Bash call of the coordinator, and what
the differential fuzzer runs. Two lines of defence:

1. the parser (`glance_verdict`) refuses, with a reason the model can act on, what is not a quick
   read-only look (and the user's `Bash(...)` deny rules are checked against the model's own command);
2. the jail (`flower._glance.jail`) runs what it accepts where the kernel forbids writes, the network,
   signals outside, identity changes, and bounds time, memory, processes and output.

Where there is no jail (an old kernel, another system, a launcher that cannot start), glance accepts only
its core commands (`_core`), fails closed otherwise, and says so once per process: a log record on
`flower.glance` and a `GlanceWarning` event (`take_warnings`).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from .._util.check import checked
from ..events import GlanceWarning
from ._core import core_refusal
from ._deny import BashRules
from ._verdict import GlanceVerdict, glance_verdict
from .jail import JailLimits, JailSupport, jail_command, jail_support

__all__ = ["GlanceRun", "glance_run", "take_warnings"]

logger = logging.getLogger("flower.glance")

DEFAULT_LIMITS = JailLimits()


@dataclass(frozen=True)
class GlanceRun:
    """What the wall does with one Bash call of the coordinator."""

    allowed: bool
    """Whether the call runs (as `command`)."""
    reason: str
    """Why not, in one sentence for the deny message; a short confirmation when allowed."""
    command: str
    """What the CLI runs instead of the model's command: the jailed command ('' when refused)."""
    jailed: bool
    """Whether `command` runs inside the jail (False: a core glance on a machine without one)."""
    verdict: GlanceVerdict
    """The parser's verdict on the model's command."""


_lock = threading.Lock()
_warned: list[bool] = []
_pending: list[GlanceWarning] = []


def take_warnings() -> list[GlanceWarning]:
    """The `GlanceWarning` not sent yet (at most one per process); the run loop sends it as an event."""
    with _lock:
        taken = list(_pending)
        _pending.clear()
    return taken


def _warn_once(support: JailSupport) -> None:
    with _lock:
        if _warned:
            return
        _warned.append(True)
        message = (
            f"no glance jail on this machine ({support.reason}): the coordinator runs only core glances "
            "itself (pwd, ls, cat/head/tail/wc of project files, git status/log/diff/show) and delegates "
            "the rest"
        )
        _pending.append(GlanceWarning(message=message, reason=support.reason))
    logger.warning("%s", message)


@checked
def glance_run(
    command: str,
    *,
    cwd: str | None,
    rules: BashRules | None = None,
    limits: JailLimits = DEFAULT_LIMITS,
    support: JailSupport | None = None,
) -> GlanceRun:
    """Decide on a Bash call of the coordinator run in the directory `cwd`; never raises for a `str`.

    - `rules`: the user's `Bash(...)` rules, checked against `command` as the model wrote it;
    - `limits`: the jail's bounds;
    - `support`: the jail this machine gives (default: `jail_support()`, probed once per process).
    """
    verdict = glance_verdict(command, cwd=cwd)
    if not verdict.ephemeral:
        return GlanceRun(False, verdict.reason, "", False, verdict)
    if rules is not None:
        try:
            rule = rules.match(command, verdict.segments, cwd)
        except (OSError, ValueError) as error:
            reason = f"the permission settings could not be read ({error}), so no glance runs"
            return GlanceRun(False, reason, "", False, verdict)
        if rule:
            return GlanceRun(False, f"the permission rule `{rule}` matches it", "", False, verdict)
    support = jail_support() if support is None else support
    if support.available:
        try:
            return GlanceRun(
                True, verdict.reason, jail_command(verdict.command, limits=limits), True, verdict
            )
        except ValueError as error:
            return GlanceRun(False, f"the glance jail cannot start ({error})", "", False, verdict)
    _warn_once(support)
    why = core_refusal(command, cwd)
    if why:
        reason = (
            f"this machine has no glance jail ({support.reason}), and without one only core commands run "
            f"here: {why}"
        )
        return GlanceRun(False, reason, "", False, verdict)
    return GlanceRun(True, verdict.reason, verdict.command, False, verdict)
