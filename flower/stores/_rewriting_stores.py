"""`TrimmingSessionStore` and `PruningSessionStore`: layers over any `SessionStore` that rewrite `load()`.

The SDK calls `load()` when it resumes a session (and the store-reading helpers call it too); what it
returns is what the resumed model sees. These layers rewrite only that returned copy: `append()` and the
other methods pass straight through, and the inner store keeps every original entry untouched. So layer
4 acts on resume only; a session that keeps running is not affected.

- `TrimmingSessionStore`: expiry of ephemeral results, and trim of large results to files.
- `PruningSessionStore`: the whole layer: denied calls, API errors, interruption residue and orphan
  calls, plus expiry, plus trim when enabled. This is the store the Runtime always uses.

A session that predates the store (the CLI's local transcript exists, the inner store has no entry of
it) is imported into the inner store at its first load, subagents included, so the store holds the whole
session before the CLI replays it (`flower.stores._local`).

While a Runtime's run writes a session, it routes that session's appends elsewhere (`routes`: the
workspace's outbox, which delivers them to the inner store) and learns how many lines each load gives
the SDK to copy for a resume.

Each load produces a `LoadReport`: kept as `last_report` (for the main transcript) and passed to
`on_report`. A rewrite that fails is skipped and logged, never raised: the history is then returned with
the other rewrites only, or as stored. A load within the prompt cache's lifetime repeats what the last
cold load decided and decides nothing new (`CachePolicy`), so that it never breaks the cached prefix.

Example::

    store = PruningSessionStore("runs/sessions.db", trim=True, spill_dir="/abs/workspace/.flower/spill")
    options = ClaudeAgentOptions(session_store=store, resume=session_id)
"""

from __future__ import annotations

import logging
import os
import time
import types
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Self, cast

import anyio
from claude_agent_sdk import (
    SessionKey,
    SessionListSubkeysKey,
    SessionStore,
    SessionStoreEntry,
    SessionStoreListEntry,
    SessionSummaryEntry,
)

from .._errors import SpecError
from .._util.check import checked
from ._adopt import adopt_transcript, config_of, import_local
from ._carry import Carried
from ._local import config_dir as cli_config_dir
from ._local import implements
from ._open import open_store
from ._outbox import Route
from ._policies import CachePolicy, EphemeralPolicy, LoadReport, PrunePolicy, TrimPolicy
from ._postgres.store import PostgresSessionStore
from ._rewrite import Applied, Entry, Spill, apply_steps, rewrite_steps, write_spills
from ._rewrite.pipeline import RewriteStep
from ._sqlite.store import SqliteSessionStore

__all__ = ["PruningSessionStore", "TrimmingSessionStore"]

logger = logging.getLogger("flower.stores")

_OPTIONAL = ("list_sessions", "list_session_summaries", "delete", "list_subkeys")

ReportCallback = Callable[[LoadReport], object]


_DEFAULT_CACHE = CachePolicy()


def _policy(value: Any, kind: type[Any]) -> Any:
    """`True`: the default `kind`; `False` (or None): off; else the policy given (`@checked` saw its type)."""
    if value is True:
        return kind()
    if value is False or value is None:
        return None
    return value


