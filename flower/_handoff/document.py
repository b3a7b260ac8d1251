"""Handoff instead of compaction: past the context wall, a written document starts a fresh session.

The four layers flatten the main thread's growth; they do not reverse it. Before the context reaches the
CLI's own lines (auto-compact at window - 33k; with auto-compact off, a local refusal at about window - 23k),
the session writes a handoff document: what it is doing, what is decided and why, the dead ends and why,
the next concrete step, where things are. A fresh session continues from that document and the workbench
alone. Unlike a summary written by a compaction, the document is structured, on disk, and asked of the
agent that knows the work while it still has room to write it.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .._errors import SpecError, WorkbenchError
from .._util.check import check_fields, checked
from .._util.safe_open import NotRegularFileError
from .._workbench.bench import safe_directory

__all__ = [
    "HANDOFF_PROMPT",
    "INLINE_HANDOFF_PROMPT",
    "TAKEOVER_PROMPT",
    "Handoff",
    "HandoffPolicy",
    "degraded_handoff",
    "parse_handoff",
    "save_handoff",
]

AUTO_COMPACT_MARGIN = 33_000
"""The CLI compacts at window - 33k tokens; its local refusal is at about window - 23k (CLI 2.1.327)."""

_DOCUMENT_ASK = """\
Write the handoff document now, as your whole reply, in plain Markdown with exactly these five sections:

## Doing now
One or two lines: the task and where you are in it.
## Decided
Each decision with why, and every constraint the user set that still applies (restate those exactly).
## Dead ends
What was tried and failed, with why, so nobody tries it again. Write "none" rather than invent.
## Next step
The next concrete action: run X, read Y, if Z then W.
## Where things are
Paths of the files, scripts, artifacts and notes that matter, one per line, each with a few words.

Be self-contained; give paths, not contents. Do not call any tool."""

HANDOFF_PROMPT = (
    "Stop the work here: your context is nearly full ({used:,} of {window:,} tokens). A new session will "
    "continue it with none of your memory: only the document you write now and the files on disk.\n\n"
    + _DOCUMENT_ASK
)
"""Asked of the session that hands off; `{used}` and `{window}` are filled in (tokens)."""

INLINE_HANDOFF_PROMPT = (
    "Stop the work here: your context has reached {used:,} tokens, the size at which this run hands the "
    "rest of the task to a coordinator, which delegates it to workers (inline_until={until:,}). It will "
    "continue with none of your memory: only the document you write now and the files on disk.\n\n"
    + _DOCUMENT_ASK
)
"""Asked of a coordinator's inline session (`coordinator(inline_until=...)`) when it reaches its size;
`{used}` and `{until}` are filled in (tokens)."""

TAKEOVER_PROMPT = """\
You are taking over work in progress. The session before you (generation {generation}) filled its \
context and handed off: you have none of its memory, only this document and the disk. The document is \
also at {path}.

{document}

