"""Where the history was loaded, and whether the prompt cache was warm then: the rewrite point.

Any rewrite of an entry already sent breaks the prompt-cache prefix from that entry on. The cache lives
a few minutes after the last request (`CachePolicy`), so a rewrite decided at a *cold* load costs no
extra miss, and one decided at a *warm* load re-sends everything after it. Hence the rule the stores
follow: a load is cold when the cache's lifetime has passed since the history's last message, and then
everything is decided anew; a warm load repeats exactly what the last cold load decided, over the
history as it was then, and leaves every later entry as the session's own requests sent it. The last
cold load is found in the history itself (`rewrite_point`), so no state is kept anywhere.

Where a load happened: a resumed process starts with a prompt. The CLI's own evidence decides where it
exists. When a SessionStart hook is set, the CLI writes a hook entry for it at every start (a `progress`
entry, or an `attachment` in later CLIs), named for its source: `SessionStart:resume` before the first
prompt of a resumed process, `SessionStart:startup` for a new one, `:clear` and `:compact` within a
process. Without a hook, CLI 2.1.327 and later (`MARKS_SINCE`) mark a process started with `--resume`
(the SDK's `resume=`): at its exit it re-appends the session's metadata lines with a `mode` entry among
them, then a `cost-state` entry, which every process writes as it exits (a fresh or `--continue`d
process's block has no `mode`; measured with CLI 2.1.337, through `query()` and `ClaudeSDKClient`). So a
`mode` entry marks the first prompt after the last `cost-state` or `mode` entry before it (or after the
last change of the CLI version the prompts carry: a process has one version): the prompt the resumed
process started with. A `mode` entry ends a process too: the SDK's mirror into a store may lose the
`cost-state` the CLI writes after it (the price: the CLI also re-appends the lines as the file grows,
and such a line inside a process that took several prompts marks the next one as well). A
history without any `cost-state` (the SDK's mirror into a session store keeps none) cannot tell where
a process began: there a `mode` entry marks the prompt before it (a `query()` process, as flower's
runs, sends one prompt). A
`--continue` goes unmarked, the safe side. A `mode` entry of an older CLI marks nothing: CLIs
2.1.1xx-2.1.2xx write them at a session's start and beside ordinary prompts of sessions nobody resumed.

So a history with any SessionStart hook entry, or any mark, is one whose resumes the CLI marked: there,
only marked prompts were loads, and an unmarked prompt after any idle time was the same process going on.
Without any, a prompt written by a CLI that marks every `--resume` (`MARKS_SINCE` and later) was no load
either; one written by an older CLI could have been, unless it is one of the CLI's own command lines
(`is_command`: a slash command, a `!` shell line or their output), which nobody resumes a session with.

The cache's lifetime is the one the CLI asked for on its replies (`promptCacheRequested`), else the one
their usage shows it wrote (`cache_creation.ephemeral_1h_input_tokens`: one hour; CLI 2.1.42 and
earlier recorded no `promptCacheRequested`, and sessions on a subscription used the 1-hour cache), else
`CachePolicy.ttl`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._policies import CachePolicy
from ._transcript import Entry
from .expire import entry_time

__all__ = [
    "MARKS_SINCE",
    "LoadPoint",
    "is_command",
    "is_prompt",
    "load_points",
    "resumes",
    "rewrite_point",
    "session_start",
]

_INTERRUPTED = "[Request interrupted by user"
_MESSAGES = ("user", "assistant")
_LIFETIMES = {"5m": 300.0, "1h": 3600.0}
"""`promptCacheRequested` on the CLI's assistant entries -> seconds (measured: "5m" by default)."""
_COMMAND = re.compile(
    r"\s*(?:<(command-name|command-message|command-args|local-command-stdout|local-command-stderr"
    r"|bash-input|bash-stdout|bash-stderr)>.*?</\1>\s*)+",
    re.DOTALL,
)
"""The CLI's own lines: a slash command (`<command-name>`, `<command-message>`, `<command-args>`), a
local command's output, a `!` shell line and its output; the text is made of these elements only."""
MARKS_SINCE = (2, 1, 327)
"""The first CLI version measured to mark a process started with `--resume` (a `mode` entry in the
metadata it re-appends at its exit); older CLIs' `mode` entries mark nothing."""