class _RewritingStore(SessionStore):
    """A store that forwards everything to `inner` and rewrites what `load()` returns."""

    _variants: ClassVar[dict[tuple[type[Any], frozenset[str]], type[Any]]] = {}

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        # The SDK decides whether a store has an optional method by looking at its class. A layer has
        # exactly the optional methods of the store it wraps: for an inner store that lacks some, the
        # instance gets a subclass where those keep the Protocol's default (an "absent" marker).
        inner = args[0] if args else kwargs.get("inner")
        missing = (
            frozenset()
            if isinstance(inner, str | os.PathLike)
            else frozenset(name for name in _OPTIONAL if not implements(inner, name))
        )
        if not missing:
            return super().__new__(cls)
        variant = cls._variants.get((cls, missing))
        if variant is None:
            namespace: dict[str, Any] = {name: getattr(SessionStore, name) for name in missing}
            namespace.update(__module__=cls.__module__, __qualname__=cls.__qualname__, __doc__=cls.__doc__)
            variant = types.new_class(cls.__name__, (cls,), exec_body=lambda ns: ns.update(namespace))
            cls._variants[(cls, missing)] = variant
        return cast(Self, super().__new__(variant))

    def __init__(
        self,
        inner: SessionStore | str | os.PathLike[str],
        *,
        steps: list[tuple[str, RewriteStep]],
        spill_dir: str | None,
        on_report: ReportCallback | None,
        config_dir: str | os.PathLike[str] | None,
        cache: CachePolicy | None,
    ) -> None:
        # the layers' `__init__` are `@checked`: here only what a type cannot say
        if isinstance(inner, str | os.PathLike):
            if not os.fspath(inner):
                raise SpecError(
                    f"{type(self).__name__}: inner must be a SessionStore or a database path, got ''"
                )
            self._inner: SessionStore = open_store(inner)  # a postgresql:// DSN, else a SQLite path
            self._owns_inner = True
        else:
            self._inner = inner
            self._owns_inner = False
        self._steps = steps
        self._spill_dir = spill_dir
        self._on_report = on_report
        self.cache: CachePolicy | None = cache
        """When a load may decide new rewrites (`CachePolicy`); `None`: at every load."""
        self.clock: Callable[[], float] = time.time
        """The time of a load, in seconds since the epoch: whether the prompt cache is still warm, and
        expiry's pause before the load, are measured to it. Replace it to simulate the passage of time
        in a test or a benchmark."""
        self.last_report: LoadReport | None = None
        """The report of the latest `load()` of a main transcript (subagent loads go to `on_report` only)."""
        self.config_dir: str | os.PathLike[str] | None = config_dir
        """The CLI's config directory (its `CLAUDE_CONFIG_DIR`), where a session that predates this store
        is imported from at its first load; None: the environment's `CLAUDE_CONFIG_DIR`, else
        `~/.claude`. Set it when the CLI runs with another one (`options.env`)."""
        self._importing: dict[tuple[str, str], anyio.Event] = {}
        self.taps: list[Callable[[SessionKey, list[SessionStoreEntry]], None]] = []
        """Called with each `append()`'s key and entries, before the inner store keeps them (tracing reads
        a run this way, `flower.tracing`); a tap that raises is logged, the append goes on."""
        self.routes: dict[str, Route] = {}
        """session id -> where its appends go while a run writes it; other sessions' go to `inner`."""
        self._unfound: dict[str, SessionKey] = {}  # resumed, found nowhere: the CLI names its file later
        self._carried = Carried()  # what loads added, stored with the next append (`_carry`)

    @property
    def inner(self) -> SessionStore:
        """The store that holds the original entries: the stored history, never rewritten.

        Give it, not the layer, to the SDK's session helpers (`list_sessions_from_store`,
        `get_session_messages_from_store`, `fork_session_via_store`...): they read through `load()`, which
        on a layer returns what a resume replays (a load cannot tell a resume from a listing), and a fork
        through the layer would store that rewritten history as the fork's own.
        """
        return self._inner

    @property
    def spill_dir(self) -> str | None:
        """Where trimmed bodies are written (absolute), or `None` when trim is off."""
        return self._spill_dir

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._inner!r})"

    # -- the rewrite ----------------------------------------------------------------------------------

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """The inner store's entries for `key`, rewritten (the stored ones are not modified).

        A main transcript the inner store lacks is first imported from the CLI's local files, if any.
        """
        entries = await self._inner.load(key)
        imported: int | None = None
        if not entries and not key.get("subpath"):
            imported = await self._import_local(key)
            if imported is not None:
                entries = await self._inner.load(key)
        if entries is None:
            if not key.get("subpath"):
                self._unfound[str(key.get("session_id", ""))] = key
            return None
        applied = await anyio.to_thread.run_sync(self._rewrite, cast(list[Entry], entries))
        stored = self._carried.loaded(key, entries, applied.entries)
        report = LoadReport(
            project_key=str(key.get("project_key", "")),
            session_id=str(key.get("session_id", "")),
            subpath=key.get("subpath") or None,
            entries_in=len(entries),
            entries_out=len(applied.entries),
            changes=applied.changes,
            errors=applied.errors,
            warm=applied.warm,
            seconds=applied.seconds,
            imported=imported or 0,
            unreplayed=applied.unreplayed,
        )
        if report.subpath is None:
            self.last_report = report
        route = self.routes.get(report.session_id)
        if route is not None:  # a resume writes what load returns, less a subagent's metadata entries
            subpath = report.subpath or ""
            route.loaded(
                subpath,
                sum(1 for e in applied.entries if not (subpath and e.get("type") == "agent_metadata")),
                stored,
            )
        if report.changes or report.errors or report.imported:
            logger.info("flower.stores: %s", report.summary())
        if self._on_report is not None:
            try:
                self._on_report(report)
            except Exception:
                logger.exception("flower.stores: the on_report callback failed; the load goes on")
        return cast(list[SessionStoreEntry], applied.entries)

    async def _import_local(self, key: SessionKey) -> int | None:
        """Import the session's local transcript into the inner store when it has none: the entries
        imported, 0 when a concurrent load imported it, None when there was nothing to import.

        One import per session at a time: a concurrent load of the same session waits for it. A failed
        import is undone (when the inner store can `delete`) and raises `StoreError`: a resume of half a
        session would lose the rest for good.
        """
        slot = (str(key.get("project_key", "")), str(key.get("session_id", "")))
        running = self._importing.get(slot)
        if running is not None:
            await running.wait()
            return 0
        done = self._importing[slot] = anyio.Event()
        try:
            return await import_local(self._inner, key, cli_config_dir(self.config_dir))
        finally:
            del self._importing[slot]
            done.set()

    async def _adopt(self, session_id: str, transcript_path: str, prompt: str | None) -> int:
        """The CLI resumed `session_id` from `transcript_path` (a hook's input) after a load found it
        nowhere: import its earlier turns now, before the mirror stores the new ones (`stores._adopt`), and
        look in that config directory from now on. The entries imported (0: nothing to do)."""
        key = self._unfound.pop(session_id, None)
        if key is None or not transcript_path:
            return 0
        if self.config_dir is None:
            self.config_dir = config_of(transcript_path)
        return await adopt_transcript(self._inner, key, transcript_path, prompt)

    def _rewrite(self, entries: list[Entry]) -> Applied:
        return apply_steps(entries, self._steps, write=self._write, now=self.clock(), cache=self.cache)

    def _write(self, spills: Sequence[Spill]) -> None:
        if self._spill_dir is None:
            raise SpecError("no spill directory to write trimmed bodies to")
        write_spills(self._spill_dir, spills)

    # -- pass-through ---------------------------------------------------------------------------------

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        """Forwarded unchanged (through the route of a session a run writes): the inner store keeps every
        original entry (the `taps` see them first), after the entries the last load of the transcript
        added and the resumed CLI chains to (`flower.stores._carry`)."""
        entries = self._carried.take(key, entries)  # what the last load added goes first
        for tap in tuple(self.taps):
            try:
                tap(key, entries)
            except Exception:
                logger.exception("flower.stores: a tap failed on an append; the append goes on")
        route = self.routes.get(key.get("session_id", "")) if isinstance(key, dict) else None
        if route is not None:
            await route.append(key, entries)
        else:
            await self._inner.append(key, entries)

    async def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """Forwarded to the inner store."""
        return await self._inner.list_sessions(project_key)

    async def list_session_summaries(self, project_key: str) -> list[SessionSummaryEntry]:
        """Forwarded to the inner store (summaries describe the stored history)."""
        return await self._inner.list_session_summaries(project_key)

    async def delete(self, key: SessionKey) -> None:
        """Forwarded to the inner store."""
        await self._inner.delete(key)

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        """Forwarded to the inner store."""
        return await self._inner.list_subkeys(key)

    async def aclose(self) -> None:
        """Close the inner store when this layer opened it from a path."""
        if self._owns_inner and isinstance(self._inner, SqliteSessionStore | PostgresSessionStore):
            await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: types.TracebackType | None
    ) -> None:
        with anyio.CancelScope(shield=True):
            await self.aclose()


