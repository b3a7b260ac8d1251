"""Policies of layer 4 (what a load rewrites) and the report each load produces.

The policies are frozen, keyword-only dataclasses: build variants with `dataclasses.replace`. Every
model-facing text is a field, in English by default, so a caller can reword it. Texts are templates for
`str.format` with the named fields listed on each.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from .._errors import SpecError
from .._util.check import check_fields, checked

__all__ = [
    "CachePolicy",
    "Change",
    "ChangeKind",
    "EphemeralPolicy",
    "LoadReport",
    "PrunePolicy",
    "TrimPolicy",
]


# the policies' fields are typed by `check_fields` first; these check what a type cannot say


def _check_count(owner: str, name: str, value: int, *, minimum: int = 0) -> None:
    if value < minimum:
        raise SpecError(f"{owner}.{name} must be an int >= {minimum}, got {value!r}")


def _check_template(owner: str, name: str, value: str, **sample: object) -> None:
    if not value.strip():
        raise SpecError(f"{owner}.{name} must be a non-empty str")
    try:
        value.format(**sample)
    except (KeyError, IndexError, ValueError) as exc:
        names = ", ".join("{" + key + "}" for key in sample)
        raise SpecError(f"{owner}.{name} may only use the fields {names}: {exc!r}") from None


@dataclass(frozen=True, kw_only=True)
class EphemeralPolicy:
    """Expiry: results of ephemeral commands (`git status`, `ls`, `cat` ...) are replaced by a one-line note.

    Such a result goes stale as the work goes on, and re-running the command is cheaper than keeping an
    old answer that may mislead. The `keep_recent` most recent ones keep their body, unless the session
    was idle for `stale_after` seconds or more after them: then every one before the pause expires. Only
    `Bash` calls are considered; a command is ephemeral when `predicate(command)` holds.

    Example::

        EphemeralPolicy(keep_recent=4, predicate=lambda command: command.startswith("git status"))
    """

    keep_recent: int = 6
    """How many of the most recent ephemeral results keep their body."""
    batch: int = 1
    """Expire in steps of this many results: the window moves only once `k` more results have gathered,
    at the price of up to `k - 1` extra bodies kept. Moving the window changes an earlier entry, which
    breaks the prompt-cache prefix from there; with the default `CachePolicy` it only moves at a cold
    resume, where the cache is lost anyway, so the default is 1. It matters with `cache=None`."""
    predicate: Callable[[str], bool] | None = None
    """Decides whether a command is ephemeral; `None` means `flower.is_ephemeral` (the same table
    that lets the coordinator run the command itself)."""
    note: str = (
        "[result of `{command}` expired: at least {keep} newer results of ephemeral commands followed it; "
        "state may have changed; re-run it if needed]"
    )
    """The text that replaces an expired body. Fields: `{command}` (its first line, shortened), `{keep}`
    (`keep_recent`: at least that many newer ephemeral results exist) and `{newer}` (the exact count of
    newer ephemeral results). `{newer}` changes at every new result, so an already expired note would
    change at every resume that decides (with `cache=None`, every resume, breaking the prompt-cache
    prefix there); the default avoids it."""
    stale_after: float | None = 3600.0
    """A pause of this many seconds or more (between two entries' timestamps, or from the last entry to
    the load) expires every ephemeral result before it, the `keep_recent` newest included: after an idle
    hour the newest snapshot is as stale as the oldest. An hour is the longest prompt-cache lifetime, so
    the rewrite costs no extra cache miss: the prefix is cold by then anyway. `None` turns it off."""
    idle_note: str = (
        "[result of `{command}` expired: the session was idle for {idle} or more after it; "
        "state may have changed; re-run it if needed]"
    )
    """The note for a result expired by a pause. Fields: `{command}` and `{idle}` (`stale_after`, as
    "1 h" or "20 min": a constant, so the note stays the same from one load to the next)."""

    def __post_init__(self) -> None:
        check_fields(self)
        _check_count("EphemeralPolicy", "keep_recent", self.keep_recent)
        if self.stale_after is not None and not self.stale_after > 0:
            raise SpecError(
                f"EphemeralPolicy.stale_after must be None or a positive number of seconds, "
                f"got {self.stale_after!r}"
            )
        _check_template("EphemeralPolicy", "idle_note", self.idle_note, command="ls", idle="1 h")
        _check_count("EphemeralPolicy", "batch", self.batch, minimum=1)
        _check_template("EphemeralPolicy", "note", self.note, command="ls", keep=6, newer=7)

    @checked
    def is_ephemeral(self, command: str) -> bool:
        """Whether `command`'s result expires: `predicate`, or `flower.is_ephemeral` by default."""
        if self.predicate is not None:
            return bool(self.predicate(command))
        from .._glance._verdict import is_ephemeral  # late: the parser is only loaded when needed

        return is_ephemeral(command)

    @property
    def idle_text(self) -> str:
        """`stale_after` as the notes show it: "1 h", "90 min", "45 s" (empty when it is None)."""
        if self.stale_after is None:
            return ""
        seconds = float(self.stale_after)
        if seconds >= 3600 and seconds % 3600 == 0:
            return f"{seconds / 3600:g} h"
        if seconds >= 60 and seconds % 60 == 0:
            return f"{seconds / 60:g} min"
        return f"{seconds:g} s"