def is_prompt(entry: Entry) -> bool:
    """A prompt: a main-thread user entry holding text, not a tool result.

    Compaction summaries, meta entries, the CLI's own messages (`promptSource: "system"`, e.g. a
    background task's notification) and its "[Request interrupted by user]" marker are not prompts.
    """
    if entry.get("type") != "user" or entry.get("isSidechain") is True:
        return False
    if entry.get("isMeta") is True or entry.get("isCompactSummary") is True or "toolUseResult" in entry:
        return False
    if entry.get("promptSource") == "system":
        return False
    message = entry.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, list) and content:
        if any(isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content):
            return False
        content = "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, Mapping) and b.get("type") == "text"
        )
    return isinstance(content, str) and not content.startswith(_INTERRUPTED)


def is_command(entry: Entry) -> bool:
    """A prompt the CLI wrote for a slash command or a `!` shell line, or for their output: its text
    (a str, or the first text block) is made only of the CLI's own command elements."""
    message = entry.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, list):
        first = next((b for b in content if isinstance(b, Mapping) and b.get("type") == "text"), None)
        content = first.get("text") if first is not None else None
    return isinstance(content, str) and _COMMAND.fullmatch(content) is not None


def _marks_resumes(entry: Entry) -> bool:
    """The entry was written by a CLI that marks every resumed process (`MARKS_SINCE` or later)."""
    version = entry.get("version")
    if not isinstance(version, str):
        return False
    parts = re.match(r"(\d+)\.(\d+)\.(\d+)", version)
    return parts is not None and tuple(int(p) for p in parts.groups()) >= MARKS_SINCE


def _request(entry: Entry) -> bool:
    """A user or assistant entry that stands for a request: not one the CLI wrote itself (`<synthetic>`:
    an API error, or the "No response requested." a resumed CLI adds at load)."""
    if entry.get("type") not in _MESSAGES or entry.get("isApiErrorMessage") is True:
        return False
    message = entry.get("message")
    return not (isinstance(message, Mapping) and message.get("model") == "<synthetic>")


def session_start(entry: Entry) -> str | None:
    """The source of the SessionStart hook an entry records (`"startup"`, `"resume"`, `"clear"`,
    `"compact"`), or None for any other entry.

    The CLI records each hook it runs: as a `progress` entry whose `data` names it (`hook_progress`), or
    as an `attachment` (`hook_success`, `hook_non_blocking_error` ...), with `hookEvent: "SessionStart"`
    and `hookName: "SessionStart:<source>"`.
    """
    kind = entry.get("type")
    record = (
        entry.get("data") if kind == "progress" else entry.get("attachment") if kind == "attachment" else None
    )
    if not isinstance(record, Mapping) or entry.get("isSidechain") is True:
        return None
    name = record.get("hookName")
    if not isinstance(name, str) or not name.startswith("SessionStart:"):
        return None
    event = record.get("hookEvent")
    return name.partition(":")[2] if event in (None, "SessionStart") else None


@dataclass(frozen=True)
class LoadPoint:
    """A prompt where a process may have loaded the history, with the cache's state then."""

    index: int
    """The prompt's index: the load saw the entries before it."""
    time: float | None
    """When the load happened: the timestamp of the queue operation the CLI writes before the prompt,
    else of the prompt (a few milliseconds after the load)."""
    idle: float | None
    """Seconds from the history's last message to the load (None when either time is unknown)."""
    lifetime: float | None
    """The cache lifetime that applied to the last request before it."""
    marked: bool
    """The CLI marked this prompt as the start of a resumed process."""
    command: bool = False
    """A slash command, a `!` shell line or their output (`is_command`), not a typed prompt."""
    marking: bool = False
    """The CLI would have marked this prompt had a resumed process started with it: it was written by a
    CLI that marks every resumed process (`MARKS_SINCE`), or the history holds a SessionStart hook entry
    (`session_start`: the hook was set, and a resumed process writes `SessionStart:resume`). Unmarked,
    it was no load."""

    @property
    def cold(self) -> bool:
        """The cache had expired: a rewrite decided here cost no extra miss."""
        return self.idle is not None and self.lifetime is not None and self.idle >= self.lifetime


def _told(entry: Entry) -> float | None:
    """The cache lifetime an assistant entry tells: the one the CLI asked for, else the one its usage
    shows written (1 hour when any 1-hour write, 5 minutes when only 5-minute ones), else None."""
    requested = entry.get("promptCacheRequested")
    if isinstance(requested, str) and requested in _LIFETIMES:
        return _LIFETIMES[requested]
    message = entry.get("message")
    usage = message.get("usage") if isinstance(message, Mapping) else None
    written = usage.get("cache_creation") if isinstance(usage, Mapping) else None
    if not isinstance(written, Mapping):
        return None
    if _positive(written.get("ephemeral_1h_input_tokens")):
        return _LIFETIMES["1h"]  # the longer when both: a load judged warm only saves less
    if _positive(written.get("ephemeral_5m_input_tokens")):
        return _LIFETIMES["5m"]
    return None