def _spill_dir(trim: TrimPolicy | None, spill_dir: str | os.PathLike[str] | None) -> str | None:
    if spill_dir is not None and not os.fspath(spill_dir):
        raise SpecError(
            "spill_dir must be a directory path or None, got '' (it would be the current directory)"
        )
    if trim is None:
        return None if spill_dir is None else os.path.abspath(os.fspath(spill_dir))
    if spill_dir is None:
        raise SpecError(
            "trim needs spill_dir: the directory (inside the workspace) the agent Reads bodies from"
        )
    return os.path.abspath(os.fspath(spill_dir))


class TrimmingSessionStore(_RewritingStore):
    """Expiry and trim on `load()`, over any `SessionStore` (or a SQLite path, or a DSN).

    `ephemeral` and `trim` take a policy, `True` (the default policy) or `False` (off). Trim writes the
    bodies under `spill_dir`, which must be a directory the agent can Read (the workbench's `spill/`).
    `config_dir` is the CLI's config directory a session that predates the store is imported from
    (default: the environment's `CLAUDE_CONFIG_DIR`, else `~/.claude`).
    `cache` keeps a load within the prompt cache's lifetime from deciding new rewrites (`CachePolicy`;
    `None`: decide at every load).
    """

    @checked
    def __init__(
        self,
        inner: SessionStore | str | os.PathLike[str],
        *,
        ephemeral: EphemeralPolicy | bool = True,
        trim: TrimPolicy | bool = True,
        spill_dir: str | os.PathLike[str] | None = None,
        on_report: ReportCallback | None = None,
        config_dir: str | os.PathLike[str] | None = None,
        cache: CachePolicy | None = _DEFAULT_CACHE,
    ) -> None:
        ephemeral_policy = _policy(ephemeral, EphemeralPolicy)
        trim_policy = _policy(trim, TrimPolicy)
        directory = _spill_dir(trim_policy, spill_dir)
        steps = rewrite_steps(ephemeral=ephemeral_policy, trim=trim_policy, spill_dir=directory)
        super().__init__(
            inner, steps=steps, spill_dir=directory, on_report=on_report, cache=cache, config_dir=config_dir
        )
        self.ephemeral: EphemeralPolicy | None = ephemeral_policy
        """The expiry policy, or `None` when expiry is off."""
        self.trim: TrimPolicy | None = trim_policy
        """The trim policy, or `None` when trim is off."""