Continue from "Next step". Do not start over, and do not ask for background: it is all above or on disk."""
"""The first prompt of the fresh session; `{generation}`, `{path}` and `{document}` are filled in."""

_SECTIONS: dict[str, tuple[str, ...]] = {
    "doing": ("doing now", "doing", "current task", "what i am doing", "status"),
    "decided": ("decided", "decisions", "already decided", "constraints"),
    "dead_ends": ("dead ends", "dead-ends", "dead end", "failed attempts", "tried"),
    "next": ("next step", "next steps", "next", "next action"),
    "where": ("where things are", "where", "files", "scene", "pointers"),
}
_TITLES = {
    "doing": "Doing now",
    "decided": "Decided",
    "dead_ends": "Dead ends",
    "next": "Next step",
    "where": "Where things are",
}
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*(.+?)\s*#*\s*$|^\s*\*\*(.+?)\*\*:?\s*$")


@dataclass(frozen=True, kw_only=True)
class HandoffPolicy:
    """When the main thread hands off, and how often it may.

    The threshold sits `reserve` tokens below the CLI's auto-compact line, itself below the CLI's local
    refusal, so the handoff turn always has room to be written.
    """

    enabled: bool = True
    """False turns handoff off, as `Runtime(handoff=False)` does."""
    window: int | None = None
    """The context window in tokens; None uses the one the CLI reports for the model it serves."""
    reserve: int = 20_000
    """Tokens kept free below window - 33k for the handoff turn and the tool results that follow a check."""
    warn_margin: int = 20_000
    """One warning event this many tokens before the threshold."""
    max_generations: int = 8
    """At most this many sessions (generations) in one step; the handoff that would start one more is
    still written and saved, then the step stops with an explanation."""
    prompt: str = HANDOFF_PROMPT
    """What the session is asked to write (`HANDOFF_PROMPT`); fields `{used}` and `{window}` (tokens)."""
    takeover: str = TAKEOVER_PROMPT
    """The first prompt of the next generation (`TAKEOVER_PROMPT`); fields `{generation}`, `{path}` and
    `{document}`."""
    inline_prompt: str = INLINE_HANDOFF_PROMPT
    """What a coordinator's inline session is asked to write when it reaches `inline_until`
    (`INLINE_HANDOFF_PROMPT`); fields `{used}` and `{until}` (tokens)."""

    def __post_init__(self) -> None:
        check_fields(self)
        for name in ("reserve", "warn_margin"):
            value = getattr(self, name)
            if value < 0:
                raise SpecError(f"HandoffPolicy.{name} must be an int >= 0, got {value!r}")
        if self.window is not None and self.window <= AUTO_COMPACT_MARGIN:
            raise SpecError(
                f"HandoffPolicy.window must be an int above {AUTO_COMPACT_MARGIN}, got {self.window!r}"
            )
        if self.max_generations < 1:
            raise SpecError(f"HandoffPolicy.max_generations must be >= 1, got {self.max_generations!r}")
        try:
            self.prompt.format(used=1, window=2)
            self.takeover.format(generation=1, path="p", document="d")
            self.inline_prompt.format(used=1, until=2)
        except (KeyError, IndexError, ValueError) as exc:
            raise SpecError(f"HandoffPolicy prompt has an unknown placeholder: {exc}") from exc

    @checked
    def threshold(self, window: int) -> int:
        """The context, in tokens, at which the main thread hands off."""
        return max(window // 4, window - AUTO_COMPACT_MARGIN - self.reserve)

    @checked
    def warn_at(self, window: int) -> int:
        """The context, in tokens, at which a `HandoffWarning` is sent: `warn_margin` below the threshold."""
        return max(0, self.threshold(window) - self.warn_margin)


@dataclass(frozen=True, kw_only=True)
class Handoff:
    """A handoff document, in sections. `degraded` when it was rebuilt mechanically, not written.

    Example::

        handoff = parse_handoff(reply_text)
        if handoff is not None:
            print(handoff.next)  # the "Next step" section
    """

    doing: str
    """"Doing now": the task and where the session is in it."""
    decided: str = ""
    """"Decided": each decision with why, and every user constraint still in force."""
    dead_ends: str = ""
    """"Dead ends": what was tried and failed, with why."""
    next: str
    """"Next step": the next concrete action."""
    where: str = ""
    """"Where things are": paths of the files that matter."""
    degraded: bool = False
    """True when flower rebuilt the document from what it saw, because the session could not write it."""
    reason: Literal["threshold", "overflow", ""] = ""
    """What made the session hand off: it reached the threshold, or it overflowed."""

    def __post_init__(self) -> None:
        check_fields(self)

    def render(self) -> str:
        """The document as Markdown, every section present."""
        parts = []
        for key, title in _TITLES.items():
            body = str(getattr(self, key)).strip() or "none"
            parts.append(f"## {title}\n{body}")
        return "\n\n".join(parts)


def _section_of(title: str) -> str | None:
    title = title.strip().strip(":").strip().lower()
    for key, names in _SECTIONS.items():
        if title in names:
            return key
    return None


@checked
def parse_handoff(text: str | None) -> Handoff | None:
    """Read the five sections out of the session's reply; None when "doing now" or "next step" is missing
    (or there is no reply at all).

    Headings may be Markdown (`## Next step`) or bold lines (`**Next step**`); names are matched loosely
    ("Next steps", "Decisions"...). Text inside fenced code blocks is never taken for a heading.
    """
    if not isinstance(text, str):
        return None
    sections: dict[str, list[str]] = {}
    current: str | None = None
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        heading = None if fenced else _HEADING.match(line)
        key = _section_of(heading.group(1) or heading.group(2)) if heading else None
        if key is not None:
            current = key
            sections.setdefault(key, [])
            continue
        if current is not None:
            sections[current].append(line)
    found = {key: "\n".join(lines).strip() for key, lines in sections.items()}
    if not found.get("doing") or not found.get("next"):
        return None
    return Handoff(
        doing=found["doing"],
        decided=found.get("decided", ""),
        dead_ends=found.get("dead_ends", ""),
        next=found["next"],
        where=found.get("where", ""),
        reason="threshold",
    )


_REPORT_CHARS = 4000
"""Of one worker's report in a degraded handoff: its findings, without letting one report fill the prompt."""