def _positive(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def load_points(entries: Sequence[Any], cache: CachePolicy | None = None) -> list[LoadPoint]:
    """Every prompt that follows a message, with the time, idle time and marks of its possible load.

    The load time is the prompt's timestamp, or that of the queue operations the CLI writes just before
    it (a few milliseconds after the load); the idle time runs from the last user or assistant entry
    before it, i.e. from about the last request (entries the CLI writes at the end of a turn, hook
    progress or stop summaries, and its own `<synthetic>` replies are not requests).
    """
    cache = cache if cache is not None else CachePolicy()
    hooks = any(isinstance(e, dict) and session_start(e) is not None for e in entries)
    exits = any(isinstance(e, dict) and e.get("type") == "cost-state" for e in entries)
    points: list[LoadPoint] = []
    last_message: Entry | None = None
    lifetime: float | None = None  # the last one a reply told
    queued: float | None = None  # the earliest queue operation since the last message
    hooked = False  # a SessionStart:resume hook ran since the last prompt
    started = True  # a process starts with the next prompt (the session's start, or after a cost-state)
    first: int | None = None  # the point of the prompt the current process started with, if any
    version: object = None  # the CLI version of the last prompt: another one is another process
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue
        kind = entry.get("type")
        if kind == "cost-state":  # a process exited
            started, first = True, None
        elif kind == "mode":
            at = first if exits else len(points) - 1
            if at is not None and at >= 0 and _marks_resumes(entries[points[at].index]):
                points[at] = dataclasses.replace(points[at], marked=True)
            if exits:  # the exit block of a resumed process, even where its cost-state never reached the
                started, first = True, None  # store (the SDK's mirror races the CLI's exit lines)
        elif kind == "queue-operation" and queued is None:
            queued = entry_time(entry)
        hooked = hooked or session_start(entry) == "resume"
        if is_prompt(entry):
            started = started or entry.get("version") != version
            version = entry.get("version")
            if last_message is not None:
                stamps = [t for t in (queued, entry_time(entry)) if t is not None]
                when = min(stamps) if stamps else None
                before = entry_time(last_message)
                idle = when - before if when is not None and before is not None else None
                points.append(
                    LoadPoint(
                        index,
                        when,
                        idle,
                        lifetime if lifetime is not None else cache.ttl,
                        hooked,
                        command=is_command(entry),
                        marking=hooks or _marks_resumes(entry),
                    )
                )
            if started:
                first = len(points) - 1 if last_message is not None else None
            started, hooked = False, False
        if _request(entry):
            last_message, queued = entry, None
            if kind == "assistant":
                lifetime = _told(entry) or lifetime
    return points


def resumes(entries: Sequence[Any], cache: CachePolicy | None = None) -> list[LoadPoint]:
    """The prompts the CLI marked as starting a resumed process (none when it marked none)."""
    return [point for point in load_points(entries, cache) if point.marked]


def rewrite_point(
    entries: Sequence[Any], now: float | None, cache: CachePolicy | None
) -> tuple[int, float | None, bool]:
    """`(point, its time, warm)`: rewrite `entries[:point]` as decided at the time given, keep the rest.

    A load with no `cache`, no `now`, or no timestamped message, or one the cache's lifetime after the
    last message, is cold: `(len(entries), now, False)`. A warm load goes back to the last cold load:
    the last marked prompt the lifetime or more after the message before it. When the CLI marked none,
    the last such prompt it could have left unmarked as a load (`LoadPoint.marking` false: written by a
    CLI older than `MARKS_SINCE`, in a history without any SessionStart hook entry) that is not a
    command line (`is_command`). `(0, None, True)` when there was none (nothing was ever rewritten, so
    a warm load rewrites nothing either).
    """
    if cache is None or cache.ttl is None or now is None:
        return len(entries), now, False
    last: Entry | None = None
    told: float | None = None
    for entry in reversed(entries):
        if isinstance(entry, dict) and _request(entry) and entry_time(entry) is not None:
            last = last or entry
            if entry.get("type") == "assistant" and (told := _told(entry)) is not None:
                break
    moment = entry_time(last) if last is not None else None
    lifetime = told if told is not None else cache.ttl
    if moment is None or lifetime is None or now - moment >= lifetime:
        return len(entries), now, False
    points = load_points(entries, cache)
    if any(point.marked for point in points):
        points = [point for point in points if point.marked]
    else:  # a live process went on: a command after a pause, or any prompt the CLI would have marked
        points = [point for point in points if not point.command and not point.marking]
    for point in reversed(points):
        if point.cold:
            return point.index, point.time, True
    return 0, None, True