@dataclass(frozen=True, kw_only=True)
class TrimPolicy:
    """Trim: large tool results move to files the agent can Read; the history keeps a one-line pointer.

    Off by default: unlike expiry it removes results that may still matter, and reading one back costs
    a tool call. The `keep_recent` most recent large results keep their text.
    """

    keep_recent: int = 20
    """How many of the most recent large results (at least `min_chars`) keep their text."""
    min_chars: int = 2000
    """A result is large from this many characters of text on."""
    pointer: str = "[tool result trimmed: {chars} chars moved to {path}; Read that file if you need it]"
    """The text that replaces a trimmed body. Fields: `{chars}` (the body's length) and `{path}` (the
    absolute path of the file that holds it)."""

    def __post_init__(self) -> None:
        check_fields(self)
        _check_count("TrimPolicy", "keep_recent", self.keep_recent)
        _check_count("TrimPolicy", "min_chars", self.min_chars, minimum=1)
        _check_template("TrimPolicy", "pointer", self.pointer, chars=1, path="/x")


@dataclass(frozen=True, kw_only=True)
class PrunePolicy:
    """Pruning: denied calls, synthetic API errors, interruption residue and calls left without a result.

    Denials are recognised by the transcript's structural marker `toolDenialKind`, never by text. A
    denied call costs more than its message (measured: 273 chars, 180 of them the dead command) and a
    row of them teaches the agent that trying is useless; the most recent one is kept, since it is what
    stops a retry loop. Its result then names the calls dropped before it (`denial_note`), so what was
    refused is still known and not tried again, at a few dozen characters a call.
    """

    keep_denials: int = 1
    """How many of the most recent denied calls stay (call and result together)."""
    denial_kinds: tuple[str, ...] = ("permission-rule",)
    """The `toolDenialKind` values that mark a denial to prune. `permission-rule` is what a PreToolUse
    hook deny and a settings or `dontAsk` rule write; `user-rejected` is an interrupt or a refused
    permission prompt and is not pruned."""
    drop_api_errors: bool = True
    """Drop the synthetic assistant entries the CLI writes when API retries run out
    (`isApiErrorMessage: true`)."""
    neutralise_interrupts: bool = True
    """Replace the result left by an interrupted call (it tells the model to stop and wait for the user,
    which is stale once the session is resumed) by `interrupt_note`."""
    interrupt_note: str = (
        "[interrupted: this call was stopped while it ran and produced no result; it may have run in part. "
        "Check the state before running it again.]"
    )
    """The neutral text for an interrupted call's result (no fields)."""
    heal_orphans: bool = True
    """Give a call that has no result anywhere (the process died while it ran) a result saying so, so
    that every `tool_use` has its `tool_result`."""
    orphan_note: str = (
        "[no result: the session ended before this call finished; it may have run in part. "
        "Check the state before running it again.]"
    )
    """The text of the result given to a call left without one (no fields)."""
    supersede_reads: bool = True
    """Replace the result of a Read by `superseded_note` when a later Read of the whole file, or a later
    Write of it, is in the replayed history (`flower.stores._rewrite.supersede_reads`)."""
    superseded_note: str = (
        "[older read of {path} dropped on resume: a later {by} of this file in this conversation holds "
        "its newer content]"
    )
    """The text that replaces a superseded Read result. Fields: `{path}` and `{by}` ("Read" or "Write")."""
    denial_note: str | None = "[also refused earlier (not shown): {calls}]"
    """Appended to the result of the newest kept denial when older ones are dropped. Fields: `{calls}`
    (the dropped calls, oldest first and each once, as `rm -rf build` for Bash or `Write(src/a.py)`; at
    most 8, then "and N more") and `{count}`. None: nothing is appended."""

    def __post_init__(self) -> None:
        check_fields(self)
        _check_count("PrunePolicy", "keep_denials", self.keep_denials)
        if not all(self.denial_kinds):
            raise SpecError("PrunePolicy.denial_kinds must be a tuple of non-empty str")
        for name in ("interrupt_note", "orphan_note"):
            value = getattr(self, name)
            if not value.strip():
                raise SpecError(f"PrunePolicy.{name} must be a non-empty str")
        if self.denial_note is not None:
            _check_template("PrunePolicy", "denial_note", self.denial_note, calls="`ls`", count=1)
        _check_template("PrunePolicy", "superseded_note", self.superseded_note, path="/a.py", by="Read")


