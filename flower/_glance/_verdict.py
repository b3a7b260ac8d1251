"""The parser's verdict on one command: `GlanceVerdict`, `glance_verdict`, `is_ephemeral`."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from flower._util.check import checked

from ._git import HARDENING
from ._source import parse
from ._verb import Refusal
from ._walk import Walk

__all__ = ["GlanceVerdict", "glance_verdict", "is_ephemeral"]

logger = logging.getLogger("flower.glance")

_HARDENING = (" " + " ".join(HARDENING)).encode()


@dataclass(frozen=True)
class GlanceVerdict:
    """The answer for one command, with the reason in one English sentence (usable in a deny message)."""

    ephemeral: bool
    """Whether the command is a glance: the coordinator may run it, and its result expires on resume."""
    reason: str
    """Why not (the first refusal met), or a short confirmation when it is ephemeral."""
    segments: tuple[str, ...]
    """The simple commands checked, in order; after a refusal, those met up to the refused part."""
    command: str = ""
    """What to run for a glance: the command itself, with git's read-only options inserted after each
    `git` (`git --no-optional-locks -c core.fsmonitor= … status`), so that git writes nothing, runs no
    hook and fetches nothing. Empty when the command is refused."""
    secret: bool = False
    """Refused for what it would read or print: credentials, a credential store, the environment. The
    wall keeps such a refusal final in every mode (no own step runs it)."""


@checked
def is_ephemeral(command: str) -> bool:
    """Whether `command` is read-only, quick, terminating, and has a result that can go stale."""
    return glance_verdict(command).ephemeral


@checked
def glance_verdict(command: str, *, cwd: str | None = None) -> GlanceVerdict:
    """Parse `command` once and check every part of it; anything not understood is refused.

    `cwd`: the directory the command runs in, when known (the hook knows it): paths are then resolved
    by the file system from there (links, named pipes), as absolute paths always are. Never raises for
    a `str`: an internal error is a refusal too. A value that is not a `str` raises `SpecError` (a
    `TypeError`) naming `command`, as every public callable does; it never passes.
    """
    walk: Walk | None = None
    try:
        root, source = parse(command)
        walk = Walk(source, None if cwd is None else str(cwd))
        walk.sequence(root)
        if not walk.segments:
            raise Refusal("the command holds no command, only comments")
        return GlanceVerdict(
            True, "every part is a read-only command", tuple(walk.segments), _run(command, walk)
        )
    except Refusal as refusal:
        segments = tuple(walk.segments) if walk else ()
        return GlanceVerdict(False, refusal.reason, segments, secret=refusal.secret)
    except Exception:  # fail closed: a bug in glance refuses the command, it never lets it through
        logger.exception("glance could not decide on a command; refusing it")
        return GlanceVerdict(False, "glance could not decide on this command (internal error)", ())


def _run(command: str, walk: Walk) -> str:
    """`command` with the hardening options after each `git` name that does not have them yet."""
    text = command.encode("utf-8")  # the walk's byte offsets are the command's: fix-ups keep lengths
    for offset in sorted(walk.git_names, reverse=True):
        if not text.startswith(_HARDENING, offset):
            text = text[:offset] + _HARDENING + text[offset:]
    return text.decode("utf-8")