class PruningSessionStore(_RewritingStore):
    """The whole of layer 4 on `load()`, over any `SessionStore` (or a SQLite path, or a DSN).

    Denied calls beyond `prune.keep_denials`, synthetic API errors, interruption residue and orphan calls
    are always handled (`prune`, default `PrunePolicy()`); expiry is on and trim off by default, as in the
    Runtime (`ephemeral=True`, `trim=False`). `config_dir` and `cache`: as in `TrimmingSessionStore`.
    """

    @checked
    def __init__(
        self,
        inner: SessionStore | str | os.PathLike[str],
        *,
        prune: PrunePolicy | None = None,
        ephemeral: EphemeralPolicy | bool = True,
        trim: TrimPolicy | bool = False,
        spill_dir: str | os.PathLike[str] | None = None,
        on_report: ReportCallback | None = None,
        config_dir: str | os.PathLike[str] | None = None,
        cache: CachePolicy | None = _DEFAULT_CACHE,
    ) -> None:
        prune_policy = prune if prune is not None else PrunePolicy()
        ephemeral_policy = _policy(ephemeral, EphemeralPolicy)
        trim_policy = _policy(trim, TrimPolicy)
        directory = _spill_dir(trim_policy, spill_dir)
        steps = rewrite_steps(
            prune=prune_policy, ephemeral=ephemeral_policy, trim=trim_policy, spill_dir=directory
        )
        super().__init__(
            inner, steps=steps, spill_dir=directory, on_report=on_report, cache=cache, config_dir=config_dir
        )
        self.prune: PrunePolicy = prune_policy
        """The pruning policy."""
        self.ephemeral: EphemeralPolicy | None = ephemeral_policy
        """The expiry policy, or `None` when expiry is off."""
        self.trim: TrimPolicy | None = trim_policy
        """The trim policy, or `None` when trim is off."""