@dataclass(frozen=True, kw_only=True)
class CachePolicy:
    """When a load may decide new rewrites: only once the prompt cache has expired.

    A rewrite of an entry already sent makes every later request re-send the history from that entry
    on (cache write at 1.25x the input price instead of a read at 0.1x). Within the cache's lifetime
    after the last message, a load therefore repeats exactly what the last cold load decided and leaves
    later entries as the session's own requests sent them; once the lifetime has passed, the prefix is
    cold anyway and everything is decided anew. Measured on 18 real sessions: no warm resume re-sends
    more than a resume without flower would (docs/stores.md).
    """

    ttl: float | None = 300.0
    """The cache lifetime in seconds, used unless the CLI's replies say which one they asked for
    (`promptCacheRequested`: "5m" or "1h"). The CLI asks for 5 minutes by default. `None`: ignore the
    cache, decide every rewrite at every load (the window then moves at every resume)."""

    def __post_init__(self) -> None:
        check_fields(self)
        if self.ttl is not None and not self.ttl > 0:
            raise SpecError(f"CachePolicy.ttl must be None or a positive number of seconds, got {self.ttl!r}")


ChangeKind = Literal[
    "expired",
    "trimmed",
    "superseded",
    "denial",
    "denial_note",
    "api_error",
    "interrupt",
    "orphan",
    "relinked",
]
"""What a rewrite did: expired or trimmed a result, replaced a Read a later copy of its file superseded,
dropped a denied call (and named the dropped ones in the kept denial's result) or an API-error entry,
neutralised an interrupted result, gave an orphan call a result, joined an entry whose parent the store
lacks back to the chain (`flower.stores._rewrite.mend`)."""


@dataclass(frozen=True, kw_only=True)
class Change:
    """One thing a load rewrote."""

    kind: ChangeKind
    """What was done: `expired`, `trimmed`, `superseded`, `denial`, `denial_note`, `api_error`, `interrupt`,
    `orphan` or `relinked`."""
    uuid: str | None
    """The entry changed, dropped (`api_error`), added (`orphan`) or joined back (`relinked`)."""
    tool_use_id: str | None = None
    """The call concerned, for changes about a call."""
    chars_saved: int = 0
    """Characters of the replayed JSON (`message.content`) saved; negative when text was added; 0 for
    an API-error entry, which the CLI does not replay anyway. Counted against what the CLI sends without
    flower: an orphan's answer in the history's last message replaces the one the CLI would add itself
    (`flower.stores._rewrite.CLI_ORPHAN_NOTE`), so it saves their difference."""
    detail: str = ""
    """The command (`expired`), the file written (`trimmed`), the file read (`superseded`), the tool's
    name (`denial`), the note (`denial_note`), the size of an API-error entry, or, for an orphan's answer
    in place of the CLI's own, "instead of the CLI's own result (N chars)", or the missing parent
    and the new one (`relinked`)."""