def degraded_handoff(
    *,
    why: str,
    task: str,
    texts: list[str],
    calls: list[str],
    reason: Literal["threshold", "overflow"],
    reports: Sequence[str] = (),
) -> Handoff:
    """A handoff rebuilt from what flower saw, for when the session could not write one.

    It carries the task as first given, the main thread's last words and last tool calls, the reports of
    its background workers (`reports`: a session that overflowed may never have read them, and its
    workers end with it), and a next step that starts by looking at the disk: better a successor that
    inspects than one that starts over blind.
    """
    task_text = task.strip()
    if len(task_text) > 1500:
        task_text = task_text[:1500] + " [...]"
    last_words = [t.strip()[:500] for t in texts[-3:] if t.strip()]
    said = "\n".join(f"- {t}" for t in last_words) or "- (nothing)"
    recent = "\n".join(f"- {c}" for c in calls[-12:]) or "- (none)"
    if reports:
        cut = [r if len(r) <= _REPORT_CHARS else r[:_REPORT_CHARS] + " [... cut]" for r in reports]
        shown = "\n\n".join(cut)
        said += f"\n\nThe reports of its background workers, as they came back:\n\n{shown}"
    return Handoff(
        doing=(
            f"The previous session stopped before it could write its handoff ({why}). "
            f"The task it was given:\n\n{task_text}"
        ),
        decided=f"Unknown: not written down. The session's last words:\n{said}",
        dead_ends="Unknown: not written down.",
        next=(
            "Look before acting: read the workbench's notes/ and artifacts/ and the state of the repository "
            "(git status, git log -5). Do not assume nothing was done. Then continue the task."
        ),
        where=f"The session's last tool calls:\n{recent}",
        degraded=True,
        reason=reason,
    )


def save_handoff(notes: Path, document: str, *, generation: int) -> Path:
    """Write `notes/handoff.md` (0600); an earlier one moves to `notes/archive/` first. Returns the path.

    Raises `WorkbenchError` when it cannot be written: something other than a regular file stands at
    `handoff.md`, `notes/` or `archive/` is a symlink, or the disk refuses (read-only, full).
    """
    current = notes / "handoff.md"
    try:
        notes.mkdir(mode=0o700, parents=True, exist_ok=True)
        safe_directory(notes, notes.parent)
        if current.is_symlink() or (current.exists() and not current.is_file()):
            raise NotRegularFileError(
                f"{current} exists and is not a regular file; refusing to write over it"
            )
        if current.exists():
            archive = safe_directory(notes / "archive", notes)
            stamp = time.strftime("%Y%m%d-%H%M%S")
            target = archive / f"handoff-{stamp}-gen{generation - 1}.md"
            counter = 1
            while os.path.lexists(target):
                counter += 1
                target = archive / f"handoff-{stamp}-gen{generation - 1}-{counter}.md"
            os.replace(current, target)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(current, flags, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as out:
            out.write(f"# Handoff to generation {generation}\n\n{document}\n")
    except OSError as exc:
        raise WorkbenchError(
            f"the handoff document {current} cannot be saved: {exc}", path=str(current)
        ) from exc
    return current