@dataclass(frozen=True, kw_only=True)
class LoadReport:
    """What one `load()` of a rewriting store did to the history it returned.

    The SDK loads the main transcript first, then each subagent transcript (`subpath`); each load has its
    own report. `errors` lists the rewrites that failed and were skipped (the history is then returned
    without them, never broken).
    """

    project_key: str
    """The SDK's project key (derived from the working directory)."""
    session_id: str
    """The session loaded."""
    subpath: str | None
    """None for the main transcript; `subagents/agent-<id>` for a subagent's."""
    entries_in: int
    """Entries the inner store returned (the stored history, untouched)."""
    entries_out: int
    """Entries handed to the SDK after the rewrite."""
    changes: tuple[Change, ...] = ()
    """Every change to what the CLI replays, in history order: each entry returned changed, dropped or
    added names itself (`Change.uuid`) or the call it holds (`Change.tool_use_id`). Two things are left
    out. An entry whose only difference is a reference re-pointed over a dropped entry (`parentUuid`,
    `logicalParentUuid`, a `last-prompt`'s `leafUuid`): the change that dropped the entry names it.
    And the rewrites a warm load repeats on entries the CLI no longer replays: they are in
    `unreplayed`, apart, because they save nothing."""
    errors: tuple[str, ...] = ()
    """Rewrites that failed and were skipped, one message each."""
    warm: bool = False
    """The load came within the prompt cache's lifetime: it repeated the rewrites of the last cold load
    (in `changes` too) and decided none (`CachePolicy`)."""
    seconds: float = field(default=0.0, compare=False)
    """Time the rewrite took (not compared: two equal reports may differ in it)."""
    imported: int = 0
    """Entries imported from the CLI's local transcript before this load (main and subagents): the
    session predates the store, which now holds all of it. 0 otherwise."""
    unreplayed: tuple[Change, ...] = ()
    """The rewrites a warm load repeated on entries the CLI no longer replays, in history order: the
    last cold load decided them on its branch, and a compaction, a `/clear` or a rewind written since
    took those entries off what the CLI replays now. The returned history holds them (it is the one
    that load returned), the model never sees them, and they save nothing now (each `chars_saved` is
    what it saved then; `chars_saved` above leaves them out)."""

    @checked
    def of_kind(self, kind: ChangeKind) -> tuple[Change, ...]:
        """The changes of one kind, in history order."""
        return tuple(change for change in self.changes if change.kind == kind)

    @property
    def expired(self) -> tuple[Change, ...]:
        """Ephemeral results replaced by a note."""
        return self.of_kind("expired")

    @property
    def trimmed(self) -> tuple[Change, ...]:
        """Large results moved to files."""
        return self.of_kind("trimmed")

    @property
    def pruned(self) -> tuple[Change, ...]:
        """Denied calls and API-error entries dropped, interrupted results neutralised, orphans healed."""
        return tuple(c for c in self.changes if c.kind in ("denial", "api_error", "interrupt", "orphan"))

    @property
    def chars_saved(self) -> int:
        """Characters of replayed message content saved by all changes together."""
        return sum(change.chars_saved for change in self.changes)

    def summary(self) -> str:
        """One line for a log or a progress display."""
        counts = [(kind, len(self.of_kind(kind))) for kind in _KIND_ORDER]
        parts = [f"{count} {_KIND_WORDS[kind]}" for kind, count in counts if count]
        where = self.session_id + (f"/{self.subpath}" if self.subpath else "")
        done = ", ".join(parts) if parts else "nothing rewritten"
        failed = f"; {len(self.errors)} rewrite(s) failed and were skipped" if self.errors else ""
        imported = f"imported {self.imported} entries from the CLI's transcript; " if self.imported else ""
        apart = f"; {len(self.unreplayed)} on entries the CLI no longer replays" if self.unreplayed else ""
        warm = f" (cache warm: the last cold load's rewrites, repeated{apart})" if self.warm else ""
        return f"{where}: {imported}{done}; {self.chars_saved} chars saved{warm}{failed}"


_KIND_ORDER: tuple[ChangeKind, ...] = (
    "expired",
    "trimmed",
    "superseded",
    "denial",
    "api_error",
    "interrupt",
    "orphan",
    "relinked",
)
"""The kinds `summary()` counts (a `denial_note` goes with the denials it names)."""
_KIND_WORDS: dict[ChangeKind, str] = {
    "expired": "expired",
    "trimmed": "trimmed",
    "superseded": "superseded reads",
    "denial": "denials dropped",
    "api_error": "API errors dropped",
    "interrupt": "interrupts neutralised",
    "orphan": "orphans healed",
    "relinked": "missing links mended",
}
